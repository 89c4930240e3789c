"""The code's layers hold: each folder imports only what its layer may use.

static/js/ is split by who runs the code. `page/` is the lesson page's features, `runtime/` the page's
handle on Python (start, restart, replay, preload, offline), `worker/` what runs only in Pyodide's worker,
`shared/` what both threads and the build's .mjs steps use (protocol, limits, Python's environment).
The page and the worker talk only by messages, so neither imports the other's code.
sitebuild/ is split the same way: `pages/` (lessons to HTML) never reaches into `startup/` (Pyodide's
preparation), nor the other way round; build.py is where the two meet.
py/lessonpy/ is in rooms, each importing only the rooms below it: `runtime/` (the page's glue) imports only
itself; `maths/` itself and `runtime`; `models/` itself and `maths`, never `runtime` (what it needs of the page
is passed in); a lesson's folder `course/<slug>/` itself, `maths` and `models`. No module imports another in a
circle, and no lesson's numbers module (build time, beside its lesson) is in the wheel.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "static" / "js"

#: Which folders of static/js/ each folder's modules may import from (besides the vendored bundle).
JS_LAYERS = {
    "page": {"page", "runtime", "shared"},
    "runtime": {"runtime", "shared"},
    "worker": {"worker", "shared"},
    "shared": {"shared"},
}
#: At most this many files at static/js/'s top level: everything else lives in a layer's folder.
TOP_LEVEL_FILES = 5

# Literal module specifiers: static imports and re-exports, import("…"), new URL("….js", import.meta.url).
SPECIFIER = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}/[^"']+)\1"""
                       r"""|new\s+URL\(\s*(["'])(\.{1,2}/[^"']+\.m?js)\3""")


def js_imports(path: Path) -> list[Path]:
    """The files of the tree that *path* imports by a relative specifier (comments left out)."""
    text = re.sub(r"/\*.*?\*/|(?<![:\"'])//[^\n]*", "", path.read_text(encoding="utf-8"), flags=re.S)
    return [(path.parent / (spec or url)).resolve() for _, spec, _, url in SPECIFIER.findall(text)]


def layer_of(path: Path) -> str | None:
    """The static/js/ folder *path* is in, 'vendor' for the build's CodeMirror bundle, None outside."""
    try:
        parts = path.resolve().relative_to(JS).parts
    except ValueError:
        return "vendor" if path.resolve().parent == (JS.parent / "vendor").resolve() else None
    return parts[0] if len(parts) > 1 else "<top>"


def js_modules() -> list[Path]:
    return sorted(p for p in JS.rglob("*") if p.suffix in (".js", ".mjs"))


def test_static_js_is_in_layer_folders():
    top = sorted(p.name for p in JS.iterdir() if p.is_file())
    assert len(top) <= TOP_LEVEL_FILES, top
    folders = {p.name for p in JS.iterdir() if p.is_dir()}
    assert folders == set(JS_LAYERS), f"static/js/ folders {sorted(folders)} are not the layers {sorted(JS_LAYERS)}"


@pytest.mark.parametrize("module", js_modules(), ids=lambda p: p.relative_to(JS).as_posix())
def test_js_module_imports_only_its_layers(module):
    own = layer_of(module)
    allowed = JS_LAYERS[own] | {"vendor"}
    for target in js_imports(module):
        assert target.exists() or layer_of(target) == "vendor", f"{module.relative_to(ROOT)} imports {target}, which is not there"
        assert layer_of(target) in allowed, (
            f"{module.relative_to(ROOT)} ({own}) imports {target.relative_to(ROOT)} ({layer_of(target)}): "
            f"{own}/ may import only {sorted(allowed)}")


def test_the_import_reader_sees_imports():
    """The check above is not empty: the reader finds the imports and would flag a crossing."""
    page = js_imports(JS / "page" / "page.js")
    assert JS / "runtime" / "page-runtime.js" in page and JS / "page" / "cells.js" in page
    assert JS / "shared" / "protocol.js" in js_imports(JS / "worker" / "worker.js")
    crossing = JS / "worker" / "snapshot.js"
    assert layer_of(crossing) not in JS_LAYERS["page"] | JS_LAYERS["runtime"]


def test_build_steps_share_only_shared_js():
    """The build's .mjs steps run the page's Python environment: they may import static/js/shared/ only."""
    for step in sorted((ROOT / "sitebuild").rglob("*.mjs")):
        for target in js_imports(step):
            if target.is_relative_to(JS):
                assert layer_of(target) == "shared", f"{step.relative_to(ROOT)} imports {target.relative_to(ROOT)}"


def python_imports(path: Path, package: str) -> set[str]:
    """The absolute names of the modules *path* (in *package*) imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("wing, other", [("pages", "startup"), ("startup", "pages")])
def test_sitebuild_wings_stay_apart(wing, other):
    folder = ROOT / "sitebuild" / wing
    modules = sorted(folder.glob("*.py"))
    assert modules
    for module in modules:
        crossing = sorted(n for n in python_imports(module, f"sitebuild.{wing}") if n.startswith(f"sitebuild.{other}"))
        assert not crossing, f"{module.relative_to(ROOT)} imports {crossing}: sitebuild/{wing}/ never uses {other}/"


#: sitebuild/'s folders of one job each; the modules at its top level are shared by them (compress, files, …).
SITEBUILD_WINGS = ("pages", "startup", "realheads")


@pytest.mark.parametrize("module", sorted((ROOT / "sitebuild").glob("*.py")), ids=lambda p: p.name)
def test_sitebuild_shared_modules_use_no_wing(module):
    """compress is shared (the site's files, Pyodide's and the snapshot's sidecars): like files and the rest
    of sitebuild/'s top level, it reaches into no wing, so either wing may use it."""
    crossing = sorted(n for n in python_imports(module, "sitebuild")
                      if n.split(".")[:2] in [["sitebuild", wing] for wing in SITEBUILD_WINGS])
    assert not crossing, f"{module.relative_to(ROOT)} imports {crossing}: sitebuild/'s shared modules use no wing"


def test_python_import_reader_resolves_relative_imports():
    names = python_imports(ROOT / "sitebuild" / "startup" / "snapshot.py", "sitebuild.startup")
    assert "sitebuild.files" in names and "sitebuild.startup.snapshot_image" in names


# ---------------------------------------------------------------------------- py/lessonpy's rooms

PY = ROOT / "py" / "lessonpy"
#: What each room's modules may import of lessonpy, besides their own room. A lesson's folder, course.<slug>,
#: may import its own folder, never another lesson's; the course's root (the checks' registry) its lessons.
PY_ROOMS = {
    "runtime": set(),
    "maths": {"runtime"},
    "models": {"maths"},
    "course": {"course.*"},
    "course.*": {"maths", "models"},
}
#: Read by every room: the limits the page shares (a leaf: it imports nothing of lessonpy).
EVERY_ROOM_READS = {"lessonpy.runtime.limits"}


def lessonpy_modules() -> dict[str, Path]:
    """Every module of py/lessonpy by its dotted name (a package by its own name)."""
    modules = {}
    for path in sorted(PY.rglob("*.py")):
        parts = ("lessonpy", *path.relative_to(PY).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def room_of(module: str) -> str:
    """``runtime``, ``maths``, ``models``, ``course`` (its root) or ``course.<slug>``."""
    parts = module.split(".")[1:]
    if parts[:1] == ["course"] and len(parts) > 2 or parts[:1] == ["course"] and len(parts) == 2 \
            and (PY / "course" / parts[1]).is_dir():
        return f"course.{parts[1]}"
    return parts[0] if parts else ""


def lessonpy_graph() -> dict[str, set[str]]:
    """Each module of lessonpy and the modules of lessonpy it imports (a name imported from a package that is
    no module of it counts as the package)."""
    modules = lessonpy_modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for imported in python_imports(path, package):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and imported != "lessonpy":
                targets.add(imported)
        graph[name] = targets
    return graph


def may_import(room: str, target_room: str) -> bool:
    if target_room == room:
        return True
    allowed = PY_ROOMS["course.*" if room.startswith("course.") else room]
    return target_room in allowed or ("course.*" in allowed and target_room.startswith("course."))


def test_lessonpy_is_in_rooms():
    rooms = {room_of(name) for name in lessonpy_modules()} - {""}
    assert {"runtime", "maths", "models", "course", "course.attention", "course.causal_mask"} <= rooms
    assert {r if not r.startswith("course.") else "course.*" for r in rooms} <= set(PY_ROOMS)
    assert not sorted(PY.glob("*.py"))[1:], "py/lessonpy/ holds only __init__.py: every module lives in a room"
    for room in ("runtime", "maths", "models", "course", "course/attention", "course/causal_mask"):
        assert ast.get_docstring(ast.parse((PY / room / "__init__.py").read_text(encoding="utf-8"))), \
            f"py/lessonpy/{room}/__init__.py says what lives there and what it may import"


def test_lessonpy_rooms_import_only_the_rooms_below():
    graph = lessonpy_graph()
    wrong = sorted(f"{m} imports {t}" for m, targets in graph.items() for t in targets
                   if t not in EVERY_ROOM_READS and not may_import(room_of(m), room_of(t)))
    assert not wrong, "imports that run back up: " + "; ".join(wrong)
    for leaf in EVERY_ROOM_READS:
        assert not graph[leaf], f"{leaf} is read by every room, so it imports nothing of lessonpy"


def test_lessonpy_imports_no_circle():
    graph, state, path = lessonpy_graph(), {}, []

    def visit(module):
        state[module] = "open"
        path.append(module)
        for target in sorted(graph[module]):
            assert state.get(target) != "open", "an import circle: " + " -> ".join(path[path.index(target):] + [target])
            if target not in state:
                visit(target)
        path.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_room_rules_catch_what_they_forbid():
    assert room_of("lessonpy.models.live") == "models" and room_of("lessonpy.course.checks") == "course"
    assert room_of("lessonpy.course.attention.exercises") == "course.attention"
    assert not may_import("models", "runtime") and not may_import("runtime", "course.attention")
    assert not may_import("course.attention", "course.causal_mask") and not may_import("course.attention", "runtime")
    assert may_import("course", "course.causal_mask") and may_import("maths", "runtime")


def test_numbers_modules_stay_beside_their_lessons():
    """A lesson's numbers are computed at build time: no numbers module ships in the wheel, and nothing the
    browser loads imports one."""
    assert not [p for p in PY.rglob("*numbers*.py")]
    imported = {n for path in PY.rglob("*.py") for n in python_imports(path, "lessonpy")}
    assert not [n for n in imported if n.split(".")[0].endswith("_numbers")]
    for lesson in sorted((ROOT / "lessons").glob("*.md")):
        front = lesson.read_text(encoding="utf-8").split("\n---", 1)[0]
        named = re.search(r"^numbers:\s*(\S+)", front, re.M)
        if named:
            assert (lesson.parent / f"{named.group(1)}.py").is_file(), f"{lesson.name}'s numbers module is beside it"
