"""matplotlib's font cache, built once at build time so a reader's first figure does not build it.

Under Pyodide, matplotlib scans its fonts the first time a cell imports it (~0.4 s here,
"Matplotlib is building the font cache") and nothing keeps the result between visits.
The build runs the same matplotlib in Pyodide under Node and keeps the cache; the page's
worker writes it where matplotlib will look, before any cell imports matplotlib. The same run keeps the
property lists matplotlib writes into its docstrings as pyplot is imported (``kwdoc.json``; lessonpy's
artist_set_docs hands them to matplotlib in the page).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..files import atomic_target, tail
from ..project import PYTHON_ENV_MODULE
from .pyodide_assets import AssetError

SCRIPT = Path(__file__).with_name("fontcache.mjs")
PYTHON = Path(__file__).parent / "in_pyodide" / "fontcache.py"  # what the script runs in Pyodide
KWDOC = Path(__file__).parent / "in_pyodide" / "kwdoc.py"  # and then this


@dataclass
class FontCache:
    """The cache file on disk, the path it must have inside Pyodide's file system, and the docstrings'
    property lists (JSON: {"matplotlib": version, "texts": {"Line2D:kwdoc": text, ...}})."""

    file: Path
    target: str
    kwdoc: Path


def build_font_cache(dist_dir: Path, cache_dir: Path, log=print) -> FontCache:
    """Return the font cache for the matplotlib in dist_dir (cached by its wheel's hash, the script and the
    environment it runs Python in)."""
    lock = json.loads((dist_dir / "pyodide-lock.json").read_text(encoding="utf-8"))
    matplotlib_sha = lock["packages"]["matplotlib"]["sha256"]
    scripts = "".join(hashlib.sha256(path.read_bytes()).hexdigest() for path in (SCRIPT, PYTHON, KWDOC, PYTHON_ENV_MODULE))
    key = hashlib.sha256((matplotlib_sha + scripts).encode()).hexdigest()[:16]
    folder = cache_dir / "fontcache" / key
    file, target_file, kwdoc = folder / "fontlist.json", folder / "target.txt", folder / "kwdoc.json"
    if file.exists() and target_file.exists() and kwdoc.exists():
        return FontCache(file, target_file.read_text(encoding="utf-8"), kwdoc)
    node = shutil.which("node")
    if node is None:
        raise AssetError(f"{SCRIPT}: `node` not found on PATH; install Node.js 18+")
    log("matplotlib: building its font cache with Pyodide under Node")
    with atomic_target(file) as tmp, atomic_target(kwdoc) as kwdoc_tmp:
        result = subprocess.run([node, str(SCRIPT), str(dist_dir), str(tmp), str(kwdoc_tmp)], capture_output=True, text=True)
        if result.returncode != 0:
            raise AssetError(f"{SCRIPT}: node exited with {result.returncode}: {tail(result.stderr)}")
        target = result.stdout.strip().splitlines()[-1]
    with atomic_target(target_file) as tmp:
        tmp.write_text(target, encoding="utf-8")
    return FontCache(file, target, kwdoc)
