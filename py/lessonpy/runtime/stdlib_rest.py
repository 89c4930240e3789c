"""The files that come after the first output, for Python in the page: fetched when first needed, if they have
not come yet. Two kinds of rest, one finder: the standard library's, and numpy's after a restore.

The page fetches only the core of the standard library before Python starts (what the boot and the
lesson's first outputs import, sitebuild/startup/stdlib_split.py); the rest, one more zip, arrives in idle
time after the first output (static/js/worker/worker.js, preload) and goes on the import path beside the
core (:func:`mount`). Until it has arrived, :class:`RestFinder`, last on ``sys.meta_path``, is asked
about every module nothing else found: one of the rest's makes it download the rest at once,
synchronously (an XMLHttpRequest, which a worker may make), mount it and import from it. So
``import csv`` works at any moment; only its first import may wait for the download.

The finder stays afterwards: a package whose ``__init__`` is in the core (``encodings``, ``email``)
keeps the core in its ``__path__``, and its modules in the rest (``encodings.cp1252``) are found by
the finder under the same package folder in the rest's zip. A package in the rest has all its
modules there (a module's package is imported before it, so the core holds the packages of its modules).

A page that restores Python from the build's memory snapshot finds numpy imported but only its dynamic
libraries in the file system (sitebuild/startup/wheel_split.py); the rest of numpy's files (modules the image did
not import, numpy.polynomial or numpy.testing, its data and metadata) arrive the same way, as a zip the
worker unpacks into site-packages in idle time. :class:`FolderRest` serves those through the same finder:
a module of such a rest that the path finders did not find is looked for again once the finders of its
folders have seen the files the worker wrote (their caches do not know them), and, when they have not
come, the archive is downloaded synchronously and unpacked there.
"""

from __future__ import annotations

import io
import os
import sys
import zipfile
from collections.abc import Callable, Iterable
from importlib.machinery import ModuleSpec, PathFinder

CORE = "/lib/python312.zip"  # where Pyodide mounts its standard library (the core, once split)
REST = "/lib/python312-rest.zip"  # where the rest is written when it arrives


class FolderRest:
    """A package's rest: the archive at *url* (its bytes from *fetch*) whose files go into *folder*
    (site-packages), holding *modules* (dotted names)."""

    def __init__(self, fetch: Callable[[], bytes], modules: Iterable[str], folder: str):
        self.fetch = fetch
        self.modules = frozenset(modules)
        self.folder = folder.rstrip("/")
        self.unpacked = False  # by this finder (the worker's idle download writes the same files)

    def find_spec(self, fullname: str, path) -> ModuleSpec | None:
        folders = list(path) if path is not None else [self.folder]
        spec = self.find_written(fullname, folders)
        if spec is None and not self.unpacked:  # not come yet: download it now
            self.unpack(self.fetch())
            spec = self.find_written(fullname, folders)
        return spec

    def find_written(self, fullname: str, folders: list[str]) -> ModuleSpec | None:
        """The module's spec from the files in the file system, after its folders' finders looked again."""
        for path, finder in list(sys.path_importer_cache.items()):
            if path == self.folder or path.startswith(self.folder + "/"):
                if finder is None:
                    del sys.path_importer_cache[path]  # a folder that did not exist when first asked about
                elif hasattr(finder, "invalidate_caches"):
                    finder.invalidate_caches()
        return PathFinder.find_spec(fullname, folders)

    def unpack(self, data: bytes) -> None:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            archive.extractall(self.folder)
        self.unpacked = True


class RestFinder:
    """Finds the standard library rest's *modules* (dotted names), fetching the rest with *fetch* (-> its
    bytes) if needed; and the modules of the packages' rests in *folders* (FolderRest, add_folder)."""

    def __init__(self, fetch: Callable[[], bytes], modules: Iterable[str]):
        self.fetch = fetch
        self.modules = frozenset(modules)
        self.folders: list[FolderRest] = []

    def find_spec(self, fullname: str, path=None, target=None) -> ModuleSpec | None:
        for rest in self.folders:
            if fullname in rest.modules:
                return rest.find_spec(fullname, path)
        if fullname not in self.modules:
            return None  # not a rest's: whatever raises ModuleNotFoundError raises it
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


def add_folder(url: str, modules: Iterable[str], folder: str, fetch: Callable[[str], bytes] | None = None) -> RestFinder:
    """Serve a package's rest at *url* (its *modules*, unpacked into *folder*) by the RestFinder on
    sys.meta_path (one that serves no standard library's rest is put there when there is none)."""
    download = fetch or fetch_sync
    finder = next((f for f in sys.meta_path if isinstance(f, RestFinder)), None) or install(url, (), download)
    finder.folders.append(FolderRest(lambda: download(url), modules, folder))
    return finder


def what(url: str) -> str:
    """What the archive at *url* is, for a message: the standard library's rest, or a package's files."""
    name = url.rsplit("/", 1)[-1]
    return "the rest of Python's standard library" if name.startswith("python_stdlib") else \
        f"the rest of {name.split('-', 1)[0]}'s files"


def fetch_sync(url: str) -> bytes:
    """The bytes at *url*, downloaded synchronously (allowed in a worker; Pyodide only)."""
    from js import XMLHttpRequest  # type: ignore[import-not-found]  # only exists in Pyodide

    request = XMLHttpRequest.new()
    request.open("GET", url, False)
    request.responseType = "arraybuffer"
    try:
        request.send()
    except Exception as exc:  # a network error: the browser throws NetworkError
        raise ImportError(f"{what(url)} could not be downloaded ({url}): {exc}") from exc
    if request.status != 200:
        raise ImportError(f"{what(url)} could not be downloaded ({url}): HTTP {request.status}")
    return request.response.to_bytes()
