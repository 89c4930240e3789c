"""A boot package's wheel in two archives for the snapshot's restore: its libraries, and the rest.

A page that restores Python from the build's memory snapshot (static/js/worker/snapshot.js) finds numpy
imported already: what it needs of numpy's files before the first output is only its dynamic
libraries, which it loads again at the bases they had (their code lives outside the memory image).
Its modules are in memory; the other files (modules the image did not import, data, metadata) come
after the first output, in the worker's idle prefetch, and ``lessonpy.runtime.stdlib_rest`` fetches them
synchronously when Python imports one of their modules before that. So the wheel is split:

    <wheel name without .whl>.libs.zip   every dynamic library (``SHARED_LIBRARY``), before the restore
    <wheel name without .whl>.rest.zip   every other file, after the first output

Every file of the wheel is in exactly one of them; folders are not entries (the page makes a file's
folders as it writes it). The libraries' folders are packages the image imported (numpy's four: _core,
fft, linalg, random): a folder holding only libraries of a package it had not imported would be a
namespace package to Python until the rest came, not a module the finder fetches. The normal boot (no snapshot, or a failed restore) installs Pyodide's own
wheel through its lock, untouched. Each part is made once per content under
``<cache>/wheel-split/<key>/`` and packed both ways like the other archives (sitebuild.startup.archives).
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from ..files import atomic_target
from . import seams
from .stdlib_split import module_name

# What Pyodide's loadPackage loads as a dynamic library (all of a package's, at install): its rule, as the page has it.
SHARED_LIBRARY = seams.pattern("SHARED_LIBRARY")
PARTS = ("libs", "rest")
# The code that decides the parts' bytes: changing it makes new cache entries.
TAG = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def part_name(wheel_name: str, part: str) -> str:
    """The file name of a wheel's part ("libs" or "rest")."""
    return f"{wheel_name.removesuffix('.whl')}.{part}.zip"


def part_of(entry: str) -> str:
    """Which part holds a wheel's entry."""
    return "libs" if SHARED_LIBRARY.search(entry.rsplit("/", 1)[-1]) else "rest"


def split_wheel(source: Path, outputs: dict[str, Path]) -> None:
    """Write the files of wheel *source* to *outputs* ({part: path}), each to its part (part_of), stored
    (sitebuild.startup.archives packs each part both ways)."""
    with zipfile.ZipFile(source) as wheel, zipfile.ZipFile(outputs["libs"], "w") as libs, \
            zipfile.ZipFile(outputs["rest"], "w") as rest:
        for info in wheel.infolist():
            if info.filename.endswith("/"):
                continue
            entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            entry.external_attr = info.external_attr
            (libs if part_of(info.filename) == "libs" else rest).writestr(entry, wheel.read(info), zipfile.ZIP_STORED)


def split_cached(source: Path, source_sha256: str, cache_dir: Path) -> dict[str, Path]:
    """{part: file} of wheel *source* split (split_wheel), made once per content."""
    key = hashlib.sha256(f"{source_sha256}\n{TAG}".encode()).hexdigest()[:16]
    folder = Path(cache_dir) / "wheel-split" / key
    outputs = {part: folder / part / part_name(source.name, part) for part in PARTS}
    if not all(path.is_file() for path in outputs.values()):
        with atomic_target(outputs["libs"]) as libs, atomic_target(outputs["rest"]) as rest:
            split_wheel(source, {"libs": libs, "rest": rest})
    return outputs


def rest_modules(rest: Path) -> list[str]:
    """The dotted names of the modules in a rest archive, sorted: what lessonpy.runtime.stdlib_rest fetches it for."""
    with zipfile.ZipFile(rest) as archive:
        return sorted({module for name in archive.namelist() if (module := module_name(name))})
