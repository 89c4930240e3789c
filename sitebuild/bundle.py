"""esbuild's bundles: the npm packages the page imports (CodeMirror) as one ES module, Python's worker
as one module, the page's own modules as a few minified ones, and the pages' stylesheets as one file."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

ENTRY = Path(__file__).with_name("codemirror_entry.js")


class BundleError(Exception):
    """esbuild is missing or failed."""


def _esbuild(root: Path) -> Path:
    esbuild = root / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        raise BundleError(f"{esbuild} is missing: run `npm ci` in {root} first")
    return esbuild


def _bundle_module(root: Path, entry: Path, out_file: Path, *, minify: bool) -> Path:
    """esbuild *entry* and every module it imports into the one ES module *out_file*. Run from the entry's
    folder: esbuild names each module in a comment by its path from there, which must not name the build's
    temporary folder (the assets' content hash would change with every build)."""
    out_file.parent.mkdir(parents=True, exist_ok=True)
    cmd = [str(_esbuild(root)), str(entry), "--bundle", "--format=esm", *(["--minify"] if minify else []),
           "--legal-comments=none", "--log-level=warning", f"--outfile={out_file}"]
    proc = subprocess.run(cmd, cwd=entry.parent, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BundleError(f"esbuild failed on {entry.name}:\n{proc.stderr.strip()}")
    return out_file


def bundle_codemirror(root: Path, out_file: Path) -> Path:
    """Write vendor/codemirror.js (minified ESM) from the installed npm packages."""
    return _bundle_module(root, ENTRY, out_file, minify=True)


def bundle_worker(root: Path, entry: Path, out_file: Path) -> Path:
    """Write *out_file*: the worker module *entry* with every module it imports, as one ES module beside it
    (so that what it fetches relative to itself is where it was). A module worker fetches its imports a
    level at a time, one round trip each (4 levels: worker, boot, snapshot, install), before Python's
    downloads can begin. Not minified: a worker's errors name its lines."""
    return _bundle_module(root, entry, out_file, minify=False)


def bundle_page(root: Path, js_dir: Path, entries: list[str], out_dir: str) -> dict[str, list[str]]:
    """Write the page's modules, from the *entries* (paths under *js_dir*: the page's module scripts), into
    *js_dir*/*out_dir*: one minified module per entry, named as it, and what entries share or load later
    (the features, the widgets, the editor) as chunks named by their content (esbuild's code splitting, so
    each module is one instance however many entries import it). CodeMirror stays the file it is (the
    editor imports it by the same relative path, one folder over). Without this a page fetched some 40
    modules a level of imports at a time: six round trips before its widgets' modules had come.
    Return, per entry (its out name), the chunks it imports at once, directly or through another: the page
    preloads them."""
    with tempfile.TemporaryDirectory() as tmp:
        meta_file = Path(tmp) / "meta.json"
        cmd = [str(_esbuild(root)), *entries, "--bundle", "--splitting", "--format=esm", "--minify",
               "--legal-comments=none", "--log-level=warning", f"--outdir={out_dir}", "--entry-names=[name]",
               "--chunk-names=[name]-[hash]", "--external:*/vendor/codemirror.js", f"--metafile={meta_file}"]
        proc = subprocess.run(cmd, cwd=js_dir, capture_output=True, text=True)  # paths from js_dir: see _bundle_module
        if proc.returncode != 0:
            raise BundleError(f"esbuild failed on the page's modules {', '.join(entries)}:\n{proc.stderr.strip()}")
        outputs = json.loads(meta_file.read_text("utf-8"))["outputs"]
    static = {Path(path).name: [Path(i["path"]).name for i in info["imports"] if i["kind"] == "import-statement"]
              for path, info in outputs.items()}

    def closure(name: str, seen: dict[str, None]) -> dict[str, None]:  # ordered: a chunk before what it imports
        for chunk in static.get(name, []):
            if chunk not in seen:
                seen[chunk] = None
                closure(chunk, seen)
        return seen

    return {Path(e).name: list(closure(Path(e).name, {})) for e in entries}


def bundle_css(root: Path, folder: Path, sheets: list[str], out_name: str) -> Path:
    """Write *folder*/*out_name*: the stylesheets *sheets* of *folder*, in that order (the cascade's), with
    their ``@import``s inlined, minified. One render-blocking request instead of one per sheet (and one
    more per ``@import``, which the browser only sees once the importing sheet has arrived); fonts stay
    files beside it, named as the sheets name them."""
    entry = "".join(f'@import "./{sheet}";\n' for sheet in sheets)
    cmd = [str(_esbuild(root)), "--bundle", "--loader=css", "--minify", "--legal-comments=none",
           "--external:*.woff2", "--log-level=warning", "--sourcefile=(the page sheets)", f"--outfile={folder / out_name}"]
    proc = subprocess.run(cmd, cwd=folder, input=entry, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BundleError(f"esbuild failed on the stylesheets {', '.join(sheets)}:\n{proc.stderr.strip()}")
    return folder / out_name
