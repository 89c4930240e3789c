"""One lesson of widget fences rendered by the build's own code (sitebuild/pages), and the widgets' data as the
page fetches it: for the CPython tests of the fences and of what a widget is drawn from."""

from __future__ import annotations

import json

from sitebuild.pages.lessons import read_lessons
from sitebuild.pages.render import RenderedLesson, render_lesson


def render(tmp_path, body: str, site: dict | None = None) -> RenderedLesson:
    (tmp_path / "w.md").write_text(f"---\ntitle: W\n---\n\nText.\n\n{body}", encoding="utf-8")
    [lesson] = read_lessons(tmp_path)
    return render_lesson(lesson, site=site)


def data_blocks(rendered: RenderedLesson) -> list[dict]:
    """The widgets' data, in page order, as the page fetches it (build.py writes it beside the page)."""
    return [json.loads(json.dumps(data)) for data in rendered.widgets.values()]
