"""Brotli sidecars: ``name.br`` beside each file worth compressing, made once at build time.

Brotli at quality 11 is too slow to run per request (minutes for Pyodide's 10 MB wasm on a
busy machine) but makes the biggest files a good third smaller than gzip does (the wasm:
2.3 MB against 3.2 MB). So the build writes the sidecars, a server that finds one sends it
to browsers that accept ``br`` (``sitebuild.server`` does; see the README for other hosts),
and a host that ignores them serves the plain files as before.

Every compression is cached under ``<cache>/brotli/`` by the source's sha256 and the quality. The big
files live in folders of the cache named after their content (Pyodide's ``dist/<key>/``, the memory
snapshot's ``snapshot/<key>/``, the live model's ``models/minilm-live/<key>/``). Pyodide's and the live
model's sidecars are made once, inside those folders (whose keys name :func:`rule`), and linked into the site with their files; the
snapshot's key does not name :func:`rule`, so its sidecar is linked from ``<cache>/brotli/`` into the
site by its known hash (two ``stat`` calls a build). The
site's last step (:func:`write_sidecars`) then hashes only the files that came without one: the pages
and the assets (about 1.5 MB), and any file whose brotli copy was not smaller (it has no sidecar to
come with). Archives are opened to see whether they are stored (their directory only, not their data).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import brotli

from sitebuild.files import atomic_target, link_or_copy, sha256_file

SIDECAR = ".br"
QUALITY = 11
# Text and wasm, and archives whose entries are stored (is_stored_archive; sitebuild.startup.archives makes
# them): a deflated archive gains a few percent at most, a stored one is where brotli sees across files.
# The memory snapshot (.snapshot, 36 MB of mostly sparse memory) shrinks to a sixth.
SUFFIXES = frozenset({".wasm", ".js", ".mjs", ".json", ".css", ".html", ".svg", ".txt", ".snapshot"})
ARCHIVES = frozenset({".zip", ".whl"})
MIN_SIZE = 1024  # below this, headers cost more than compression saves


def rule() -> str:
    """What decides which files get a sidecar and how it is made, in words: a folder of the cache that holds
    its files' sidecars (sitebuild.startup.pyodide_assets.assemble) names it in its key, so changing any of it
    (the quality, the suffixes, the least size) makes another folder instead of reusing stale sidecars."""
    return (f"brotli-q{QUALITY} {' '.join(sorted(SUFFIXES))} stored {' '.join(sorted(ARCHIVES))} "
            f"over {MIN_SIZE} bytes")


def wants_sidecar(path: Path) -> bool:
    suffix = path.suffix.lower()
    if path.stat().st_size <= MIN_SIZE:
        return False
    return suffix in SUFFIXES or (suffix in ARCHIVES and is_stored_archive(path))


def is_stored_archive(path: Path) -> bool:
    """Whether *path* is a zip archive whose entries are all stored (worth a brotli copy: brotli sees
    across its files, where a deflated one gains a few percent at most)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())
    except (OSError, zipfile.BadZipFile):
        return False


def sidecar_of(path: Path) -> Path:
    """Where the brotli copy of *path* goes: beside it, ``name.br``."""
    return path.with_name(path.name + SIDECAR)


def add_sidecar(path: Path, cache_dir: Path, sha256: str | None = None) -> bool:
    """Give *path* its sidecar unless it has one; return whether it has one now.

    The copy comes from ``<cache>/brotli/`` by the file's sha256 (*sha256* when the caller knows it,
    else read from the file), compressed there first if needed; a file that brotli does not make
    smaller gets none (with *sha256* given, finding that out again costs two ``stat`` calls)."""
    sidecar = sidecar_of(path)
    if sidecar.is_file():
        return True
    if not wants_sidecar(path):
        return False
    cached = brotli_copy(path, cache_dir, sha256 or sha256_file(path))
    if cached is None:
        return False
    link_or_copy(cached, sidecar)
    return True


def cached_copy(cache_dir: Path, sha256: str) -> Path:
    """Where the brotli copy of the content with this sha256 is kept, made or not."""
    return Path(cache_dir) / "brotli" / f"{sha256}-q{QUALITY}{SIDECAR}"


def brotli_copy(path: Path, cache_dir: Path, sha256: str) -> Path | None:
    """The cached brotli copy of *path* (content *sha256*), compressed first if the cache lacks it, or None
    when it is not smaller than the file: the one place that decides whether a file gets a sidecar."""
    cached = cached_copy(cache_dir, sha256)
    if not cached.is_file():
        with atomic_target(cached) as tmp:
            tmp.write_bytes(brotli.compress(path.read_bytes(), quality=QUALITY))
    return cached if cached.stat().st_size < path.stat().st_size else None


def lacks_sidecar(path: Path, cache_dir: Path, sha256: str) -> bool:
    """Whether *path* (content *sha256*) has no sidecar where add_sidecar would give it one: it wants one,
    and its brotli copy is smaller (a file brotli does not shrink has none, rightly). A file without one
    whose copy left the cache (``<cache>/brotli/`` deleted) is compressed again to tell: the answer is
    never "lacks" for want of the cache, which would rebuild its whole folder."""
    if sidecar_of(path).is_file() or not wants_sidecar(path):
        return False
    return brotli_copy(path, cache_dir, sha256) is not None


def link_with_sidecar(src: Path, dst: Path) -> None:
    """Hard-link *src* (and its sidecar, if it has one) to *dst* (and dst's sidecar)."""
    link_or_copy(src, dst)
    if sidecar_of(src).is_file():
        link_or_copy(sidecar_of(src), sidecar_of(dst))


def write_sidecars(site: Path, cache_dir: Path) -> int:
    """Give every file of *site* worth compressing its ``.br``; return how many files have one.
    Files that came with theirs (linked from the cache's content-named folders) are not read."""
    files = sorted(p for p in Path(site).rglob("*") if p.is_file() and p.suffix != SIDECAR)
    return sum(add_sidecar(path, cache_dir) for path in files)
