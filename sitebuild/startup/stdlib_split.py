"""The standard library in two archives: the core a page fetches before Python starts, the rest later.

A whole reading session imports about a third of Pyodide's standard library, and the boot with the
lesson's first outputs fewer still. So the build runs, under Node, what the page's worker runs before
those outputs (``stdlib_trace.mjs``: the boot, the lesson's Python, the lesson's cells in page order up
to the first that needs a package the page does not boot with) with the whole library mounted, and
records which of its files the import system found (imported, or found and failed to import: a caught
failure is looked up again in the page). Those files (``core_entries``: with the folders holding them
and the data files of their packages) make the core, under Pyodide's own name (``python_stdlib.zip``:
every run of Pyodide, the page's and the build's snapshot alike, mounts it); everything else makes the
rest (``REST_NAME``), which the page fetches in idle time after the first output and which
``lessonpy.runtime.stdlib_rest`` fetches synchronously when Python imports a module of it before that.

The same Node run goes on past the trace's stop and runs the lesson's other cells in page order, the
build's check that they run as the page runs them (``failed`` in the report: the build stops at that
cell's line); cells marked ``needs=page`` are left to the browser tests.

The trace is cached under ``<cache>/stdlib-trace/<key>.json``, the key naming the Pyodide folder (by its
content name), the boot packages, the lesson's wheel, the cells, the script and the Node that ran it:
a change of the lesson or of Pyodide traces again.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..files import atomic_target, sha256_file, tail
from ..node import NodeError, node_and_version
from ..project import PYODIDE_SEAMS_MODULE, PYTHON_ENV_MODULE

SCRIPT = Path(__file__).with_name("stdlib_trace.mjs")
TRACE = Path(__file__).parent / "in_pyodide" / "stdlib_trace.py"  # what the script runs in Pyodide
REST_NAME = "python_stdlib_rest.zip"
MODULE_SUFFIXES = (".pyc", ".py")
TIMEOUT_S = 300  # a few seconds here; a stuck Node must not hang the build
# The code that decides the parts' bytes: changing it makes new cache entries.
TAG = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


class TraceError(Exception):
    """The trace could not be made; the message says why."""


def module_name(entry: str) -> str | None:
    """The dotted module an archive entry holds ("email/mime/text.pyc" -> "email.mime.text", a package's
    __init__ its package), or None for a folder or a data file."""
    if entry.endswith("/") or not entry.endswith(MODULE_SUFFIXES):
        return None
    parts = entry.rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or None


def package_of(entry: str) -> str:
    """The folder an entry sits in, as a dotted name ("" at the top)."""
    return entry.rstrip("/").rpartition("/")[0].replace("/", ".")


def core_entries(names: Sequence[str], traced: Iterable[str]) -> set[str]:
    """The entries of the core archive: the traced modules' files (*traced*, entry names), the folders that
    hold them, and the data files of the packages whose __init__ is in the core (``py.typed`` and the like:
    read through the package's own importer). No other folder: zipimport takes a folder without its
    __init__ for a namespace package, so a package of the rest (``unittest``) imported before the rest is
    on the import path would be an empty namespace rather than a module lessonpy.runtime.stdlib_rest fetches."""
    traced = set(traced)
    unknown = traced - set(names)
    if unknown:
        raise TraceError(f"traced files not in the archive: {', '.join(sorted(unknown)[:5])}")
    core_packages = {module_name(name) for name in traced if name.endswith(("/__init__.pyc", "/__init__.py"))}
    core = set(traced)
    for name in names:
        if module_name(name) is None and not name.endswith("/") and package_of(name) in core_packages:
            core.add(name)
    folders = {name[:at + 1] for name in core for at in range(len(name)) if name[at] == "/"}
    return core | (folders & set(names))


def rest_modules(names: Iterable[str], core: set[str]) -> list[str]:
    """The dotted names of the modules in the rest, sorted: what lessonpy.runtime.stdlib_rest fetches the rest for."""
    return sorted({module for name in names if name not in core and (module := module_name(name))})


def split_archive(source: Path, core: set[str], core_out: Path, rest_out: Path) -> None:
    """Write the entries of *source* in *core* to *core_out* and the others to *rest_out* (and every folder:
    the rest's zip has the whole tree), entries stored as they are (sitebuild.startup.archives packs each part both ways)."""
    with zipfile.ZipFile(source) as archive:
        infos = archive.infolist()
        with zipfile.ZipFile(core_out, "w") as core_zip, zipfile.ZipFile(rest_out, "w") as rest_zip:
            for info in infos:
                data = archive.read(info)
                targets = [core_zip] if info.filename in core else []
                if info.filename.endswith("/") or info.filename not in core:
                    targets.append(rest_zip)
                for target in targets:
                    entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
                    entry.external_attr = info.external_attr
                    target.writestr(entry, data, zipfile.ZIP_STORED)


def split_cached(source: Path, source_sha256: str, traced: list[str], cache_dir: Path) -> tuple[Path, Path, list[str]]:
    """The core and rest archives of *source* for these traced files, made once per content
    (``<cache>/stdlib-split/<key>/``), and the rest's module names."""
    key = hashlib.sha256(f"{source_sha256}\n{TAG}\n{json.dumps(sorted(traced))}".encode()).hexdigest()[:16]
    folder = Path(cache_dir) / "stdlib-split" / key
    core_out, rest_out = folder / "core" / source.name, folder / "rest" / REST_NAME
    with zipfile.ZipFile(source) as archive:
        names = archive.namelist()
    core = core_entries(names, traced)
    if not (core_out.is_file() and rest_out.is_file()):
        with atomic_target(core_out) as core_tmp, atomic_target(rest_out) as rest_tmp:
            split_archive(source, core, core_tmp, rest_tmp)
    return core_out, rest_out, rest_modules(names, core)


# --- the trace ------------------------------------------------------------------------------------------


def trace_key(dist: Path, boot_packages: list[str], lesson_wheel: Path, cells: list, node_version: str) -> str:
    """The hash of everything the trace depends on."""
    lines = [f"pyodide {dist.name}", f"boot {','.join(boot_packages)}",
             f"lesson:{lesson_wheel.name} {sha256_file(lesson_wheel)}",
             f"cells {hashlib.sha256(json.dumps(cells).encode()).hexdigest()}",
             f"script:{SCRIPT.name} {sha256_file(SCRIPT)}", f"trace:{TRACE.name} {sha256_file(TRACE)}",
             f"env:{PYTHON_ENV_MODULE.name} {sha256_file(PYTHON_ENV_MODULE)}",
             f"seams:{PYODIDE_SEAMS_MODULE.name} {sha256_file(PYODIDE_SEAMS_MODULE)}", f"tag {TAG}", f"node {node_version}"]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def trace(dist: Path, boot_packages: list[str], lesson_wheel: Path, cells: list[tuple[str, str, bool]],
          cache_dir: Path, log=print) -> dict:
    """Run a lesson's runnable cells (*cells*: [(id, code, needs_page)] in page order) under Node in Pyodide
    with the whole library of *dist* mounted; return the report (made once per key): ``entries``, the standard
    library's entries the page imports before the first outputs; ``ran``, the cells that ran; ``stoppedAt``,
    the cell where recording stopped; ``failed``, None or {id, error} for the cell that failed (its traceback)."""
    try:
        node, node_version = node_and_version()
    except NodeError as exc:
        raise TraceError(f"{SCRIPT.name}: {exc}; install Node.js 18+") from exc
    cells = [[cell_id, code, bool(needs_page)] for cell_id, code, needs_page in cells]
    out = Path(cache_dir) / "stdlib-trace" / f"{trace_key(dist, boot_packages, lesson_wheel, cells, node_version)}.json"
    if not out.is_file():
        log(f"stdlib: tracing what the boot and the first cells import, and running the cells in page order, "
            f"with Pyodide under Node ({out.stem})")
        with tempfile.TemporaryDirectory() as tmp, atomic_target(out) as tmp_out:
            cells_file = Path(tmp) / "cells.json"
            cells_file.write_text(json.dumps(cells), encoding="utf-8")
            command = [node, str(SCRIPT), str(dist), str(lesson_wheel), str(cells_file), str(tmp_out),
                       ",".join(boot_packages)]
            try:
                result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired as exc:
                raise TraceError(f"{SCRIPT.name} did not finish within {TIMEOUT_S} s") from exc
            if result.returncode != 0:
                raise TraceError(f"{SCRIPT.name} exited with {result.returncode}: {tail(result.stderr, 3)}")
        report = json.loads(out.read_text(encoding="utf-8"))
        page_only = [cell_id for cell_id, _, needs_page in cells if needs_page]
        needs = "needs" if len(page_only) == 1 else "need"
        log(f"stdlib: {len(report['entries'])} files imported before the first outputs; {len(report['ran'])} of "
            f"{len(cells)} cells ran in page order" + (f" ({len(page_only)} {needs} the page)" if page_only else ""))
    return json.loads(out.read_text(encoding="utf-8"))
