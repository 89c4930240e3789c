"""The standard library's rest, for Python in the page: fetched when first needed, if it has not come yet.

The page fetches only the core of the standard library before Python starts (what the boot and the
lesson's first outputs import, sitebuild/stdlib_split.py); the rest, one more zip, arrives in idle
time after the first output (static/js/worker.js, preload) and goes on the import path beside the
core (:func:`mount`). Until it has arrived, :class:`RestFinder`, last on ``sys.meta_path``, is asked
about every module nothing else found: one of the rest's makes it download the rest at once,
synchronously (an XMLHttpRequest, which a worker may make), mount it and import from it. So
``import csv`` works at any moment; only its first import may wait for the download.

The finder stays afterwards: a package whose ``__init__`` is in the core (``encodings``, ``email``)
keeps the core in its ``__path__``, and its modules in the rest (``encodings.cp1252``) are found by
the finder under the same package folder in the rest's zip. A package in the rest has all its
modules there (a module's package is imported before it, so the core holds the packages of its modules).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from importlib.machinery import ModuleSpec, PathFinder

CORE = "/lib/python312.zip"  # where Pyodide mounts its standard library (the core, once split)
REST = "/lib/python312-rest.zip"  # where the rest is written when it arrives


class RestFinder:
    """Finds the rest's *modules* (dotted names), fetching the rest with *fetch* (-> its bytes) if needed."""

    def __init__(self, fetch: Callable[[], bytes], modules: Iterable[str]):
        self.fetch = fetch
        self.modules = frozenset(modules)

    def find_spec(self, fullname: str, path=None, target=None) -> ModuleSpec | None:
        if fullname not in self.modules:
            return None  # not the rest's: whatever raises ModuleNotFoundError raises it
        if not mounted():
            mount(None if arrived() else self.fetch())  # the worker's idle download may have written it
        if path is None:  # a top-level module: the rest is on sys.path now, after the finders asked first
            return PathFinder.find_spec(fullname, [REST])
        # a module of a package of the core: the same folder in the rest's zip
        folders = [REST + entry[len(CORE):] for entry in path if entry == CORE or entry.startswith(CORE + "/")]
        return PathFinder.find_spec(fullname, folders) if folders else None


def mounted() -> bool:
    """Whether the rest is on the import path."""
    return REST in sys.path


def arrived() -> bool:
    """Whether the rest's file is in place (the worker writes it there as soon as its idle download ends,
    which runs no Python; putting it on the import path is left to Python: an import, or the worker's
    first queued install)."""
    return os.path.isfile(REST)


def mount(data: bytes | None = None) -> None:
    """Put the rest on the import path, right after the core; write *data* there first when given (the
    worker writes what it fetched itself and calls this without). Does nothing when it is there already."""
    if mounted():
        return
    if data is not None:
        with open(REST, "wb") as out:
            out.write(data)
    sys.path.insert(sys.path.index(CORE) + 1 if CORE in sys.path else len(sys.path), REST)


def install(url: str, modules: Iterable[str], fetch: Callable[[str], bytes] | None = None) -> RestFinder:
    """Put a RestFinder for the rest at *url* last on sys.meta_path (replacing one installed before: a
    restored interpreter may hold the build's); *fetch* (the browser's synchronous download by default)
    gets the bytes at a URL."""
    download = fetch or fetch_sync
    finder = RestFinder(lambda: download(url), modules)
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, RestFinder)] + [finder]
    return finder


def fetch_sync(url: str) -> bytes:
    """The bytes at *url*, downloaded synchronously (allowed in a worker; Pyodide only)."""
    from js import XMLHttpRequest  # type: ignore[import-not-found]  # only exists in Pyodide

    request = XMLHttpRequest.new()
    request.open("GET", url, False)
    request.responseType = "arraybuffer"
    try:
        request.send()
    except Exception as exc:  # a network error: the browser throws NetworkError
        raise ImportError(f"the rest of Python's standard library could not be downloaded ({url}): {exc}") from exc
    if request.status != 200:
        raise ImportError(f"the rest of Python's standard library could not be downloaded ({url}): "
                          f"HTTP {request.status}")
    return request.response.to_bytes()
