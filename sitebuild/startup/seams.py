"""The builder's reading of static/js/shared/pyodide-seams.mjs: Pyodide's version, its in-page paths and its
rule for shared libraries are defined there once, for the page's worker, the build's Node steps and this
builder alike (the precompiled files carry the paths; the wheel split follows the rule)."""

from __future__ import annotations

import re
from functools import cache

from ..project import PYODIDE_SEAMS_MODULE

# `export const NAME = "text";` or `export const NAME = /regex/;`, each on one line of the seams file
_CONSTANT = re.compile(r'^export const (?P<name>[A-Z_]+) = (?:"(?P<text>[^"\n]*)"|/(?P<regex>[^\n]+)/);', re.M)


@cache
def _constants() -> dict[str, str | re.Pattern]:
    found = {}
    for m in _CONSTANT.finditer(PYODIDE_SEAMS_MODULE.read_text(encoding="utf-8")):
        found[m["name"]] = m["text"] if m["text"] is not None else re.compile(m["regex"])
    return found


def constant(name: str) -> str:
    """A string constant of the seams file (its `export const NAME = "…";`)."""
    value = _constants().get(name)
    if not isinstance(value, str):
        raise LookupError(f"{PYODIDE_SEAMS_MODULE.name} has no string constant {name}")
    return value


def pattern(name: str) -> re.Pattern:
    """A regular expression of the seams file (its `export const NAME = /…/;`), which JavaScript and Python read alike."""
    value = _constants().get(name)
    if not isinstance(value, re.Pattern):
        raise LookupError(f"{PYODIDE_SEAMS_MODULE.name} has no regular expression {name}")
    return value
