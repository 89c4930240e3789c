"""Each limit lives in lessonpy.limits; the build, the widgets' calls and the page all read it there."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonpy import limits
from lessonpy import widget_payloads as widgets
from sitebuild.pages.lessons import LessonError, read_lessons
from sitebuild.pages.page_copies import COPIES, copy_text
from sitebuild.pages.render import render_lesson_body

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("path", sorted(COPIES), ids=str)
def test_the_pages_copies_are_written_from_python(path):
    assert (ROOT / "static" / path).read_text(encoding="utf-8") == copy_text(path), (
        f"static/{path} is stale: run `python3 -m sitebuild.pages.page_copies`")


def test_the_limits_copy_holds_the_limits():
    assert f"MAX_T: {limits.MAX_T}," in copy_text(Path("js") / "shared" / "limits.js")


def fence(tmp_path, body):
    (tmp_path / "w.md").write_text(f"---\ntitle: W\n---\n\n{body}\n", encoding="utf-8")
    [lesson] = read_lessons(tmp_path)
    return render_lesson_body(lesson)


@pytest.mark.parametrize("name, key, call", [
    ("heads", "T", lambda T: widgets.heads(T=T)),
    ("heads", "C", lambda C: widgets.heads(C=C, n_head=1)),
    ("dk-explorer", "T", lambda T: widgets.explore(T=T)),
    ("attention-view", "T", lambda T: widgets.attention_example(T=T)),
])
def test_a_fence_and_a_call_accept_the_same_range(tmp_path, name, key, call):
    lo, hi = limits.WIDGET_LIMITS["view" if name == "attention-view" else name][key]
    fence(tmp_path, f"```widget {name} id=w\n{key}: {hi}\n```")
    call(hi)
    with pytest.raises(LessonError, match=f"between {lo} and {hi}"):
        fence(tmp_path, f"```widget {name} id=w\n{key}: {hi + 1}\n```")
    with pytest.raises(ValueError, match=f"between {lo} and {hi}"):
        call(hi + 1)
