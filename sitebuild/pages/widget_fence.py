"""The ```widget fence: interactive attention pictures, pre-rendered at build time.

    ```widget NAME id=ID
    key: value        # optional YAML options, validated against the widget's spec
    ```

NAME is the name of a widget's folder, static/js/page/widgets/NAME/, whose spec.yml says its options, their kinds,
defaults and ranges, and the Python that checks options together and computes its first payload in CPython
(widget_specs.py; docs/authoring.md, "Adding a widget"). The build writes
the lesson's payloads into one JSON file beside its page (build.py, ``WIDGET_DATA``), which
static/js/page/widget-loader.js fetches when the first widget comes near the screen, so the picture is there
before Python has loaded, and replaces it with what Python computes.

Arrays are written as ``{shape, dtype, data: [numbers]}``; a non-finite value (a masked
score is -inf) is written as the string "-inf", "inf" or "nan", which JSON has no number for.

Routing of show_attention (done by widget-loader.js): ``show_attention(..., target=ID)`` draws in
the widget with that id of those that receive it (their specs' ``receives: attention``); without a target it draws
in the first such widget after the cell that ran, else the last one before it; ``show_lookup`` reaches the
widgets that receive ``lookup`` by the same rule, and ``show_residual_stream`` those that receive ``residual-stream``. Each widget's section says
how many cells come before it (``data-cells-before``) and the page config lists the cells in
order, so the page routes without looking at where elements stand.
"""

from __future__ import annotations

import html

import numpy as np

from .lessons import CELL_ID_PATTERN, LessonError
from .practice import Block
from . import widget_specs
from .widget_specs import Option, python

# ---------------------------------------------------------------------------- options

def parse_widget(content: str, options: dict[str, str], env: dict) -> dict:
    """Validate a widget fence against its spec; return {name, id, options} with every default filled in."""
    flags = env.get("flags") or []  # the bare words after ```widget: the first is the name
    name = flags[0] if flags else None
    path, line = env.get("path", "?"), env.get("line", 1)
    widgets = widget_specs.specs()
    known = ", ".join(widgets)
    if name is None:
        raise LessonError(path, line, f"a widget needs a name: ```widget NAME id=ID, with NAME one of {known}")
    if name not in widgets:
        raise LessonError(path, line, f"unknown widget {name!r}; known widgets: {known}")
    b = Block("widget", content if content.strip() else "{}", options, env)
    what = f"widget {name} {b.id!r}"
    spec = widgets[name]
    b.check_keys(b.data, {k: False for k in spec.options}, (), what)
    values = {key: _value(b, what, key, b.data[key], option) if key in b.data else option.default
              for key, option in spec.options.items()}
    for key, message in python(spec.check)(values, set(b.data)) if spec.check else ():
        b.error(f"{what}: {message}", (key,))
    return {"name": name, "id": b.id, "options": values}


def _value(b: Block, what: str, key: str, value, option: Option):
    """One option's value, checked against its kind and range."""
    def fail(msg):
        b.error(f"{what}: {key} {msg}", (key,))
    kind, lo, hi = option.kind, option.lo, option.hi
    if kind == "bool":
        if not isinstance(value, bool):
            fail(f"must be true or false, got {value!r}")
        return value
    if kind in ("text", "cell"):
        if not isinstance(value, str) or not value.strip():
            fail("must be non-empty text")
        if kind == "cell" and not CELL_ID_PATTERN.match(value):
            fail(f"must be the id of a runnable cell, got {value!r}")
        return value
    if kind == "tokens":
        if not isinstance(value, list) or not value or not all(isinstance(t, (str, int, float)) for t in value):
            fail("must be a list of words, e.g. [the, cat, sat]")
        return [str(t) for t in value]
    if kind == "choice":
        if isinstance(value, bool) or value not in lo:
            fail(f"must be one of {', '.join(map(str, lo))}, got {value!r}")
        return value
    number = (int,) if kind == "int" else (int, float)
    if isinstance(value, bool) or not isinstance(value, number):
        fail(f"must be a {'whole ' if kind == 'int' else ''}number, got {value!r}")
    if hi is None and value < lo:
        fail(f"must be at least {lo}, got {value}")
    if hi is not None and not lo <= value <= hi:
        fail(f"must be between {lo} and {hi}, got {value}")
    return value


# ---------------------------------------------------------------------------- HTML

def encode_array(a) -> dict:
    """A numpy array as {shape, dtype, data: [numbers]}, float32 values in their shortest form."""
    a = np.asarray(a, dtype=np.float32)
    data = [float(str(v)) if np.isfinite(v) else str(v) for v in a.ravel()]  # "-inf", "inf", "nan"
    return {"shape": list(a.shape), "dtype": "float32", "data": data}


def encode_payload(payload):
    """The payload with every numpy array encoded for JSON (and numpy scalars as numbers)."""
    if isinstance(payload, np.ndarray):
        return encode_array(payload)
    if isinstance(payload, dict):
        return {str(k): encode_payload(v) for k, v in payload.items()}
    if isinstance(payload, (list, tuple)):
        return [encode_payload(v) for v in payload]
    if isinstance(payload, np.generic):
        return payload.item()
    return payload


def render_widget(content: str, options: dict[str, str], env: dict) -> str:
    """HTML of a widget: a labelled region, where widget-loader.js draws the pre-rendered payload that this puts in
    ``env["widget_data"]`` under the widget's id."""
    spec = parse_widget(content, options, env)
    try:
        payload = widget_specs.prerender(spec["name"], spec["options"], target=spec["id"])
    except Exception as exc:  # a combination the options check let through
        raise LessonError(env.get("path", "?"), env.get("line", 1), f"widget {spec['id']!r}: {exc}") from None
    known = widget_specs.specs()[spec["name"]]
    if known.build_options:  # the build's word, not the author's (a fence cannot set them): from the site it builds
        spec["options"].update(python(known.build_options)(env.get("site", {})))
    # the data goes in the lesson's widget file (render_lesson), not into the page's HTML
    env.setdefault("widget_data", {})[spec["id"]] = {**spec, "initial": encode_payload(payload)}
    name, wid = html.escape(spec["name"]), html.escape(spec["id"])
    kind = known.label  # what the widget is; the title says what this one shows
    label = html.escape(spec["options"].get("title") or kind)
    return (
        f'<section class="widget widget-{name}" data-widget="{name}" data-widget-id="{wid}" id="widget-{wid}" '
        f'data-cells-before="{env.get("cell_index", 0)}" aria-label="{label}">\n'
        f'<p class="widget-loading">{html.escape(kind)}: the picture appears when the page\'s '
        "scripts have loaded.</p>\n"
        "</section>\n"
    )

