"""Maths in lessons: ``$...$`` inline and ``$$...$$`` display, rendered at build time by Temml.

The page ships MathML Core only, one form of each formula: every current browser typesets it
(with the site's own maths font, ``math_font``), screen readers read it, and no TeX and no maths
JavaScript reach the page. (KaTeX's HTML next to its MathML came to about 13,000 elements for
Lesson 4's 364 formulas; Temml's MathML is about 2,300.) Rendering runs Node once per build for
every formula of every lesson (JSON on stdin, JSON on stdout), so adding formulas costs
milliseconds, not a process each.

A formula Temml cannot read is reported as ``file:line: bad maths: ...``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from markdown_it.token import Token

#: Where Temml is, below the project root the build was given (``npm ci`` puts it there).
TEMML_IN_ROOT = Path("node_modules") / "temml"
TEMML_MODULE = Path("dist") / "temml.cjs"  # its CommonJS build (the package's "main" is a browser script)
MATH_TOKENS = {"math_inline": False, "math_inline_double": True, "math_block": True, "math_block_label": True}

# Reads [{tex, display}, ...] on stdin, writes [{html} | {error}, ...] on stdout.
_NODE_SCRIPT = r"""
const temml = require(process.argv[1]);
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(({ tex, display }) => {
    try {
      return { html: temml.renderToString(tex, {
        displayMode: display, annotate: false, throwOnError: true, strict: true, trust: false,
      }) };
    } catch (err) {
      // Temml marks the place with combining low lines (U+0332) under the TeX: say it in words instead
      const text = String(err.message || err).trim().replace(/^Temml parse error: */, "");
      return { error: text.replace(/\s*\n[\s\S]*$/, "").replace(/:$/, "") };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
"""


class MathError(Exception):
    """Temml (or Node) could not render; the lessons module turns this into a LessonError."""


@dataclass
class Formula:
    """One formula to render, and where it came from (for error messages)."""

    tex: str
    display: bool
    line: int  # 1-based line in the lesson source
    token: Token


def tokens_with_lines(tokens: Iterable[Token]) -> Iterator[tuple[Token, int]]:
    """Every block token, and every child of an inline token, with the 1-based source line it is on."""
    for token in tokens:
        line = (token.map[0] + 1) if token.map else 1
        yield token, line
        if token.type == "inline" and token.children:
            for child in token.children:
                yield child, line
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                else:
                    line += child.content.count("\n")


def find_formulas(tokens: Iterable[Token]) -> Iterator[Formula]:
    """Every maths token of a parsed lesson, with the source line it starts on."""
    for token, line in tokens_with_lines(tokens):
        if token.type in MATH_TOKENS:
            yield Formula(token.content.strip(), MATH_TOKENS[token.type], line, token)


def render_tex(items: list[tuple[str, bool]], temml_dir: Path) -> list[dict]:
    """Render ``(tex, display)`` pairs in one Node call; each result is ``{"html"}`` or ``{"error"}``."""
    if not items:
        return []
    node = shutil.which("node")
    if node is None:
        raise MathError("Node.js is needed to render maths (Temml): install node, then `npm ci`")
    if not (temml_dir / "package.json").exists():
        raise MathError(f"Temml is missing at {temml_dir}: run `npm ci`")
    payload = json.dumps([{"tex": tex, "display": display} for tex, display in items])
    proc = subprocess.run([node, "-e", _NODE_SCRIPT, str((temml_dir / TEMML_MODULE).resolve())], input=payload, capture_output=True, check=False,
                          text=True, encoding="utf-8", timeout=120)
    if proc.returncode != 0:
        raise MathError(f"Temml failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def render_formulas(formulas: list[Formula], root: Path) -> list[tuple[Formula, str]]:
    """Store Temml's MathML in each formula's token (``token.meta["html"]``); return the failures.

    Identical formulas are rendered once. Tokens that already carry HTML are skipped,
    so rendering again is free.
    """
    todo = [f for f in formulas if "html" not in f.token.meta]
    if not todo:
        return []
    unique = list(dict.fromkeys((f.tex, f.display) for f in todo))
    results = dict(zip(unique, render_tex(unique, root / TEMML_IN_ROOT)))
    failures = []
    for f in todo:
        result = results[(f.tex, f.display)]
        if "error" in result:
            failures.append((f, result["error"]))
        else:
            f.token.meta["html"] = without_outer_mrow(result["html"])
    return failures


def without_outer_mrow(mathml: str) -> str:
    """``<math><mrow>…</mrow></math>`` as ``<math>…</math>``: MathML Core lays a ``<math>``'s children
    out as an ``<mrow>`` does, so a row that is its only child draws the same; Temml wraps 153 of
    Lesson 4's 364 formulas in one, an element each on the page for nothing."""
    start = mathml.find(">") + 1
    head, body = mathml[:start], mathml[start:]
    if not (head.startswith("<math") and body.startswith("<mrow>") and body.endswith("</mrow></math>")):
        return mathml
    depth = 0
    for tag in re.finditer(r"<(/?)mrow\b[^>]*>", body):
        depth += -1 if tag.group(1) else 1
        if depth == 0:  # where the first row closes: the end, or it is not the only child
            if tag.end() != len(body) - len("</math>"):
                return mathml
            break
    return head + body[len("<mrow>"):-len("</mrow></math>")] + "</math>"


def rendered(tokens: Iterable[Token]) -> list[str]:
    """The MathML of every typeset formula among *tokens* (what the maths font must draw)."""
    return [f.token.meta["html"] for f in find_formulas(tokens) if "html" in f.token.meta]
