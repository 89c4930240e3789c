"""Pyodide's memory snapshot, made at build time: Python with numpy and lessonpy imported.

The page's worker restores it instead of starting Python (static/js/worker/snapshot.js), and boots
normally whenever restoring fails. A snapshot is only valid with exactly the files it was made
from, so it is named after them: the key hashes the Pyodide folder's content name (``dist.name``,
itself the hash of every file in it: the runtime, and both variants of the standard library, the
lock and the boot packages' wheels, sitebuild.startup.archives: it is made from the deflated ones, and the
page's worker may pick the stored ones, which unpack to the same files), the boot packages' names,
the lesson's wheel, the script that makes it, Python's environment (``static/js/shared/python-env.mjs``, which the
page's worker uses too) and the Node that runs it. Any change gives another
key, hence another file and URL, so a page can never pair a snapshot with other files.
Made once per key under ``<cache>/snapshot/<key>/`` (atomically; safe to delete). The file is
not Pyodide's image as it is but without the pages the page's memory already holds (zero, or as the wasm
module initialised them): sitebuild/startup/snapshot_image.py, whose module is in the key too.

Making it needs Node; when Node or Pyodide cannot make it the build says so in one line and
the site boots Python the normal way (`make_snapshot` returns None).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import snapshot_image
from ..files import sha256_file, tail
from ..node import NodeError, node_and_version
from ..project import PYODIDE_SEAMS_MODULE, PYTHON_ENV_MODULE

SCRIPT = Path(__file__).with_name("snapshot.mjs")
WARM_UP = Path(__file__).parent / "in_pyodide" / "snapshot_warm_up.py"  # what the script runs before the image
MAKER = Path(__file__)  # this module: it writes the meta.json the pages get, so it keys the snapshot too
IMAGE = Path(snapshot_image.__file__)  # writes the file the pages restore
SEAMS = PYODIDE_SEAMS_MODULE  # the hooks into Pyodide's internals, which the script and the page share
ENV = PYTHON_ENV_MODULE  # the environment the script runs Python in, which the image holds (the page's too)
FILE_NAME = "python.snapshot"
TIMEOUT_S = 300  # a few seconds here; a stuck Node must not hang the build


@dataclass
class Snapshot:
    """A made snapshot: its file, its key (the hash of its inputs) and what the page needs to restore it."""

    file: Path
    key: str
    meta: dict


def snapshot_key(dist: Path, boot_packages: list[str], lesson_wheel: Path, node_version: str) -> str:
    """The hash of everything the snapshot is made from or restored with: the Pyodide folder by its content
    name (sitebuild.startup.pyodide_assets.assemble: no file of it is read again), the packages imported from it,
    the lesson's wheel, the script, this module (it writes the meta.json the pages get), the image's
    format (sitebuild/startup/snapshot_image.py), Python's environment (static/js/shared/python-env.mjs) and the
    hooks into Pyodide (static/js/shared/pyodide-seams.mjs) by their bytes, and the Node that makes the snapshot."""
    lines = [f"pyodide {dist.name}", f"boot {','.join(boot_packages)}",
             f"lesson:{lesson_wheel.name} {sha256_file(lesson_wheel)}", f"script:{SCRIPT.name} {sha256_file(SCRIPT)}", f"warm-up:{WARM_UP.name} {sha256_file(WARM_UP)}",
             f"maker:{MAKER.name} {sha256_file(MAKER)}", f"image:{IMAGE.name} {sha256_file(IMAGE)}",
             f"env:{ENV.name} {sha256_file(ENV)}", f"seams:{SEAMS.name} {sha256_file(SEAMS)}",
             f"node {node_version}"]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def make_snapshot(dist: Path, boot_packages: list[str], lesson_wheel: Path, cache_dir: Path, log=print) -> Snapshot | None:
    """The snapshot for these files, made (under Node) unless cached; None, with a log line, if it cannot be made."""
    try:
        node, node_version = node_and_version()
    except NodeError as exc:
        log(f"snapshot: not made ({exc}); the pages start Python without it")
        return None
    key = snapshot_key(dist, boot_packages, lesson_wheel, node_version)
    folder = Path(cache_dir) / "snapshot" / key
    if not (folder / FILE_NAME).is_file():
        error = run_script(node, dist, boot_packages, lesson_wheel, folder, log)
        if error:
            log(f"snapshot: not made ({error}); the pages start Python without it")
            return None
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    return Snapshot(folder / FILE_NAME, key, meta)


def write_image(snap: Path, header_bytes: int, wasm: Path) -> dict:
    """Replace Pyodide's image *snap* by the file the pages restore (sitebuild/startup/snapshot_image.py), checked
    to decode to the same bytes; the restore spec's fields about it."""
    full = snap.read_bytes()
    memory_bytes = len(full) - header_bytes
    base = snapshot_image.initial_memory(wasm.read_bytes(), memory_bytes)
    data, base_sha256 = snapshot_image.encode(full, header_bytes, base)
    if snapshot_image.decode(data, base) != full:
        raise snapshot_image.ImageError("the image does not decode to the snapshot it was made from")
    snap.write_bytes(data)
    return {"bytes": len(data), "memoryBytes": memory_bytes, "baseSha256": base_sha256}


def run_script(node: str, dist: Path, boot_packages: list[str], lesson_wheel: Path, folder: Path, log) -> str | None:
    """Make the snapshot into *folder* (all or nothing); return why it failed, or None."""
    log(f"snapshot: making Python's memory snapshot with Pyodide under Node ({folder.name})")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".tmp-"))
    try:
        tmp.chmod(0o755)  # mkdtemp makes it private; the site's copy must be servable
        snap, raw_meta = tmp / FILE_NAME, tmp / "node-meta.json"
        try:
            command = [node, str(SCRIPT), str(dist), str(lesson_wheel), str(snap), str(raw_meta), ",".join(boot_packages)]
            result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"{SCRIPT.name} did not finish within {TIMEOUT_S} s"
        if result.returncode != 0:
            return f"{SCRIPT.name} exited with {result.returncode}: {tail(result.stderr, 3)}"
        meta = json.loads(raw_meta.read_text(encoding="utf-8"))
        try:
            meta.update(write_image(snap, meta.pop("headerBytes"), dist / "pyodide.asm.wasm"))
        except snapshot_image.ImageError as exc:
            return f"its image: {exc}"

        meta["sha256"] = sha256_file(snap)
        (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        raw_meta.unlink()
        snap.chmod(0o644)
        try:
            tmp.rename(folder)  # atomic: the folder is either complete or absent
        except OSError:
            if not (folder / FILE_NAME).is_file():
                raise  # not another build finishing the same key first
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
