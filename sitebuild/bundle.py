"""Bundle the npm packages the page imports (CodeMirror) into one ES module with esbuild."""

from __future__ import annotations

import subprocess
from pathlib import Path

ENTRY = Path(__file__).with_name("codemirror_entry.js")


class BundleError(Exception):
    """esbuild is missing or failed."""


def bundle_codemirror(root: Path, out_file: Path) -> Path:
    """Write vendor/codemirror.js (minified ESM) from the installed npm packages."""
    esbuild = root / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        raise BundleError(f"{esbuild} is missing: run `npm ci` in {root} first")
    out_file.parent.mkdir(parents=True, exist_ok=True)
    cmd = [str(esbuild), str(ENTRY), "--bundle", "--format=esm", "--minify", "--legal-comments=none",
           "--log-level=warning", f"--outfile={out_file}"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BundleError(f"esbuild failed on {ENTRY.name}:\n{proc.stderr.strip()}")
    return out_file
