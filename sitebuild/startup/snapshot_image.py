"""The snapshot's file: Pyodide's memory image without the pages the page's memory already holds.

When the page's worker copies the image in (static/js/worker/snapshot.js, ``applyImage``), Pyodide's module has
just been instantiated, so its memory holds the module's own data segments (``initial_memory``): about
eight hundred 4 KiB pages of the image are byte for byte what the module put there (read-only data,
tables nobody wrote to), and a few thousand are zero. The file leaves both out:

    magic  b"PYSNAPD1"
    u32    page size (PAGE), u32 memory bytes, u32 Pyodide's header bytes, u32 pages   (little-endian)
    u8     kind of each page: ZERO, BASE (as the module initialised it) or FILE (its bytes follow),
           padded to a multiple of 16
    Pyodide's own snapshot header (makeMemorySnapshot's: magic, build id, its JSON), as it made it
    the FILE pages' bytes, in page order

A BASE page is one the image has exactly as the module initialised it. Before trusting the page's memory
there, applyImage compares the sha256 of those pages with the build's (``encode`` returns it): start-up
code that wrote into one of them in some browser makes the page boot Python the normal way instead.
"""

from __future__ import annotations

import hashlib
import struct

MAGIC = b"PYSNAPD1"
PAGE = 4096  # the unit; 64 KiB pages left out 3x fewer bytes (a few changed words spoil a whole page)
ZERO, BASE, FILE = 0, 1, 2
_FIELDS = struct.Struct("<4I")


class ImageError(ValueError):
    """A file that is not an image of this format, or one that does not fit the memory given."""


def _pad16(n: int) -> int:
    return -n % 16


# Emscripten places the main module's data at its memory base, GLOBAL_BASE (pyodide.asm.js: relocateExports(..., 1024)).
MEMORY_BASE = 1024
_DATA_SECTION = 11
_I32_CONST, _GLOBAL_GET, _END = 0x41, 0x23, 0x0B


def _uleb(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def initial_memory(wasm: bytes, size: int) -> bytes:
    """The *size* bytes of memory as instantiating the wasm module *wasm* leaves them: zero but for its
    active data segments (at a constant offset, or at the memory base, the way Emscripten writes a main
    module's). Anything else in the data section is an ImageError: better no file than a wrong base."""
    if wasm[:8] != b"\0asm\x01\0\0\0":
        raise ImageError("not a wasm module (version 1)")
    memory = bytearray(size)
    at = 8
    while at < len(wasm):
        section, at = wasm[at], at + 1
        length, at = _uleb(wasm, at)
        if section == _DATA_SECTION:
            count, seg = _uleb(wasm, at)
            for _ in range(count):
                flags, seg = _uleb(wasm, seg)
                if flags == 1:  # passive: copied by code later, not at instantiation
                    length_, seg = _uleb(wasm, seg)
                    seg += length_
                    continue
                if flags != 0:
                    raise ImageError(f"data segment with flags {flags}")
                opcode, (operand, end) = wasm[seg], _uleb(wasm, seg + 1)
                if wasm[end] != _END or opcode not in (_I32_CONST, _GLOBAL_GET) or (opcode == _GLOBAL_GET and operand):
                    raise ImageError(f"data segment at an offset this reader does not know: {wasm[seg:seg + 8].hex()}")
                # i32.const: its operand is signed; an offset must be below 2**31 as a non-negative one
                if opcode == _I32_CONST and operand >= 1 << (7 * (end - seg - 1) - 1):
                    raise ImageError("data segment at a negative offset")
                offset, seg = (operand if opcode == _I32_CONST else MEMORY_BASE), end + 1
                length_, seg = _uleb(wasm, seg)
                # a slice assignment past either end would resize the memory, not fail: say what is wrong here
                if seg + length_ > len(wasm):
                    raise ImageError(f"data segment of {length_} bytes runs past the end of the module")
                if offset + length_ > size:
                    raise ImageError(f"data segment of {length_} bytes at {offset} ends past the memory's "
                                     f"{size} bytes (a snapshot of another module?)")
                memory[offset:offset + length_] = wasm[seg:seg + length_]
                seg += length_
        at += length
    return bytes(memory)


def encode(snapshot: bytes, header_bytes: int, base: bytes) -> tuple[bytes, str]:
    """The file for Pyodide's *snapshot* (its header of *header_bytes*, then the memory) against *base*,
    the memory as the module initialised it (initial_memory); and the sha256 of base's BASE pages."""
    memory = memoryview(snapshot)[header_bytes:]
    if len(memory) != len(base) or len(base) % PAGE:
        raise ImageError(f"memory of {len(memory)} bytes against a base of {len(base)}: not whole, equal pages")
    zero = bytes(PAGE)
    kinds, pages, reused = bytearray(), [], hashlib.sha256()
    for at in range(0, len(base), PAGE):
        page = memory[at:at + PAGE]
        if page == zero:
            kinds.append(ZERO)
        elif page == base[at:at + PAGE]:
            kinds.append(BASE)
            reused.update(page)
        else:
            kinds.append(FILE)
            pages.append(page)
    head = MAGIC + _FIELDS.pack(PAGE, len(base), header_bytes, len(kinds)) + kinds + bytes(_pad16(len(kinds)))
    return b"".join([head, snapshot[:header_bytes], *pages]), reused.hexdigest()


def decode(data: bytes, base: bytes) -> bytes:
    """Pyodide's snapshot (header, then memory) from the file and *base*: what the page's applyImage
    leaves in memory, for the build's own check and the tests."""
    if data[:8] != MAGIC:
        raise ImageError("not a snapshot image (magic)")
    page, memory_bytes, header_bytes, count = _FIELDS.unpack_from(data, 8)
    if page * count != memory_bytes or len(base) != memory_bytes:
        raise ImageError(f"{count} pages of {page} for {memory_bytes} bytes, against a base of {len(base)}")
    kinds = data[24:24 + count]
    at = 24 + count + _pad16(count)
    out = bytearray(data[at:at + header_bytes])
    at += header_bytes
    for index, kind in enumerate(kinds):
        if kind == ZERO:
            out += bytes(page)
        elif kind == BASE:
            out += base[index * page:(index + 1) * page]
        elif kind == FILE:
            out += data[at:at + page]
            at += page
        else:
            raise ImageError(f"page {index}: unknown kind {kind}")
    if at != len(data):
        raise ImageError(f"{len(data) - at} bytes after the last page")
    return bytes(out)
