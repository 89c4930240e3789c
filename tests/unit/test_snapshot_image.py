"""sitebuild.startup.snapshot_image: the snapshot's file leaves out the pages the page's memory already holds, and
the page's applyImage (static/js/worker/snapshot.js) puts back exactly what the build's decode does.

The wasm side is checked against the real engine: a small module's memory as Node instantiates it is the
memory initial_memory reads from its bytes."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from sitebuild.startup import snapshot_image as image

ROOT = Path(__file__).resolve().parents[2]
PAGE = image.PAGE
HEADER = bytes(range(48))  # stands for Pyodide's header (a multiple of 16, as makeMemorySnapshot's is)


def memory_pair() -> tuple[bytes, bytes]:
    """(memory, base) of 6 pages: zero, as in base, changed, one changed byte, zero where base is not, new."""
    base = bytearray(6 * PAGE)
    base[PAGE:2 * PAGE] = b"b" * PAGE
    base[2 * PAGE:3 * PAGE] = b"c" * PAGE
    base[3 * PAGE:4 * PAGE] = b"d" * PAGE
    base[4 * PAGE:5 * PAGE] = b"e" * PAGE
    memory = bytearray(base)
    memory[2 * PAGE:3 * PAGE] = b"C" * PAGE
    memory[3 * PAGE + 17] = 0
    memory[4 * PAGE:5 * PAGE] = bytes(PAGE)
    memory[5 * PAGE:6 * PAGE] = b"f" * PAGE
    return bytes(memory), bytes(base)


def kinds_of(data: bytes, count: int) -> list[int]:
    return list(data[24:24 + count])


def test_pages_are_left_out_when_zero_or_as_the_module_initialised_them_and_decode_back():
    memory, base = memory_pair()
    data, base_sha256 = image.encode(HEADER + memory, len(HEADER), base)
    assert kinds_of(data, 6) == [image.ZERO, image.BASE, image.FILE, image.FILE, image.ZERO, image.FILE]
    assert base_sha256 == hashlib.sha256(base[PAGE:2 * PAGE]).hexdigest()
    assert len(data) == 24 + 16 + len(HEADER) + 3 * PAGE  # the kinds padded to 16, then three pages
    assert image.decode(data, base) == HEADER + memory


def test_decode_refuses_what_is_not_such_a_file_or_does_not_fit_the_base():
    memory, base = memory_pair()
    data, _ = image.encode(HEADER + memory, len(HEADER), base)
    with pytest.raises(image.ImageError, match="magic"):
        image.decode(b"PYSNAPD0" + data[8:], base)
    with pytest.raises(image.ImageError, match="against a base"):
        image.decode(data, base + bytes(PAGE))
    with pytest.raises(image.ImageError, match="after the last page"):
        image.decode(data[:-1], base)  # a truncated page
    with pytest.raises(image.ImageError, match="after the last page"):
        image.decode(data + b"\0", base)
    with pytest.raises(image.ImageError, match="unknown kind"):
        image.decode(data[:24] + b"\x07" + data[25:], base)
    with pytest.raises(image.ImageError, match="whole, equal pages"):
        image.encode(HEADER + memory[:-1], len(HEADER), base[:-1])


def uleb(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def section(kind: int, body: bytes) -> bytes:
    return bytes([kind]) + uleb(len(body)) + body


def vector(items: list[bytes]) -> bytes:
    return uleb(len(items)) + b"".join(items)


def name(text: str) -> bytes:
    return uleb(len(text)) + text.encode()


def data_module() -> bytes:
    """A module importing its memory and the memory base (as Emscripten's main module does), with an active
    segment at a constant offset (past 127: a two-byte operand), one at the memory base, one passive."""
    imports = vector([
        name("env") + name("__memory_base") + bytes([0x03, 0x7F, 0x00]),  # global i32, immutable
        name("env") + name("memory") + bytes([0x02, 0x00, 0x01]),  # memory, min 1 page
    ])
    segments = vector([
        b"\x00" + b"\x41" + bytes([0xC8, 0x01]) + b"\x0b" + vector([b"a", b"b", b"c"]),  # i32.const 200
        b"\x00" + b"\x23\x00\x0b" + vector([bytes([x]) for x in b"at the base"]),  # global.get 0
        b"\x01" + vector([bytes([x]) for x in b"passive"]),
    ])
    return b"\0asm\x01\0\0\0" + section(2, imports) + section(11, segments)


def run_node(script: str, *args: str) -> subprocess.CompletedProcess:
    node = shutil.which("node")
    assert node, "Node 20 is needed (./setup.sh installs it)"
    return subprocess.run([node, "--input-type=module", "-e", script, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_the_initial_memory_is_what_the_engine_makes_of_the_module(tmp_path):
    wasm = tmp_path / "data.wasm"
    wasm.write_bytes(data_module())
    out = tmp_path / "memory.bin"
    done = run_node(f"""
import {{ readFileSync, writeFileSync }} from "node:fs";
const memory = new WebAssembly.Memory({{ initial: 1 }});
const base = new WebAssembly.Global({{ value: "i32", mutable: false }}, {image.MEMORY_BASE});
await WebAssembly.instantiate(readFileSync(process.argv[1]), {{ env: {{ memory, __memory_base: base }} }});
writeFileSync(process.argv[2], new Uint8Array(memory.buffer));
""", str(wasm), str(out))
    assert done.returncode == 0, done.stderr
    engine = out.read_bytes()
    assert image.initial_memory(wasm.read_bytes(), len(engine)) == engine
    assert engine[200:203] == b"abc" and engine[image.MEMORY_BASE:image.MEMORY_BASE + 11] == b"at the base"


def test_a_data_segment_placed_some_other_way_is_refused():
    odd = data_module().replace(b"\x23\x00\x0b", b"\x23\x01\x0b")  # global.get of another global
    with pytest.raises(image.ImageError, match="offset"):
        image.initial_memory(odd, 65536)
    with pytest.raises(image.ImageError, match="not a wasm"):
        image.initial_memory(b"\0asm\x02\0\0\0", 65536)


def test_a_data_segment_past_the_memory_or_the_module_says_so():
    with pytest.raises(image.ImageError, match="3 bytes at 200 ends past the memory's 202 bytes"):
        image.initial_memory(data_module(), 202)
    module = data_module()
    cut = module[:module.index(b"at the base") + 5]  # the second segment's bytes cut short
    with pytest.raises(image.ImageError, match="11 bytes runs past the end of the module"):
        image.initial_memory(cut, 65536)


APPLY = """
import { readFileSync, writeFileSync } from "node:fs";
import { applyImage } from "./static/js/worker/snapshot.js";
const [memoryFile, dataFile, sha, out] = process.argv.slice(1);
const heap = new Uint8Array(readFileSync(memoryFile));
try {
  const header = await applyImage(heap, new Uint8Array(readFileSync(dataFile)), sha);
  writeFileSync(out, Buffer.concat([header, heap]));
} catch (err) {
  console.log(JSON.stringify({ error: err.message }));
}
"""


def apply_in_node(tmp_path: Path, heap: bytes, data: bytes, sha: str) -> bytes | str:
    """What the page's applyImage leaves (header + memory), or its error message."""
    (tmp_path / "heap").write_bytes(heap)
    (tmp_path / "data").write_bytes(data)
    done = run_node(APPLY, str(tmp_path / "heap"), str(tmp_path / "data"), sha, str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["error"] if done.stdout.strip() else (tmp_path / "out").read_bytes()


def test_the_pages_apply_image_restores_what_decode_does(tmp_path):
    memory, base = memory_pair()
    data, base_sha256 = image.encode(HEADER + memory, len(HEADER), base)
    # The page's memory holds the base where it counts, and anything (left by start-up) elsewhere.
    heap = bytearray(base)
    heap[0:PAGE] = b"x" * PAGE
    heap[2 * PAGE:3 * PAGE] = b"y" * PAGE
    heap[4 * PAGE + 9] = 1
    assert apply_in_node(tmp_path, bytes(heap), data, base_sha256) == image.decode(data, base)


def test_apply_image_refuses_a_memory_whose_kept_pages_differ_from_the_builds(tmp_path):
    memory, base = memory_pair()
    data, base_sha256 = image.encode(HEADER + memory, len(HEADER), base)
    heap = bytearray(base)
    heap[PAGE + 5] ^= 1  # start-up wrote into a page the image keeps as the module made it
    assert apply_in_node(tmp_path, bytes(heap), data, base_sha256) == "snapshot: the memory it builds on differs from the build's"
    assert "not an image" in apply_in_node(tmp_path, base, HEADER + memory, base_sha256)  # Pyodide's own format
