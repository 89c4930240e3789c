"""Numbers in lesson text that come from running code, never from typing them in.

A lesson names a Python module in its front matter::

    numbers: attention_numbers

That module defines ``numbers() -> dict[str, str | int]``. The build calls it once and
replaces every ``{{ num.NAME }}`` in the lesson's prose and maths with the value:
strings as they are (the module formats them, e.g. ``f"{std:.1f}"``), integers with
thousands separators (``2,359,296``; in maths ``2{,}359{,}296`` so TeX spaces them
right). Code (cells, code blocks, inline code) is never touched. An unknown name is
a build error at the placeholder's ``file:line``.

The module also says which cell prints which of those numbers, as ``CELL_PRINTS``: a dict from cell id
to a list of number names, each of which that cell's output must contain as the text shows it (the
build checks the names and ids; tests/unit/test_every_lesson.py runs the cells and checks the output).

The module is imported with ``py/`` and the lesson's own folder on the import path, in a
Python process of its own: an author's module that loops forever, exits or crashes fails
the build with a message instead of hanging or killing it.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

from ..project import PY_DIR, ROOT

#: Longest a numbers module may take to import and return its numbers, in seconds.
TIMEOUT_S = 60

# The child process: put the project on the path, then answer with one JSON line.
_CHILD = "import sys; sys.path.insert(0, sys.argv[1]); from sitebuild.pages.numbers import _answer; _answer(sys.argv[2:])"

#: ``{{ num.name }}``: cannot be Python (no f-string writes ``{{ num.``) nor TeX.
PLACEHOLDER = re.compile(r"\{\{\s*num\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

_cache: dict[tuple[str, tuple[str, ...]], dict] = {}


class NumbersError(Exception):
    """The numbers module is missing, fails, or returns something unusable."""


def format_value(name: str, value: object) -> str:
    """The text a placeholder becomes: str as is, int with thousands separators."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise NumbersError(f"number {name!r} is a {type(value).__name__}: return a str (formatted the way "
                           "the text should show it, e.g. f'{x:.2f}') or an int")
    return value if isinstance(value, str) else f"{value:,}"


def load_numbers(module_name: str, extra_paths: tuple[Path, ...] = ()) -> dict[str, str]:
    """Import *module_name* in a child process, call its ``numbers()``, return the formatted values (cached)."""
    return _load(module_name, extra_paths)["values"]


def load_prints(module_name: str, extra_paths: tuple[Path, ...] = ()) -> dict[str, list[str]]:
    """The module's ``CELL_PRINTS`` (cell id -> names of the numbers it prints; {} without one), checked
    against its ``numbers()`` (cached with them)."""
    return _load(module_name, extra_paths)["prints"]


def _load(module_name: str, extra_paths: tuple[Path, ...]) -> dict:
    paths = tuple(str(p) for p in (PY_DIR, *extra_paths))
    key = (module_name, paths)
    if key in _cache:
        return _cache[key]
    limit = TIMEOUT_S
    try:
        child = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), module_name, *paths],
                               capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:  # run() has killed the child
        raise NumbersError(f"numbers module {module_name!r} did not return within {limit:g} s") from None
    try:
        reply = json.loads(child.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        said = child.stderr.strip().splitlines()[-1:] or ["it printed nothing on stderr"]
        raise NumbersError(f"numbers module {module_name!r} stopped without an answer "
                           f"(exit code {child.returncode}): {said[0]}") from None
    if "error" in reply:
        raise NumbersError(reply["error"])
    _cache[key] = reply
    return reply


def _answer(args: list[str]) -> None:
    """In the child process: print {"values": ...} or {"error": ...} as the last line of stdout."""
    module_name, *paths = args
    reply_to = sys.stdout
    sys.stdout = sys.stderr  # the module's own prints must not be mistaken for the answer
    try:
        reply = _compute(module_name, paths)
    except NumbersError as exc:
        reply = {"error": str(exc)}
    reply_to.write("\n" + json.dumps(reply) + "\n")
    reply_to.flush()


def _compute(module_name: str, paths: list[str]) -> dict:
    """Import the module, call its ``numbers()``, format the values and read ``CELL_PRINTS`` (in the child
    process): {"values": {name: text}, "prints": {cell id: [name, ...]}}."""
    sys.path[:0] = paths
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 (an author's module: report any failure plainly)
        raise NumbersError(f"cannot import the numbers module {module_name!r}: {type(exc).__name__}: {exc}") from None
    func = getattr(module, "numbers", None)
    if not callable(func):
        raise NumbersError(f"the numbers module {module_name!r} has no numbers() function")
    try:
        values = func()
    except Exception as exc:  # noqa: BLE001 (the author's code: report, do not crash)
        raise NumbersError(f"{module_name}.numbers() failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(values, dict):
        raise NumbersError(f"{module_name}.numbers() must return a dict, got {type(values).__name__}")
    formatted = {str(k): format_value(str(k), v) for k, v in values.items()}
    prints = getattr(module, "CELL_PRINTS", {})
    if not (isinstance(prints, dict) and all(isinstance(cell, str) and isinstance(names, (list, tuple))
                                             and all(isinstance(n, str) for n in names) for cell, names in prints.items())):
        raise NumbersError(f"{module_name}.CELL_PRINTS must be a dict from cell id to a list of number names, "
                           "such as {'scores': ['unscaled_std']}")
    unknown = sorted({n for names in prints.values() for n in names} - set(formatted))
    if unknown:
        raise NumbersError(f"{module_name}.CELL_PRINTS names numbers that numbers() does not return: {', '.join(unknown)}")
    return {"values": formatted, "prints": {cell: list(names) for cell, names in prints.items()}}


def substitute(text: str, values: dict[str, str] | None, in_maths: bool = False) -> tuple[str, str | None]:
    """Fill the placeholders of *text*; return (new text, the first unknown name or None)."""
    missing: list[str] = []

    def fill(match: re.Match) -> str:
        name = match.group(1)
        if values is None or name not in values:
            missing.append(name)
            return match.group(0)
        value = values[name]
        return value.replace(",", "{,}") if in_maths else value

    out = PLACEHOLDER.sub(fill, text)
    return out, (missing[0] if missing else None)
