"""A live model's files in the page's file system, and the one copy of its weights the page keeps.

The worker writes a live model's files into Python's file system when the reader first runs it
(static/js/worker/live-files.js), from the network or from the browser's Cache Storage. Emscripten's file system
holds a file's bytes in the worker's JavaScript memory, and Python then reads them into its own: two copies of
97.7 MB for SmolLM2 (45 MB for MiniLM) for as long as the page is open, with only the second ever used. So once a
model has read its weights, :func:`release` removes the file-system copy, and the model's ``files()`` lists its files
as ``loaded``: the page then writes nothing again (live-download.js). A new interpreter (after a Stop that restarts
Python) has neither copy and gets the file again from Cache Storage, without a download.
"""

from __future__ import annotations

import sys
from pathlib import Path


def listing(folder: str, names, loaded: bool) -> list[dict]:
    """The page's list of a model's files: [{name, path, loaded}], name under the site's data folder, path in
    Python's file system; loaded: Python has read them, so the page need not put them there."""
    return [{"name": name, "path": f"{folder}/{name}", "loaded": loaded} for name in names]


def release(path: Path, page_folder: str) -> None:
    """Remove *path*, a file just read into memory, if it is the page's copy (in *page_folder*, the folder the
    worker writes to); a file anywhere else (the build's cache, a test's folder, a reader's own) is never touched."""
    if Path(path).parent == Path(page_folder):
        _free_now(Path(path))
        Path(path).unlink(missing_ok=True)


def _free_now(path: Path) -> None:
    """In Pyodide, give the file's bytes back at once. The file system holds them in one JavaScript ArrayBuffer of
    their own (the worker's download, written with ``canOwn``), and removing the file only leaves it to the
    collector, which in every engine let the 97.7 MB of SmolLM2's file live on beside Python's memory through the
    first pass, the live panel's peak (docs/speed.md). Detaching it (``ArrayBuffer.prototype.transfer``, where
    the engine has it) frees it now where no Web API has seen the buffer; Chromium keeps one that
    ``crypto.subtle.digest`` or ``new Response`` has seen (the worker's check and Cache Storage) until it is
    collected, so there it frees nothing sooner (a probe), though one run each peaked lower with it than without
    (565 and 619 MB). Anything else, or any failure, leaves it to the collector."""
    if sys.platform != "emscripten":
        return
    try:
        import pyodide_js

        contents = pyodide_js.FS.lookupPath(str(path)).node.contents
        buffer = getattr(contents, "buffer", None)
        # never Python's own memory (the file system keeps a file's bytes apart from it, but to be sure)
        if buffer is None or buffer == pyodide_js._module.HEAPU8.buffer or not hasattr(buffer, "transfer"):
            return
        buffer.transfer(0)
    except Exception:  # noqa: BLE001 - freeing early is an optimisation: the collector frees it anyway
        return
