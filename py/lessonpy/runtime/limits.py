"""Every limit the lesson's Python and its page share, defined once.

Python checks against these (with messages for the reader); the page reads the same numbers
from ``static/js/shared/limits.js``, which :func:`limits_js` writes from this module (the build writes
it into the site, and a test keeps the repository's copy equal), so no limit has a second home.
"""

from __future__ import annotations

import json
import os

#: Largest sequence a view draws: a 512 x 512 heatmap is already 262,144 cells.
MAX_T = 512
#: Largest feature size (columns of x, Q, K, V, out) a view draws (GPT-2 XL has C = 1600).
MAX_D = 4096
#: Token labels longer than this are cut, so one long label cannot squash the axes.
MAX_LABEL = 32

#: A run's output, stdout and stderr together (about 2,500 lines of 80 characters). The worker
#: cuts before posting, so one huge print() never crosses to the page; the page cuts again, so
#: no sender can fill a cell's output. Past it the reader is told how much was not shown.
OUTPUT_CHARS = 200_000
#: Largest piece of output in one message: a flood is posted in pieces, never as one string.
OUTPUT_CHUNK_CHARS = 64 * 1024
#: One message for the reader: an exception's message or class name, a check's feedback, the live panel's
#: error line, a view's title. The reader's code can raise ValueError("x" * 10**8); its text is clipped
#: (:func:`clip`) where Python makes it, and the worker clips every string it posts to OUTPUT_CHARS, so
#: no text reaches the page longer than that, whichever path it took.
MESSAGE_CHARS = 2_000
#: Figures one run may show: each is a PNG of up to a few MB, and a loop of plt.figure() made hundreds.
FIGURES_PER_RUN = 20
#: What stands where :func:`clip` cut a text (``{chars}``: how many characters, with thousands separators).
#: No newline: a one-line message stays one line.
CUT_MARK = " … [{chars} characters not shown] … "

#: The widgets' settings: what a ```widget fence may ask for and what a call from the page may ask for (the controls
#: offer exactly these), by widget. Ranges are (lowest, highest), inclusive. Their home is each widget's spec
#: (static/js/page/widgets/<name>/spec.yml, ``limits``); ``python3 -m sitebuild.pages.page_copies`` writes them
#: here (widget_limits.json, package data of the wheel, so Pyodide has it); the build refuses a stale copy.
#: (os.path, not importlib.resources: the page's first Python has only the standard library's core.)
with open(os.path.join(os.path.dirname(__file__), "widget_limits.json"), encoding="utf-8") as _file:
    WIDGET_LIMITS = {name: {key: tuple(r) for key, r in ranges.items()} for name, ranges in json.load(_file).items()}


def for_page(widget_limits: dict | None = None) -> dict:
    """The limits the page needs, as plain data (*widget_limits*: the widgets' from their specs, else WIDGET_LIMITS)."""
    widgets = {name: {key: list(r) for key, r in ranges.items()}
               for name, ranges in (WIDGET_LIMITS if widget_limits is None else widget_limits).items()}
    return {
        "MAX_T": MAX_T,
        "MAX_D": MAX_D,
        "OUTPUT_CHARS": OUTPUT_CHARS,
        "OUTPUT_CHUNK_CHARS": OUTPUT_CHUNK_CHARS,
        "MESSAGE_CHARS": MESSAGE_CHARS,
        "FIGURES_PER_RUN": FIGURES_PER_RUN,
        "CUT_MARK": CUT_MARK,
        "CUT_MARK_ROOM": _MARK_ROOM,
        "widgets": widgets,
    }


#: Room kept for the mark in a clipped text: the mark and its count (13 digits with commas: 10**9 characters).
_MARK_ROOM = len(CUT_MARK) + 13


def clip(text: str, limit: int = MESSAGE_CHARS) -> str:
    """*text* within *limit* characters: its start and its end, the middle replaced by :data:`CUT_MARK` saying
    how much was cut. Slices only, so a 10**8-character text costs no copy of itself (the page's
    ``clipText`` in static/js/worker/clip.js is the same cut, the worker's last guard)."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - _MARK_ROOM)
    head, tail = keep - keep // 2, keep // 2
    mark = CUT_MARK.format(chars=f"{len(text) - keep:,}")
    return text[:head] + mark + text[len(text) - tail:]


def limits_js(widget_limits: dict | None = None) -> str:
    """The text of static/js/shared/limits.js (*widget_limits*: as :func:`for_page`)."""
    return (
        "// Generated from py/lessonpy/runtime/limits.py (python3 -m sitebuild.pages.page_copies); do not edit.\n"
        "// The build writes this file into the site from Python, and tests/unit/test_limits.py keeps\n"
        "// this copy (which the component fixture loads straight from the repository) equal.\n"
        "export const LIMITS = Object.freeze({\n"
        + "".join(f"  {key}: {json.dumps(value)},\n" for key, value in for_page(widget_limits).items())
        + "});\n"
    )
