"""Each limit lives in lessonpy.runtime.limits; the build, the widgets' calls and the page all read it there."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonpy.runtime import limits
from lessonpy.course.attention import widget_payloads as widgets
from sitebuild.pages.lessons import LessonError, read_lessons
from sitebuild.pages.page_copies import COPIES, copy_text
from sitebuild.pages.render import render_lesson_body

ROOT = Path(__file__).resolve().parents[2]


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
    lo, hi = limits.WIDGET_LIMITS[name][key]
    fence(tmp_path, f"```widget {name} id=w\n{key}: {hi}\n```")
    call(hi)
    with pytest.raises(LessonError, match=f"between {lo} and {hi}"):
        fence(tmp_path, f"```widget {name} id=w\n{key}: {hi + 1}\n```")
    with pytest.raises(ValueError, match=f"between {lo} and {hi}"):
        call(hi + 1)


# ---------------------------------------------------------------------------- clip: every text within its limit

def test_clip_keeps_the_start_and_the_end_and_says_how_much_was_cut():
    text = "abcdefghij" * 10
    assert limits.clip(text, 200) is text  # within the limit: the text itself
    # the same example as tests/js/clip.test.mjs: the worker's clipText cuts the same way
    assert limits.clip(text, 60) == "abcdef … [89 characters not shown] … fghij"


def test_clip_holds_a_huge_text_to_the_limit_without_a_newline():
    huge = "a" + "x" * 10**7 + "z"
    for limit in (limits.MESSAGE_CHARS, limits.OUTPUT_CHARS):
        short = limits.clip(huge, limit)
        assert limit - 20 <= len(short) <= limit
        assert short.startswith("ax") and short.endswith("xz") and "\n" not in short
        assert f"[{10**7 + 2 - (limit - len(limits.CUT_MARK) - 13):,} characters not shown]" in short
