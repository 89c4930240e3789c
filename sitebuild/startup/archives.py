"""The two variants of every Pyodide archive the site ships (the standard library zip, the wheels).

Deflated entries (as in Pyodide's own files) keep an archive small on a host that compresses
nothing; stored entries with a brotli-11 copy beside them (``sitebuild.compress``) are a third
smaller again on a host that compresses, because brotli sees the whole archive, not one entry at
a time (the precompiled standard library: 3.1 MB deflated, 2.0 MB stored + brotli). Stored
archives alone would cost 2-3x the bytes on a host that compresses nothing, so the site ships
both, and the page's worker picks one per kind of archive by what the host does with a small
probe of that kind (``static/js/worker/archives.js``).

Both variants are written by the same function from the same entries, so they unpack to the
same files. Files that are never imported are left out of both (``LEAN_SUFFIXES``): type stubs, C
headers, static libraries and Cython declarations are for building against a package and
type-checking it. (numpy's f2py stays, though a browser cannot build Fortran: ``from numpy import *``
imports it.)

Cache layout (under cache_dir, written atomically):
    packed/<source sha256>-<tag>/{deflated,stored}/<name>   the variants of one archive
    packed/probe-<tag>/<probe name>                         the compression probes
"""

from __future__ import annotations

import csv
import hashlib
import io
import zipfile
from collections.abc import Callable
from pathlib import Path

from sitebuild.files import atomic_target

DEFLATED, STORED = "deflated", "stored"
STORED_DIR = "stored"  # the stored variants' folder inside the Pyodide folder
# What the worker fetches to learn whether the host compresses a kind of archive: hosts decide by
# type (a .whl is often application/octet-stream, a .zip application/zip, and neither is on most
# hosts' list of types to compress), so each kind has a probe of its own suffix.
PROBES = {"stdlib": "compression-probe.zip", "wheels": "compression-probe.whl"}  # by kind of archive
PROBE_TEXT = ("This archive is stored, not deflated: a host that compresses files of this kind sends it "
              "in a fraction of its size, and then the page fetches the stored archives.\n").encode() * 24
DEFLATE_LEVEL = 9  # the deflated variant is for hosts that compress nothing: every byte counts there

# Never imported: left out of every wheel (the standard library has none of these).
LEAN_SUFFIXES = (".pyi", ".h", ".a", ".pxd", ".pyx")
# The code that decides the archives' bytes: changing it makes new cache entries.
TAG = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]

Log = Callable[[str], None]


def in_variant(name: str, variant: str) -> str:
    """A file of the Pyodide folder as *variant* has it: the stored ones live in their own folder."""
    return name if variant == DEFLATED else f"{STORED_DIR}/{name}"


def is_lean_out(name: str, lean: bool) -> bool:
    """Whether an archive entry is left out of the shipped archive."""
    return lean and name.endswith(LEAN_SUFFIXES)


def pack_variants(source: Path, source_sha256: str, name: str, cache_dir: Path, lean: bool) -> dict[str, Path]:
    """Return {DEFLATED: path, STORED: path}: the archive *source* repacked both ways, cached by its content
    (*source_sha256*, which the caller knows: it verified or made the file)."""
    folder = Path(cache_dir) / "packed" / f"{source_sha256}-{TAG}{'-lean' if lean else ''}"
    paths = {variant: folder / variant / name for variant in (DEFLATED, STORED)}
    if not all(path.is_file() for path in paths.values()):
        entries = read_entries(source, lean)
        for variant, path in paths.items():
            with atomic_target(path) as tmp:
                write_archive(tmp, entries, zipfile.ZIP_STORED if variant == STORED else zipfile.ZIP_DEFLATED)
    return paths


def read_entries(source: Path, lean: bool) -> list[tuple[zipfile.ZipInfo, bytes]]:
    """The entries of *source* that are shipped, in order, a wheel's RECORD without the left-out rows."""
    with zipfile.ZipFile(source) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist() if not is_lean_out(info.filename, lean)]
    return [(info, drop_record_rows(data, lean) if info.filename.endswith(".dist-info/RECORD") else data)
            for info, data in entries]


def drop_record_rows(record: bytes, lean: bool) -> bytes:
    """A wheel's RECORD without the rows of files left out (what pip would uninstall is what is there)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in csv.reader(io.StringIO(record.decode())):
        if row and not is_lean_out(row[0], lean):
            writer.writerow(row)
    return out.getvalue().encode()


def write_archive(path: Path, entries: list[tuple[zipfile.ZipInfo, bytes]], compression: int) -> None:
    """Write *entries* (names, dates and permissions kept) to *path* with one compression for all."""
    level = DEFLATE_LEVEL if compression == zipfile.ZIP_DEFLATED else None
    with zipfile.ZipFile(path, "w", compression, compresslevel=level) as out:
        for info, data in entries:
            entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            entry.external_attr = info.external_attr
            out.writestr(entry, data, compression, compresslevel=level)


def probe_files(cache_dir: Path) -> dict[str, Path]:
    """Return {probe name: path} for PROBES: small stored archives of very compressible text."""
    folder = Path(cache_dir) / "packed" / f"probe-{TAG}"
    probes = {}
    for name in PROBES.values():
        path = folder / name
        if not path.is_file():
            with atomic_target(path) as tmp:
                entry = zipfile.ZipInfo("README.txt", date_time=(2024, 1, 1, 0, 0, 0))
                write_archive(tmp, [(entry, PROBE_TEXT)], zipfile.ZIP_STORED)
        probes[path.name] = path
    return probes


def unpacked(path: Path) -> dict[str, bytes]:
    """{entry name: bytes} of an archive: what it unpacks to (for checks that two variants agree)."""
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}
