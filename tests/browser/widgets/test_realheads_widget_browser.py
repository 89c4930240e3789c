"""The real-heads widget on a phone and with bad data: tests/fixtures/widgets/widgets.md built into a site.

On an iPhone-sized screen (390 px, 3 device pixels per CSS pixel, touch) every one of SmolLM2's 270 heads is on
screen, at least 24 px, and a tap at a head's centre opens that head; both models' grids have layers as rows; an
ablation bar opens its head; a struck-through token's strike leaves its leading space alone. With the data files
routed to fail (404, garbage, an entry without its ablation data or with it malformed) each part that lost its
data says so in a sentence, no error escapes, and the rest of the widget works.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, RUN_TIMEOUT_MS
from lessonpy.models import ablation, realheads
from pages import Widget
from widget_site import LESSON

pytestmark = pytest.mark.browser
GRID = ".realheads-grid canvas"
#: The smallest target a finger can hit (WCAG 2.2), CSS pixels.
TARGET = 24


def ready_page(browser, url, **context_options):
    """A new context's page of the widgets lesson with Python ready, its uncaught errors collected in page.errors.
    The service worker is blocked: it would answer the data files the tests route."""
    context = browser.new_context(service_workers="block", **context_options)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    return context, page


def start(page, url):
    page.goto(url + LESSON)
    expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
    real = Widget(page, "real").locator
    real.scroll_into_view_if_needed()
    return real


def layout(page):
    return page.evaluate("() => lessonWidgets.find((w) => w.id === 'real').grid.layout()")


def rect_of(geometry, layer, head):
    return next(r for r in geometry["rects"] if r["layer"] == layer and r["head"] == head)


def assert_layers_are_rows(geometry):
    """Layer l+1 sits below layer l in the same column; head h+1 right of head h in the same row."""
    a, below, right = rect_of(geometry, 0, 0), rect_of(geometry, 1, 0), rect_of(geometry, 0, 1)
    assert below["x"] == a["x"] and below["y"] > a["y"], (a, below)
    assert right["y"] == a["y"] and right["x"] > a["x"], (a, right)


@pytest.fixture(scope="module")
def phone(browser, widgets_url):  # noqa: F811 (the fixture imported above)
    """An iPhone 13's screen: 390 px wide, 3 device pixels a CSS pixel, touch, a mobile viewport."""
    context, page = ready_page(browser, widgets_url, viewport={"width": 390, "height": 844}, device_scale_factor=3,
                               is_mobile=True, has_touch=True)
    real = start(page, widgets_url)
    # the first grid waits for the data's download and numpy's import, on a machine shared with other runs
    try:
        expect(real.locator(GRID)).to_have_attribute("data-heads", "72", timeout=BOOT_TIMEOUT_MS)
    except AssertionError as exc:
        # two full runs of 7 December saw the grid never come (Python ready, no error on the canvas) and passed
        # alone: say what the widget and the page said then, for whoever meets it next
        said = real.evaluate("(w) => ({state: w.dataset.state, started: w.dataset.started, status: [...w.querySelectorAll("
                             "'.widget-status')].map((e) => e.textContent), python: document.querySelector('.py-status')"
                             "?.textContent})")
        raise AssertionError(f"the phone's grid never came; the widget and the page said {said}") from exc
    yield page
    context.close()
    assert not page.errors, f"uncaught errors in the page: {page.errors}"


def test_on_a_phone_both_grids_have_layers_as_rows_and_every_smollm2_head_opens_where_it_is_tapped(phone):
    real = Widget(phone, "real").locator
    canvas = real.locator(GRID)
    minilm = layout(phone)
    assert_layers_are_rows(minilm)
    assert minilm["thumb"] >= TARGET, minilm["thumb"]
    # an encoder's first-token head parks on [CLS] (every query sees every token); a causal model's is the sink
    featured = real.locator(".realheads-featured-head")
    expect(featured.filter(has_text="first token")).to_have_text(re.compile(r"^first token \(\[CLS\]\): layer"))
    real.get_by_label("Model").select_option("smollm2")
    expect(canvas).to_have_attribute("data-heads", "270", timeout=RUN_TIMEOUT_MS)
    expect(featured.filter(has_text="first token")).to_have_text(re.compile(r"^first token \(sink\): layer"))
    smol = layout(phone)
    assert_layers_are_rows(smol)
    assert smol["thumb"] >= TARGET, f"SmolLM2's heads are {smol['thumb']} px on a phone"
    # every head is inside the canvas, and the canvas inside the screen: none is past an edge
    width = canvas.evaluate("c => c.clientWidth")
    assert all(r["x"] >= 0 and r["x"] + r["size"] <= width for r in smol["rects"]), "a head is past the canvas's edge"
    assert phone.evaluate(f"() => document.querySelector('#widget-real {GRID}').getBoundingClientRect().right") <= 390
    # a tap at a head's centre opens that head: the four corners, the induction head the tap missed, a diagonal
    heads = [(0, 0), (0, 8), (29, 0), (29, 8), (18, 6), (12, 6)] + [(layer, layer % 9) for layer in range(1, 30, 4)]
    for layer, head in heads:
        r = rect_of(smol, layer, head)
        canvas.tap(position={"x": r["x"] + r["size"] / 2, "y": r["y"] + r["size"] / 2})
        expect(real).to_have_attribute("data-open", f"{layer},{head}")


def test_an_ablation_bar_opens_its_head_in_smollm2s_grid(phone):
    real = Widget(phone, "real").locator
    real.get_by_label("Model").select_option("minilm")  # from the other model: SmolLM2's grid loads, then opens it
    expect(real.locator(GRID)).to_have_attribute("data-heads", "72", timeout=RUN_TIMEOUT_MS)
    p = ablation.payload()
    second = p["heads"][1]
    bar = real.locator(f".realheads-ablation-bar[data-layer='{second['layer']}'][data-head='{second['head']}']")
    bar.locator(".realheads-ablation-track").tap()  # the bar itself, not only its name
    expect(real.locator(GRID)).to_have_attribute("data-heads", "270", timeout=RUN_TIMEOUT_MS)
    expect(real).to_have_attribute("data-open", f"{second['layer']},{second['head']}")
    expect(real.get_by_label("Model")).to_have_value("smollm2")
    top = p["heads"][0]  # SmolLM2 shown: the bar's button (the keyboard's way) opens its head at once
    button = real.get_by_role("button", name=f"Open layer {top['layer']}, head {top['head']}")
    button.focus()
    phone.keyboard.press("Enter")
    expect(real).to_have_attribute("data-open", f"{top['layer']},{top['head']}")
    expect(real.locator(".realheads-open-title")).to_be_in_viewport()


def test_what_the_open_head_writes_is_drawn_beside_its_pattern_and_follows_the_selected_row(phone):
    """SmolLM2's first-token head: under its pattern, the panel of what it writes, on the phone's screen, whose table
    holds Python's weighted pattern (lessonpy.models.head_writes) where the plain table holds the weights; the arrow
    keys on its picture choose the query row of the whole view, and a row chosen in the view is marked in its table."""
    real = Widget(phone, "real").locator
    real.get_by_label("Model").select_option("smollm2")
    expect(real.locator(GRID)).to_have_attribute("data-heads", "270", timeout=RUN_TIMEOUT_MS)
    heads = realheads.load("smollm2")
    f = heads.featured_head("first")
    r = rect_of(layout(phone), f["layer"], f["head"])
    real.locator(GRID).tap(position={"x": r["x"] + r["size"] / 2, "y": r["y"] + r["size"] / 2})
    expect(real).to_have_attribute("data-open", f"{f['layer']},{f['head']}")
    writes = real.locator(".realheads-writes")
    expect(writes).to_have_attribute("data-state", "shown")
    canvas = writes.locator("canvas")
    expect(canvas).to_have_attribute("aria-label", re.compile("what the head writes"))
    box = canvas.bounding_box()
    assert box["width"] > 200 and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    writes.get_by_text("Show what the open head writes as a table").click()
    table = writes.locator("table")
    expect(table.locator("caption")).to_contain_text(f"layer {f['layer']}, head {f['head']}")
    want, weights = heads.written(0)[f["layer"], f["head"]], heads.pattern(0, f["layer"], f["head"])
    row = 3
    cells = table.locator(f"tr[data-row='{row}'] td")
    got = [float(v) for v in cells.evaluate_all("tds => tds.map((td) => td.dataset.value)")]
    np.testing.assert_allclose(got, want[row], atol=1e-6)
    # the plain pattern parks everything on the first token; what it writes from there is a small fraction
    assert weights[row, 0] > 0.9 and got[0] < 0.2 * weights[row, 0], (weights[row, 0], got[0])
    view = real.locator(".realheads-view .attn-view")
    phone.evaluate("() => lessonWidgets.find((w) => w.id === 'real').view.select(1)")
    expect(table.locator("tr[aria-current='true']")).to_have_attribute("data-row", "1")
    canvas.focus()
    phone.keyboard.press("ArrowDown")
    expect(view).to_have_attribute("data-selected", "2")
    expect(table.locator("tr[aria-current='true']")).to_have_attribute("data-row", "2")


def test_a_struck_token_strikes_its_word_not_its_leading_space(phone):
    runs = Widget(phone, "real").locator.locator(".realheads-ablation-run")
    expect(runs.first).to_be_visible()
    p = ablation.payload()["example"]
    struck = runs.locator("del").evaluate_all("ds => ds.map((d) => [d.textContent, d.parentElement.textContent])")
    wrong = [token for run in p["runs"] for token, w in zip(p["tokens"], run["wrong"]) if w]
    assert len(struck) == len(wrong) and any(t[:1].isspace() for t in wrong), "the example has no spaced wrong token"
    for (word, whole), token in zip(struck, wrong):
        assert whole == token, (whole, token)  # the token is all there, its space outside the strike
        assert word == token.lstrip() and word, (word, token)


# ---------------------------------------------------------------------------- bad data

def with_ablation(route, change):
    """Answer the lesson's widget data with the real-heads entry's ablation data changed by change(initial)."""
    data = route.fetch().json()
    change(data["real"]["initial"])
    route.fulfill(status=200, content_type="application/json", body=json.dumps(data))


def check_sentence(status, *words):
    """A plain sentence: none of Python's traceback, short, naming what failed."""
    text = status.text_content()  # innerText is empty off screen (content-visibility)
    assert "Traceback" not in text and "pyodide_glue" not in text and 'File "' not in text, text
    assert len(text) < 400, text
    for word in words:
        assert word in text, (word, text)


def check_plain(status, *words):
    """A sentence in the page's own words: none of Python's wording either (no URL, file name, class or numpy's
    error), which lessonpy.models.realheads's messages hold for someone debugging in Python."""
    check_sentence(status, *words)
    text = status.text_content()
    for python in ("http", ".npz", "HTTP", "Error", "realheads", "zip", "pickle"):
        assert python not in text, (python, text)


def opens_a_head_by_click(page, real, layer, head):
    r = rect_of(layout(page), layer, head)
    real.locator(GRID).click(position={"x": r["x"] + r["size"] / 2, "y": r["y"] + r["size"] / 2})
    expect(real).to_have_attribute("data-open", f"{layer},{head}")


@pytest.mark.parametrize("bad", ["missing", "wrong type"])
def test_bad_data_disables_only_its_part_with_a_sentence(browser, widgets_url, bad):  # noqa: F811
    context, page = ready_page(browser, widgets_url, viewport={"width": 1000, "height": 900})
    try:
        if bad == "missing":  # no ablation data; MiniLM's grid data 404 on the first load
            context.route("**/widgets.json", lambda route: with_ablation(route, lambda i: i.pop("ablation")))
            context.route("**/minilm.npz", lambda route: route.fulfill(status=404, body="not here"), times=1)
        else:  # `heads` a string; SmolLM2's grid data garbage
            context.route("**/widgets.json", lambda route: with_ablation(route, lambda i: i["ablation"].update(heads="x")))
            context.route("**/smollm2.npz", lambda route: route.fulfill(status=200, body=b"garbage" * 100), times=1)
        real = start(page, widgets_url)
        view = real.locator(".realheads-ablation")
        expect(view).to_have_attribute("data-state", "error")
        check_sentence(view.locator(".realheads-ablation-status"), "knock-out results", "left out")
        expect(view.locator(".realheads-ablation-bar")).to_have_count(0)
        status = real.locator(".realheads-status")
        if bad == "missing":
            expect(real).to_have_attribute("data-state", "error", timeout=RUN_TIMEOUT_MS)
            check_plain(status, "The heads of MiniLM", "could not be loaded (the file did not download)", "try again")
            real.get_by_label("Sentence", exact=True).select_option("1")  # the reader picks again: it loads
            expect(real.locator(GRID)).to_have_attribute("data-heads", "72", timeout=RUN_TIMEOUT_MS)
            expect(real).to_have_attribute("data-state", "ready")
        else:
            expect(real.locator(GRID)).to_have_attribute("data-heads", "72", timeout=RUN_TIMEOUT_MS)
            real.get_by_label("Model").select_option("smollm2")
            expect(real).to_have_attribute("data-state", "error", timeout=RUN_TIMEOUT_MS)
            check_plain(status, "The heads of SmolLM2", "could not be loaded (the file that arrived is not the heads' data)",
                        "try again")
            expect(real.get_by_label("Model")).to_have_value("minilm")  # the menu names what is shown
        opens_a_head_by_click(page, real, 1, 3)  # the grid shown still works
        if bad == "wrong type":  # and choosing the model again loads it
            real.get_by_label("Model").select_option("smollm2")
            expect(real.locator(GRID)).to_have_attribute("data-heads", "270", timeout=RUN_TIMEOUT_MS)
    finally:
        context.close()
    assert not page.errors, f"uncaught errors in the page: {page.errors}"
