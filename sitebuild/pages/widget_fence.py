"""The ```widget fence: interactive attention pictures, pre-rendered at build time.

    ```widget NAME id=ID
    key: value        # optional YAML options, validated (see OPTIONS)
    ```

NAME is one of ``attention-view``, ``step-through``, ``dk-explorer``, ``heads``, ``real-heads``, ``lookup-view``. The build
computes each widget's first payload in CPython with ``lessonpy.course.attention.widget_payloads.prerender``; the build writes
the lesson's payloads into one JSON file beside its page (build.py, ``WIDGET_DATA``), which
static/js/page/widget-loader.js fetches when the first widget comes near the screen, so the picture is there
before Python has loaded, and replaces it with what Python computes.

Arrays are written as ``{shape, dtype, data: [numbers]}``; a non-finite value (a masked
score is -inf) is written as the string "-inf", "inf" or "nan", which JSON has no number for.

Routing of show_attention (done by widget-loader.js): ``show_attention(..., target=ID)`` draws in
the attention-view or step-through with that id; without a target it draws in the first
such widget after the cell that ran, else the last one before it; ``show_lookup`` reaches the
lookup-view by the same rule. Each widget's section says
how many cells come before it (``data-cells-before``) and the page config lists the cells in
order, so the page routes without looking at where elements stand.
"""

from __future__ import annotations

import html
import math

import numpy as np

from .practice import Block
from ..project import lessonpy
from .lessons import CELL_ID_PATTERN, LessonError

LIMITS = lessonpy("runtime.limits").WIDGET_LIMITS  # the same ranges the page's calls are held to


def _powers_of_two(lo, hi):
    return [2 ** i for i in range(int(math.log2(lo)), int(math.log2(hi)) + 1)]


# Options per widget: key -> (kind, default, lo, hi). kind: int, float, bool, text, tokens, choice.
_V, _E, _H = LIMITS["view"], LIMITS["dk-explorer"], LIMITS["heads"]
_VIEW = {"title": ("text", None, None, None), "T": ("int", 6, *_V["T"]), "d_k": ("int", 8, *_V["d_k"]),
         "seed": ("int", 0, 0, 2**31 - 1), "tokens": ("tokens", None, None, None),
         "row": ("int", None, 0, _V["T"][1] - 1),
         # the seeded example with a causal mask (-inf above the diagonal, drawn grey), as a masked cell shows it
         "causal": ("bool", False, None, None),
         # the picture drawn before Python runs: a seeded random example, the lesson's hand-built one, or
         # the trained head a "your attention on a real head" cell reproduces (from the committed data), or
         # the head the "train-head" cell trains
         "example": ("choice", "seeded", ["seeded", "cat", "trained-head", *lessonpy("models.realheads").CELL_HEADS],
                     None)}
OPTIONS: dict[str, dict[str, tuple]] = {
    "attention-view": _VIEW,
    "step-through": {**_VIEW, "interval": ("int", 700, 100, 5000)},
    "dk-explorer": {"title": ("text", None, None, None), "T": ("int", 8, *_E["T"]),
                    "d_k": ("choice", 64, _powers_of_two(*_E["d_k"]), None), "scale": ("bool", True, None, None),
                    "temperature": ("float", 1.0, *_E["temperature"]), "causal": ("bool", False, None, None),
                    # the causal checkbox's words (a lesson before the mask's own can say it comes next)
                    "causal_label": ("text", "Causal mask: a token sees only itself and earlier tokens", None, None),
                    "seed": ("int", 0, 0, 2**31 - 1)},
    "heads": {"title": ("text", None, None, None), "C": ("int", 48, *_H["C"]), "T": ("int", 8, *_H["T"]),
              "heads": ("int", 4, *_H["H"]), "seed": ("int", 0, 0, 2**31 - 1)},
    # the model, sentence and featured head (by its job) shown first; the build checks they exist
    "real-heads": {"title": ("text", None, None, None),
                   "model": ("choice", "minilm", list(lessonpy("models.realheads").MODELS), None),
                   "sentence": ("int", 0, 0, 99), "head": ("text", None, None, None),
                   # the id of the cell holding MiniLM's forward pass: once the reader runs it, the live
                   # sentence uses the forward it defines (lessonpy.models.live.heads)
                   "forward": ("text", None, None, None),
                   # the live MiniLM panel (the reader's sentence, changed heads) and SmolLM2's ablation view: a
                   # lesson that needs only the grid of patterns turns them off
                   "live": ("bool", True, None, None), "ablation": ("bool", True, None, None)},
    # the temperature the slider starts at (it steps along lessonpy.maths.lookup's grid, so the nearest grid point)
    "lookup-view": {"title": ("text", None, None, None),
                    "temperature": ("float", 1.0, *LIMITS["lookup-view"]["temperature"])},
}

LABELS = {
    "attention-view": "Attention view",
    "step-through": "Step through attention",
    "dk-explorer": "Explore d_k, scaling, temperature and the causal mask",
    "heads": "Attention heads",
    "real-heads": "Every head of a trained model",
    "lookup-view": "Soft dictionary lookup",
}


# ---------------------------------------------------------------------------- options

def parse_widget(content: str, options: dict[str, str], env: dict) -> dict:
    """Validate a widget fence; return {name, id, options} with every default filled in."""
    flags = env.get("flags") or []  # the bare words after ```widget: the first is the name
    name = flags[0] if flags else None
    path, line = env.get("path", "?"), env.get("line", 1)
    known = ", ".join(OPTIONS)
    if name is None:
        raise LessonError(path, line, f"a widget needs a name: ```widget NAME id=ID, with NAME one of {known}")
    if name not in OPTIONS:
        raise LessonError(path, line, f"unknown widget {name!r}; known widgets: {known}")
    b = Block("widget", content if content.strip() else "{}", options, env)
    what = f"widget {name} {b.id!r}"
    spec = OPTIONS[name]
    b.check_keys(b.data, {k: False for k in spec}, (), what)
    values = {}
    for key, (kind, default, lo, hi) in spec.items():
        values[key] = _value(b, what, key, b.data.get(key, default), kind, lo, hi) if key in b.data else default
    _cross_check(b, what, name, values)
    return {"name": name, "id": b.id, "options": values}


def _value(b: Block, what: str, key: str, value, kind: str, lo, hi):
    """One option's value, checked against its kind and range."""
    def fail(msg):
        b.error(f"{what}: {key} {msg}", (key,))
    if kind == "bool":
        if not isinstance(value, bool):
            fail(f"must be true or false, got {value!r}")
        return value
    if kind == "text":
        if not isinstance(value, str) or not value.strip():
            fail("must be non-empty text")
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
    if not lo <= value <= hi:
        fail(f"must be between {lo} and {hi}, got {value}")
    return value


def _cross_check(b: Block, what: str, name: str, v: dict) -> None:
    """Checks that involve two options."""
    if v.get("tokens") is not None:
        if "T" in b.data and len(v["tokens"]) != v["T"]:
            b.error(f"{what}: tokens has {len(v['tokens'])} words but T is {v['T']}", ("tokens",))
        lo, hi = _V["T"]
        if not lo <= len(v["tokens"]) <= hi:
            b.error(f"{what}: tokens needs {lo} to {hi} words, got {len(v['tokens'])}", ("tokens",))
        v["T"] = len(v["tokens"])
    if v.get("example") in lessonpy("models.realheads").CELL_HEADS and (v.get("tokens") is not None or "T" in b.data):
        b.error(f"{what}: a real head's example brings its own tokens; drop tokens and T", ("example",))
    if v.get("example") in ("cat", "trained-head"):
        if v.get("tokens") is not None or "T" in b.data:
            b.error(f"{what}: the {v['example']} example brings its own tokens; drop tokens and T", ("example",))
        v["T"] = len(lessonpy("course.attention.cat_example").SENTENCE) if v["example"] == "cat" else lessonpy("course.attention.trained_head").T
    if v.get("causal") and name != "dk-explorer" and v.get("example", "seeded") != "seeded":
        b.error(f"{what}: causal masks the seeded example; the {v['example']} example brings its own pattern",
                ("causal",))
    if v.get("forward") is not None and not CELL_ID_PATTERN.match(v["forward"]):
        b.error(f"{what}: forward must be the id of a runnable cell, got {v['forward']!r}", ("forward",))
    if v.get("row") is not None and v["row"] >= v["T"]:
        b.error(f"{what}: row {v['row']} is past the last position ({v['T'] - 1})", ("row",))
    if name == "heads" and v["C"] % v["heads"]:
        divisors = lessonpy("course.attention.widget_payloads").head_counts(v["C"])
        b.error(f"{what}: C={v['C']} does not split into {v['heads']} heads; choose one of {divisors}",
                ("heads",))


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
        payload = lessonpy("course.attention.widget_payloads").prerender(spec["name"], spec["options"], target=spec["id"])
    except Exception as exc:  # a combination the options check let through
        raise LessonError(env.get("path", "?"), env.get("line", 1), f"widget {spec['id']!r}: {exc}") from None
    if spec["name"] == "real-heads":  # the build's word, not the author's: the live files' sizes and sha256, None: left out
        spec["options"]["live_files"] = env.get("site", {}).get("live_files")
        spec["options"]["live_url"] = env.get("site", {}).get("live_url")  # their folder, from the page
        # the sentence the lesson's numbers about changed heads were computed on (lessonpy.models.sentence_changes)
        spec["options"]["live_sentence"] = lessonpy("models.live").SENTENCE
        # MiniLM's layers and heads, for the live panel's head choices (lessonpy.models.minilm's, one definition)
        spec["options"]["live_shape"] = [lessonpy("models.minilm").LAYERS, lessonpy("models.minilm").HEADS]
    # the data goes in the lesson's widget file (render_lesson), not into the page's HTML
    env.setdefault("widget_data", {})[spec["id"]] = {**spec, "initial": encode_payload(payload)}
    name, wid = html.escape(spec["name"]), html.escape(spec["id"])
    label = html.escape(spec["options"].get("title") or LABELS[spec["name"]])
    return (
        f'<section class="widget widget-{name}" data-widget="{name}" data-widget-id="{wid}" id="widget-{wid}" '
        f'data-cells-before="{env.get("cell_index", 0)}" aria-label="{label}">\n'
        f'<p class="widget-loading">{html.escape(LABELS[spec["name"]])}: the picture appears when the page\'s '
        "scripts have loaded.</p>\n"
        "</section>\n"
    )

