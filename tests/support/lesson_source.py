"""The attention lesson's exercise fences, read from the lesson itself (one source for page and tests)."""

from __future__ import annotations

import re
from pathlib import Path

ATTENTION = Path(__file__).resolve().parents[2] / "lessons" / "attention.md"
_FENCE = re.compile(r"^```exercise id=(\S+)\n(.*?)^```$", re.S | re.M)


def exercise_fences(path: Path = ATTENTION) -> list[tuple[str, str, int]]:
    """(id, YAML body, line of the opening fence) for every exercise fence of the lesson."""
    text = path.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text[:m.start()].count("\n") + 1) for m in _FENCE.finditer(text)]


def exercise_fences_text(path: Path = ATTENTION) -> str:
    """The exercise fences alone, as Markdown, to build into a page of their own."""
    return "\n".join(f"```exercise id={ident}\n{body}```\n" for ident, body, _ in exercise_fences(path))


def fences_of(lesson, kind: str) -> list[tuple[str, dict, dict]]:
    """(content, options, env) of every fence ```KIND of a parsed lesson, as its fence renderer gets them."""
    from sitebuild.pages.lessons import parse_fence_info

    found = []
    for token in lesson.tokens:
        if token.type == "fence":
            line = token.map[0] + 1
            lang, flags, options = parse_fence_info(token.info, lesson.source_path, line)
            if lang == kind:
                found.append((token.content, options, {"path": lesson.source_path, "line": line, "flags": flags}))
    return found
