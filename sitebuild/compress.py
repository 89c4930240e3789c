"""Brotli sidecars: ``name.br`` beside each file worth compressing, made once at build time.

Brotli at quality 11 is too slow to run per request (minutes for Pyodide's 10 MB wasm on a
busy machine) but makes the biggest files a good third smaller than gzip does (the wasm:
2.3 MB against 3.2 MB). So the build writes the sidecars, a server that finds one sends it
to browsers that accept ``br`` (``sitebuild.server`` does; see the README for other hosts),
and a host that ignores them serves the plain files as before.

Results are cached by the source's sha256 under ``<cache>/brotli/``: a rebuild costs nothing
for files that did not change.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import brotli

from sitebuild.archives import is_stored_archive
from sitebuild.files import atomic_target, link_or_copy

SIDECAR = ".br"
QUALITY = 11
# Text and wasm, and archives whose entries are stored (sitebuild.archives): a deflated archive
# gains a few percent at most, a stored one is where brotli sees across files.
# The memory snapshot (.snapshot, 36 MB of mostly sparse memory) shrinks to a sixth.
SUFFIXES = frozenset({".wasm", ".js", ".mjs", ".json", ".css", ".html", ".svg", ".txt", ".snapshot"})
ARCHIVES = frozenset({".zip", ".whl"})
MIN_SIZE = 1024  # below this, headers cost more than compression saves


def wants_sidecar(path: Path) -> bool:
    suffix = path.suffix.lower()
    if path.stat().st_size <= MIN_SIZE:
        return False
    return suffix in SUFFIXES or (suffix in ARCHIVES and is_stored_archive(path))


def write_sidecars(site: Path, cache_dir: Path) -> int:
    """Write ``<file>.br`` beside every file of *site* worth compressing; return how many."""
    count = 0
    for path in sorted(p for p in Path(site).rglob("*") if p.is_file()):
        if not wants_sidecar(path):
            continue
        data = path.read_bytes()
        cached = Path(cache_dir) / "brotli" / f"{hashlib.sha256(data).hexdigest()}-q{QUALITY}{SIDECAR}"
        if not cached.is_file():
            with atomic_target(cached) as tmp:
                tmp.write_bytes(brotli.compress(data, quality=QUALITY))
        compressed = cached.stat().st_size
        if compressed < len(data):
            link_or_copy(cached, path.with_name(path.name + SIDECAR))
            count += 1
    return count
