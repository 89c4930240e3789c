"""Every widget's one home: ``static/js/page/widgets/<name>/spec.yml``, read and checked here.

A spec says everything the build and the page need to know of its widget (docs/authoring.md, "Adding a widget"):

    label: Attention view             # the section's name (aria-label), and the loading line's
    note: a linked view of ...        # what the notebook says in the widget's place
    module: view.js                   # its JavaScript module, in its folder, and the function that makes it:
    export: createViewWidget          #   export(ctx) -> {receive?(payload, {note, sender}), ...}
    preload: true                     # on a first screen: bundled with widget-loader.js, not loaded on demand
    style: null                       # its own stylesheet in its folder (widget.css), bundled into the page's
    receives: attention               # the show_* payloads it shows (RECEIVES), or null
    prerender: lessonpy.course.attention.widget_payloads:prerender_view   # (options, target) -> first payload
    check: lessonpy.course.attention.widget_payloads:check_view           # (options, given) -> [(key, message)]
    calls: {explore: lessonpy.course.attention.widget_payloads:explore}   # what the page calls in Python
    build_options: null               # (site) -> options the build adds, which a fence cannot set
    limits: {T: [2, 64]}              # the ranges its fences and its Python calls are held to
    options:                          # what a fence may set: kind, default, range (or a limit's name), choices
      T: {kind: int, default: 6, range: T}

``like: OTHER`` takes every part but ``label`` and ``note`` from the widget OTHER (a module path stays relative
to OTHER's folder); its own options come after OTHER's. From the specs come: the fences' checks
(widget_fence.py), the notebook's notes (notebook.py), ``WIDGET_LIMITS`` in Python
(``py/lessonpy/runtime/widget_limits.json``) and the page (``limits.js``), and the page's name -> module map
(``static/js/page/widgets/index.js``), all written by :func:`widget_limits_json` and :func:`widgets_index_js`
(page_copies.py).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from ..project import ROOT, lessonpy
from .lessons import LessonError

#: The widgets' folders, one per widget, beside the page's modules that load them.
WIDGETS_DIR = ROOT / "static" / "js" / "page" / "widgets"
SPEC = "spec.yml"

#: Every part of a spec, and whether a ``like`` spec may leave it to the one it is like.
PARTS = {"label": False, "note": False, "module": True, "export": True, "preload": True, "style": True, "receives": True,
         "prerender": True, "check": True, "calls": True, "build_options": True, "limits": True, "options": True}
#: The show_* payloads a widget may receive, by the payload's ``view`` (lessonpy.maths.show, lessonpy.maths.lookup).
RECEIVES = ("attention", "lookup", "residual-stream")
#: Option kinds, with the keys each may have besides ``kind`` and ``default``.
KINDS = {"text": (), "bool": (), "tokens": (), "int": ("range",), "float": ("range",),
         "seed": (),  # a NumPy seed: a whole number from 0 to 2**31 - 1
         "power-of-two": ("range",),  # a power of two within the range
         "choice": ("choices", "choices_from"),
         "cell": ()}  # the id of a runnable cell of the lesson
SEED_RANGE = (0, 2**31 - 1)


class SpecError(LessonError):
    """A problem in a widget's spec.yml, reported as ``path:line: message``."""


@dataclass(frozen=True)
class Option:
    kind: str
    default: object = None
    lo: object = None  # range, or for a choice the list of choices
    hi: object = None


@dataclass(frozen=True)
class WidgetSpec:
    """One widget's spec, with ``like`` resolved and its Python names imported."""

    name: str
    path: Path  # its spec.yml
    label: str
    note: str
    module: str  # path from WIDGETS_DIR, e.g. "attention-view/view.js"
    export: str
    preload: bool
    style: str | None  # path from WIDGETS_DIR of its own stylesheet, e.g. "heads/widget.css"
    receives: str | None
    prerender: str  # "module:function"
    check: str | None
    build_options: str | None  # "module:function"
    calls: dict[str, str]  # {name: "module:function"}
    limits: dict[str, tuple]  # {key: (lo, hi)}
    own_limits: bool  # the limits are this spec's (not a ``like`` spec's): WIDGET_LIMITS has them under its name
    options: dict[str, Option]


# ---------------------------------------------------------------------------- reading

class _Spec:
    """One spec.yml as written, with the line of every key for error messages."""

    def __init__(self, path: Path):
        self.path = path
        self.lines: dict[tuple, int] = {}
        text = path.read_text(encoding="utf-8")
        try:
            self._map(yaml.compose(text, Loader=yaml.SafeLoader), ())
            self.data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise SpecError(path, mark.line + 1 if mark else 1, f"not valid YAML: {getattr(exc, 'problem', None) or exc}")
        if not isinstance(self.data, dict):
            self.fail("a widget's spec is YAML 'key: value' lines (docs/authoring.md, \"Adding a widget\")")

    def _map(self, node, path: tuple) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                self.lines[path + (key.value,)] = key.start_mark.line + 1
                self._map(value, path + (key.value,))

    def fail(self, message: str, path: tuple = ()):
        raise SpecError(self.path, self.lines.get(path, 1), message)


def _python(spec: _Spec, ref, path: tuple, what: str):
    """The Python object a ``module:name`` names (lessonpy's, imported in CPython from py/)."""
    if not isinstance(ref, str) or ref.count(":") != 1 or not ref.startswith("lessonpy."):
        spec.fail(f"{what} must name a lessonpy function or attribute as module:name, got {ref!r}", path)
    try:
        return python(ref)
    except (ImportError, AttributeError) as exc:
        spec.fail(f"{what} {ref!r} does not exist: {exc}", path)


def _limits(spec: _Spec, raw) -> dict[str, tuple]:
    if not isinstance(raw, dict):
        spec.fail("limits must be {key: [lowest, highest]} ({} for none)", ("limits",))
    for key, r in raw.items():
        if not (isinstance(r, list) and len(r) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                             for x in r) and r[0] <= r[1]):
            spec.fail(f"limit {key} must be [lowest, highest], got {r!r}", ("limits", key))
    return {key: tuple(r) for key, r in raw.items()}


def _option(spec: _Spec, key: str, raw, limits: dict[str, tuple]) -> Option:
    where = ("options", key)
    if not isinstance(raw, dict) or raw.get("kind") not in KINDS:
        spec.fail(f"option {key} needs a kind, one of {', '.join(KINDS)}", where)
    kind = raw["kind"]
    extra = set(raw) - {"kind", "default", *KINDS[kind]}
    if extra:
        spec.fail(f"option {key} ({kind}) has no {sorted(extra)[0]!r}", where + (sorted(extra)[0],))
    default = raw.get("default")
    if kind == "seed":
        return Option("int", default, *SEED_RANGE)
    if kind == "choice":
        choices = list(raw.get("choices") or [])
        if "choices_from" in raw:
            choices += list(_python(spec, raw["choices_from"], where + ("choices_from",), f"option {key}'s choices_from"))
        if not choices:
            spec.fail(f"option {key} needs choices, choices_from or both", where)
        return Option("choice", default, choices)
    if kind not in ("int", "float", "power-of-two"):
        return Option(kind, default)
    r = raw.get("range")
    if isinstance(r, str):  # the name of one of the widget's limits: one number, one home
        if r not in limits:
            spec.fail(f"option {key}'s range names no limit of this widget: {r!r} (limits: {', '.join(limits)})",
                      where + ("range",))
        r = list(limits[r])
    if not (isinstance(r, list) and len(r) == 2):
        spec.fail(f"option {key} needs a range: [lowest, highest] (null: no bound) or a limit's name", where)
    if kind == "power-of-two":
        return Option("choice", default, [2**i for i in range(math.ceil(math.log2(r[0])), int(math.log2(r[1])) + 1)])
    return Option(kind, default, *r)


def _read(folder: Path) -> dict[str, _Spec]:
    specs = {}
    for path in sorted(folder.glob(f"*/{SPEC}")):
        specs[path.parent.name] = _Spec(path)
    return specs


def _resolve(name: str, raw: dict[str, _Spec], folder: Path) -> WidgetSpec:
    spec = raw[name]
    data = dict(spec.data)
    for key in data:
        if key not in PARTS and key != "like":
            spec.fail(f"unknown part {key!r}; a spec has {', '.join(PARTS)} (and like)", (key,))
    base = None
    if "like" in data:
        other = data.pop("like")
        if other not in raw or other == name or "like" in raw[other].data:
            spec.fail(f"like must name another widget's folder that is not itself like one, got {other!r}", ("like",))
        base = _resolve(other, raw, folder)
    for part, inherited in PARTS.items():
        if part not in data and not (base and inherited):
            spec.fail(f"the spec has no {part!r}: every spec states {', '.join(PARTS)} "
                      f"(null or {{}} for none)", ())
    for part in ("label", "note", "module", "export"):
        if part in data and (not isinstance(data[part], str) or not data[part].strip()):
            spec.fail(f"{part} must be non-empty text", (part,))
    if data.get("receives", base.receives if base else None) not in (*RECEIVES, None):
        spec.fail(f"receives must be one of {', '.join(RECEIVES)} or null, got {data['receives']!r}", ("receives",))
    limits = _limits(spec, data["limits"]) if "limits" in data else base.limits
    if not isinstance(data.get("options", {}), dict) or not isinstance(data.get("calls", {}), dict):
        spec.fail("options and calls are 'key: value' mappings ({} for none)", ("options" if "options" in data else "calls",))
    options = {**(base.options if base else {}),
               **{key: _option(spec, key, value, limits) for key, value in (data.get("options") or {}).items()}}
    if "preload" in data and not isinstance(data["preload"], bool):
        spec.fail(f"preload must be true or false, got {data['preload']!r}", ("preload",))
    for key in ("prerender", "check", "build_options"):  # every widget has a first picture; the rest may be null
        if key in data and (key == "prerender" or data[key] is not None):
            _python(spec, data[key], (key,), key)
    for key, ref in (data.get("calls") or {}).items():
        _python(spec, ref, ("calls", key), f"call {key}")
    module = f"{name}/{data['module']}" if "module" in data else base.module
    if not (folder / module).is_file():
        spec.fail(f"module {module!r} is not a file in {folder}", ("module",) if "module" in data else ())
    style = (f"{name}/{data['style']}" if data["style"] else None) if "style" in data else base.style
    if style and not (folder / style).is_file():
        spec.fail(f"style {style!r} is not a file in {folder}", ("style",))
    take = lambda part: data[part] if part in data else getattr(base, part)  # noqa: E731
    return WidgetSpec(name=name, path=spec.path, label=data["label"], note=" ".join(data["note"].split()),
                      module=module, export=take("export"), preload=bool(take("preload")), style=style, receives=take("receives"),
                      prerender=take("prerender"), check=take("check"), build_options=take("build_options"), calls=dict(take("calls") or {}),
                      limits=limits, own_limits="limits" in data, options=options)


def load_specs(folder: Path = WIDGETS_DIR) -> dict[str, WidgetSpec]:
    """Every widget's spec under *folder*, by name (its folder's), in name order."""
    raw = _read(folder)
    return {name: _resolve(name, raw, folder) for name in raw}


@cache
def specs() -> dict[str, WidgetSpec]:
    """The project's widgets (read once per process)."""
    return load_specs()


def python(ref: str):
    """The lessonpy function or attribute a spec names, ``lessonpy.module:name`` (imported from py/)."""
    module, attr = ref.split(":")
    return getattr(lessonpy(module.removeprefix("lessonpy.")), attr)


def prerender(name: str, options: dict | None = None, target: str | None = None, widgets: dict | None = None):
    """Widget *name*'s first payload with validated *options*, from the Python its spec names."""
    known = widgets or specs()
    if name not in known:
        raise ValueError(f"unknown widget {name!r}; known: {', '.join(known)}")
    return python(known[name].prerender)(dict(options or {}), target=target)


def stylesheets(widgets: dict[str, WidgetSpec] | None = None) -> list[str]:
    """The widgets' own stylesheets, paths from static/ (e.g. js/page/widgets/heads/widget.css), in name order: the
    build bundles them into the page's one stylesheet right after widgets.css, which has what they share."""
    base = WIDGETS_DIR.relative_to(ROOT / "static").as_posix()
    return list(dict.fromkeys(f"{base}/{w.style}" for w in (widgets or specs()).values() if w.style))


# ---------------------------------------------------------------------------- the generated copies

def widget_limits(widgets: dict[str, WidgetSpec] | None = None) -> dict[str, dict[str, list]]:
    """Each widget's own limits, by name ({} for none; a ``like`` widget's are its model's)."""
    return {name: {key: list(r) for key, r in w.limits.items()}
            for name, w in (widgets or specs()).items() if w.own_limits and w.limits}


def widget_limits_json(widgets: dict[str, WidgetSpec] | None = None) -> str:
    """The text of py/lessonpy/runtime/widget_limits.json, which lessonpy.runtime.limits reads as WIDGET_LIMITS."""
    rows = [f"  {json.dumps(name)}: {json.dumps(ranges)}" for name, ranges in widget_limits(widgets).items()]
    return "{\n" + ",\n".join(rows) + "\n}\n"


def widgets_index_js(widgets: dict[str, WidgetSpec] | None = None) -> str:
    """The text of static/js/page/widgets/index.js: each widget's module (a literal import(), for esbuild to split
    it off; a static import for a preloaded one), what it receives and the Python calls it makes."""
    widgets = widgets or specs()
    eager = sorted({w.module for w in widgets.values() if w.preload})
    alias = {module: f"preloaded{i}" for i, module in enumerate(eager)}
    lines = ["// Generated from static/js/page/widgets/*/spec.yml (python3 -m sitebuild.pages.page_copies); do not edit.",
             "// widget-loader.js starts each widget with load(); a preloaded one comes with it (a static import).",
             *(f'import * as {alias[m]} from "./{m}";' for m in eager),
             "", "export const WIDGETS = Object.freeze({"]
    for name, w in widgets.items():
        module = f"{alias[w.module]}" if w.preload else f'(await import("./{w.module}"))'
        calls = {key: ref.split(":") for key, ref in w.calls.items()}
        lines.append(f"  {json.dumps(name)}: {{ load: async () => {module}.{w.export}, "
                     f"receives: {json.dumps(w.receives)}, calls: {json.dumps(calls)} }},")
    return "\n".join(lines + ["});", ""])
