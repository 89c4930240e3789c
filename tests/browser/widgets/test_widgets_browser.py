"""The lesson's widgets in a real page: tests/fixtures/widgets/widgets.md built into a temporary site.

Pictures must match what CPython computes for the same seeds (the page's Python is the same
lessonpy), the explorer and heads must show Python's numbers, and bad arrays must give a message
in the cell and on the view, never an uncaught error. One page (one Python boot) serves most tests.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, RUN_TIMEOUT_MS, open_tables
from lessonpy.maths import lookup
from lessonpy.models import realheads
from lessonpy.course.attention import widget_payloads as widgets
from lessonpy.maths.attention import attention_param_count, example_inputs
from lessonpy.maths.show import build_payload
from pages import Cell, Widget
from widget_site import LESSON, real_table

pytestmark = pytest.mark.browser
def table_values(page, wid, name):
    """The values of a view's table (rows x cols) from the cells' exact data-value."""
    open_tables(Widget(page, wid).locator)
    rows = Widget(page, wid).locator.locator(f".attn-table-{name} tbody tr")
    return np.array(rows.evaluate_all(
        "trs => trs.map(tr => [...tr.querySelectorAll('td')].map(td => Number(td.dataset.value)))"))


def expected_example(T, d_k, seed):
    ex = example_inputs(T, d_k, seed)
    x = ex["x"]
    return build_payload(Q=x @ ex["W_q"], K=x @ ex["W_k"], V=x @ ex["W_v"], tokens=ex["tokens"],
                          title=None, target=None)


# JS: the cell (row, col) of a widget view's heatmap whose pixel is brightest.
BRIGHTEST = """(wid) => {
  const view = lessonWidgets.find((w) => w.id === wid).view;
  const g = view.components.weights.layout();
  const canvas = document.querySelector(`#widget-${wid} .attn-figure-weights canvas`);
  const dpr = canvas.width / canvas.clientWidth;
  const r = g.rects[0];
  let best = -1, at = null;
  const ctx = canvas.getContext('2d');
  for (let R = 0; R < g.nR; R++) for (let C = 0; C < r.nC; C++) {
    const d = ctx.getImageData(Math.round((r.x + C * g.cell + 3) * dpr), Math.round((r.y + R * g.cell + 3) * dpr), 1, 1).data;
    const y = 0.2126 * d[0] + 0.7152 * d[1] + 0.0722 * d[2];
    if (y > best) { best = y; at = [R, C]; }
  }
  return at;
}"""


# ---------------------------------------------------------------------------- before Python

def test_prerendered_pictures_show_before_python_is_ready(phone_before_python):
    """Python held back (its runtime never arrives), a dark 360 px phone: the build's pictures show."""
    page = phone_before_python
    expect(Widget(page, "view").locator.locator(".attn-view")).to_have_attribute("data-state", "ok")
    expected = widgets.prerender_view({"T": 6, "d_k": 8, "seed": 0})["arrays"]["weights"]
    np.testing.assert_allclose(table_values(page, "view", "weights"), expected, atol=1e-6)
    explorer = Widget(page, "explorer").locator
    explorer.scroll_into_view_if_needed()  # a widget starts when it comes near the screen
    expect(explorer.get_by_label("Head size d_k")).to_be_disabled()
    expect(explorer.locator(".widget-status")).to_contain_text("Python is loading")
    # within the two lines a phone keeps for the results (widgets.css): nothing below moves when Python is ready
    lines = explorer.locator(".widget-status").evaluate(
        "s => Math.round(s.getBoundingClientRect().height / parseFloat(getComputedStyle(s).lineHeight))")
    assert lines == 2, lines
    Widget(page, "heads").locator.scroll_into_view_if_needed()
    expect(Widget(page, "heads").locator.get_by_label("Number of heads H")).to_be_disabled()
    expect(Widget(page, "heads").locator.locator(".heads-random .heads-panel")).to_have_count(4)
    real = Widget(page, "real").locator
    real.scroll_into_view_if_needed()
    expect(real).to_have_attribute("data-open", "0,2")  # MiniLM's previous-token head, as stored
    np.testing.assert_array_equal(real_table(real), realheads.load("minilm").pattern(0, 0, 2))
    expect(real.locator(".realheads-status")).to_contain_text("the grid of every head needs Python")
    soft = Widget(page, "soft").locator  # the lesson's lookup, at the fence's temperature
    soft.scroll_into_view_if_needed()
    expect(soft.locator(".attn-lookup")).to_have_attribute("data-step", str(lookup_step(0.25)))
    built = lookup.build_lookup_payload(**lookup.EXAMPLE)["arrays"]
    np.testing.assert_allclose(lookup_table(soft)[:, 3], built["weights"][lookup_step(0.25)], atol=1e-6)
    assert page.locator(".py-status").get_attribute("data-state") == "loading"
    assert page.evaluate("""() => [...document.querySelectorAll('.widget')].every(
        (w) => w.getBoundingClientRect().right <= innerWidth && w.scrollWidth <= w.clientWidth)""")


def test_widget_data_that_did_not_download_is_said_in_place_and_fetched_again_for_a_cells_arrays(browser, widgets_url):
    """The widgets' data is a file beside the page (build.py, WIDGET_DATA), fetched once for every widget:
    when it fails, each widget says so where its picture goes, and arrays a cell sends to one fetch it again."""
    # (no service worker: its precache, once Python is ready, asks for the file as well)
    context = browser.new_context(viewport={"width": 1000, "height": 900}, service_workers="block")
    # Fails until the cell runs: a widget that starts meanwhile (the failed one's stand-in height goes with its
    # start, so the next ones come near the screen) asks again and fails too, and the error stays to be read.
    answers, down = [], [True]

    def answer(route):
        answers.append(503 if down[0] else 200)
        route.fulfill(status=503, body="unavailable") if down[0] else route.continue_()

    context.route("**/widgets.json", answer)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    try:
        page.goto(widgets_url + LESSON)
        expect(Widget(page, "view").locator.locator(".widget-error")).to_have_text(
            "This picture could not start: its data did not download (HTTP 503); reload the page to try again")
        expect(Widget(page, "view").locator.get_by_role("alert")).to_have_count(1)
        expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
        down[0] = False
        Cell(page, "seeded").run()  # show_attention to the first view: the data is asked for again, and comes
        expect(Widget(page, "view").locator).to_have_attribute("data-updated", "1")
        expect(Widget(page, "view").locator.locator(".widget-error")).to_have_count(0)
        expected = expected_example(6, 8, 3)["arrays"]
        np.testing.assert_allclose(table_values(page, "view", "weights"), expected["weights"], atol=1e-4)
        assert answers.count(200) == 1 and answers[-1] == 200, answers  # one download that every widget since shares
        Widget(page, "heads").locator.scroll_into_view_if_needed()
        expect(Widget(page, "heads").locator.locator(".heads-random .heads-panel")).to_have_count(4)
        assert answers.count(200) == 1, answers
    finally:
        context.close()
    assert page.errors == []


# ---------------------------------------------------------------------------- cells -> views

def test_show_attention_from_a_cell_draws_what_cpython_computes(page):
    Cell(page, "seeded").run()
    view = Widget(page, "view").locator
    expect(view).to_have_attribute("data-updated", "1")
    expect(view.locator(".widget-source")).to_contain_text("Cell 1")
    expected = expected_example(6, 8, 3)["arrays"]
    for name in ("weights", "scores", "out"):
        np.testing.assert_allclose(table_values(page, "view", name), expected[name], atol=1e-4)
    w = expected["weights"]
    assert tuple(page.evaluate(BRIGHTEST, "view")) == np.unravel_index(w.argmax(), w.shape)


def test_click_and_arrow_key_move_the_selection_and_summary(page):
    view = Widget(page, "view").locator
    g = page.evaluate("lessonWidgets.find((w) => w.id === 'view').view.components.weights.layout()")
    canvas = view.locator(".attn-figure-weights canvas")
    canvas.click(position={"x": g["rects"][0]["x"] + g["cell"] * 0.5, "y": g["top"] + g["cell"] * 1.5})
    summary = view.locator(".attn-summary-host")
    expect(view.locator(".attn-view")).to_have_attribute("data-selected", "1")
    expect(summary).to_contain_text("'\u2068cat\u2069' sends")
    page.keyboard.press("ArrowDown")
    expect(view.locator(".attn-view")).to_have_attribute("data-selected", "2")
    expect(summary).to_contain_text("'\u2068sat\u2069' sends")


def test_bad_arrays_show_the_message_in_the_cell_and_on_the_view(page):
    steps = Widget(page, "steps").locator
    cases = [
        (None, "row 0 sums to 2"),  # the fixture cell as written
        ("import numpy as np\nfrom lessonpy.maths.show import show_attention\n"
         "w = np.full((3, 3), 1 / 3); w[1, 2] = np.nan\nshow_attention(weights=w, target='steps')", "contains NaN"),
        ("import numpy as np\nfrom lessonpy.maths.show import show_attention\n"
         "show_attention(Q=np.ones((4, 3)), K=np.ones((5, 3)), target='steps')", "every array needs the same T"),
    ]
    for code, message in cases:
        out = Cell(page, "bad").run(code)
        expect(out).to_contain_text(message)
        alert = steps.locator(".attn-message")
        expect(alert).to_contain_text(message)
        assert alert.get_attribute("role") == "alert"
        expect(steps.locator(".widget-source")).to_contain_text("cannot be drawn")
    # the view recovers with good arrays, and the stepper steps through them
    Cell(page, "bad").run("import numpy as np\nfrom lessonpy.maths.show import show_attention\n"
                     "show_attention(weights=np.full((3, 3), 1 / 3), tokens=['a', 'b', 'c'], target='steps')")
    expect(steps.locator(".attn-view")).to_have_attribute("data-state", "ok")
    expect(steps.locator(".attn-step-status")).to_contain_text("Step 0 of 9")  # new arrays start at step 0
    steps.get_by_role("button", name="Next: one step forward").click()
    expect(steps.locator(".attn-step-status")).to_contain_text("Step 1 of 9")


def test_a_cells_q_and_k_reach_the_step_through_as_one_q_dot_k_per_score(page):
    """show_attention's Q, K and what it divided Q·Kᵀ by travel from the page's Python to the panel."""
    steps = Widget(page, "steps").locator
    Cell(page, "bad").run("import numpy as np\nfrom lessonpy.maths.show import show_attention\n"
                     "Q = np.arange(12.0).reshape(3, 4) / 10\nK = np.ones((3, 4))\n"
                     "show_attention(Q=Q, K=K, tokens=['a', 'b', 'c'], target='steps')")
    expect(steps.locator(".attn-step-status")).to_contain_text("Step 0 of 9")
    steps.get_by_role("button", name="Next: one step forward").click()
    now = steps.locator(".attn-now")
    expect(now).to_have_attribute("data-kind", "score")
    # query a = [0, .1, .2, .3], every key all ones: q·k = 0.6, ÷ √4 = 0.30
    expect(now).to_contain_text("q·k = 0.60 (the sum of the products) ÷ √4 = 0.30")
    assert float(now.get_attribute("data-score")) == pytest.approx(0.3, rel=1e-6)


# JS: the left edges of two words of the view's summary, as laid out on the screen.
WORD_X = """([wid, words]) => {
  const host = document.querySelector(`#widget-${wid} .attn-summary-host`);
  const walker = document.createTreeWalker(host, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!words.every((w) => node.data.includes(w))) continue;
    return words.map((w) => {
      const range = document.createRange();
      const at = node.data.indexOf(w);
      range.setStart(node, at);
      range.setEnd(node, at + w.length);
      return range.getBoundingClientRect().left;
    });
  }
  return null;
}"""


def test_a_right_to_left_override_in_a_label_stays_inside_the_label(page):
    """U+202E in a token used to reverse the rest of the summary sentence."""
    steps = Widget(page, "steps").locator
    Cell(page, "bad").run("import numpy as np\nfrom lessonpy.maths.show import show_attention\n"
                     "show_attention(weights=np.full((3, 3), 1 / 3), tokens=['a', 'b', '\\u202eevil'], target='steps')")
    expect(steps.locator(".attn-view")).to_have_attribute("data-state", "ok")
    steps.get_by_role("button", name="Show all: the finished result").click()  # it opens at step 0
    expect(steps.locator(".attn-summary-host")).to_contain_text("sends 33% of its attention")
    sends, attention = page.evaluate(WORD_X, ["steps", ["sends", "attention"]])
    assert sends < attention, "the words after the label were laid out right to left"
    open_tables(steps)
    headers = steps.locator(".attn-table-weights th[scope=row]")
    expect(headers.nth(2)).to_have_attribute("dir", "auto")


# ---------------------------------------------------------------------------- dk-explorer

def explorer_settings(page, d_k, scale, causal=False):
    explorer = Widget(page, "explorer").locator
    explorer.get_by_label("Head size d_k").fill(str(int(math.log2(d_k))))
    explorer.get_by_label("Divide the scores by √d_k").set_checked(scale)
    explorer.get_by_label("Causal mask", exact=False).set_checked(causal)
    for key, value in [("dk", d_k), ("scale", scale), ("causal", causal)]:
        expect(explorer).to_have_attribute(f"data-{key}", str(value).lower(), timeout=RUN_TIMEOUT_MS)
    expect(explorer).to_have_attribute("data-state", "ready", timeout=RUN_TIMEOUT_MS)
    shown = explorer.locator(".widget-entropy tbody tr").evaluate_all(
        "trs => trs.map(tr => [...tr.querySelectorAll('td[data-value]')].map(td => Number(td.dataset.value)))")
    entropy, max_weight, row_sum = np.array(shown).T
    return explorer, entropy, max_weight, row_sum


def test_explorer_saturates_without_scaling_and_stays_soft_with_it(page):
    explorer, entropy, max_weight, _ = explorer_settings(page, 512, scale=False)
    expected = widgets.explore(d_k=512, scale=False)["stats"]
    np.testing.assert_allclose(max_weight, expected["max_weight"], atol=1e-4)
    np.testing.assert_allclose(entropy, expected["row_entropy"], atol=1e-4)
    assert max_weight.max() > 0.9
    expect(explorer.locator(".widget-stats")).to_contain_text(f"{expected['saturated_rows']} of 8")
    np.testing.assert_allclose(table_values(page, "explorer", "weights").max(axis=-1), max_weight, atol=1e-4)

    explorer, entropy, max_weight, _ = explorer_settings(page, 512, scale=True)
    assert max_weight.max() < 0.9
    np.testing.assert_allclose(entropy, widgets.explore(d_k=512, scale=True)["stats"]["row_entropy"], atol=1e-4)
    expect(explorer.locator(".widget-stats")).to_contain_text("0 of 8")


def test_causal_toggle_greys_the_future_and_rows_still_sum_to_one(page):
    explorer, entropy, _, row_sum = explorer_settings(page, 64, scale=True, causal=True)
    np.testing.assert_allclose(row_sum, 1, atol=1e-6)
    open_tables(explorer)
    scores = explorer.locator(".attn-table-scores tbody tr")
    assert scores.first.locator("td").nth(1).text_content() == "−∞ (masked)"
    weights = table_values(page, "explorer", "weights")
    assert np.all(weights[np.triu_indices(8, k=1)] == 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1, atol=1e-5)
    assert "masked" in explorer.locator(".attn-figure-scores figcaption").inner_text()
    # a causal row t sees t + 1 keys: its entropy's bar is drawn against log(t + 1), not log T
    expect(explorer.locator(".widget-entropy caption")).to_contain_text("log(t + 1)")
    ceiling = np.log(np.arange(1, 9))
    np.testing.assert_allclose(entropy_bars(explorer), np.divide(entropy, ceiling, out=np.zeros(8), where=ceiling > 0), atol=1e-3)
    explorer, entropy, _, _ = explorer_settings(page, 64, scale=True, causal=False)
    expect(explorer.locator(".widget-entropy caption")).not_to_contain_text("log(t + 1)")
    np.testing.assert_allclose(entropy_bars(explorer), entropy / np.log(8), atol=1e-3)


def entropy_bars(explorer):
    """Each entropy bar's length as a fraction of its full width (its style's percentage)."""
    widths = explorer.locator(".widget-entropy .widget-bar").evaluate_all("spans => spans.map(s => s.style.width)")
    return np.array([float(w.rstrip("%")) / 100 for w in widths])


# ---------------------------------------------------------------------------- heads

def test_heads_shows_one_pattern_per_head_and_the_same_parameter_count(page):
    heads = Widget(page, "heads").locator
    count = str(attention_param_count(48))
    for H in (1, 2, 4, 8, 3):
        heads.get_by_label("Number of heads H").select_option(str(H))
        expect(heads).to_have_attribute("data-heads", str(H), timeout=RUN_TIMEOUT_MS)
        expect(heads.locator(".heads-random .heads-panel")).to_have_count(min(H, 4))  # the rest on "Show all"
        expect(heads.locator(".heads-hand .heads-panel")).to_have_count(2)  # built by hand, whatever H is
        expect(heads.locator(".heads-split")).to_contain_text(f"(1, {H}, 8, {48 // H}) = (B, H, T, D)")
        expect(heads.locator(".heads-params")).to_have_attribute("data-count", count)
        expect(heads.locator(".heads-params")).to_contain_text("4 × 48² = 9,216")
    expected = widgets.heads(3)["arrays"]["weights"]
    open_tables(heads)
    shown = heads.locator(".heads-table").nth(2 + 2).locator("tbody td").evaluate_all(  # after the two hand-built
        "tds => tds.map(td => Number(td.dataset.value))")
    np.testing.assert_allclose(np.array(shown).reshape(8, 8), expected[2], atol=1e-6)


def test_heads_come_hand_built_first_then_four_random_ones_until_show_all(page):
    heads = Widget(page, "heads").locator
    heads.get_by_label("Number of heads H").select_option("12")
    expect(heads).to_have_attribute("data-heads", "12", timeout=RUN_TIMEOUT_MS)
    # the two heads that teach something come first, then the random ones
    assert heads.locator(".heads-grid").evaluate_all("gs => gs.map(g => g.classList[1])") == ["heads-hand", "heads-random"]
    random = heads.locator(".heads-random .heads-panel")
    expect(random).to_have_count(4)
    expect(heads.locator(".heads-note-random")).to_contain_text("The first 4 of 12")
    more = heads.get_by_role("button", name="Show all 12 heads")
    expect(more).to_have_attribute("aria-expanded", "false")
    more.click()
    expect(random).to_have_count(12)
    expect(random.last).to_contain_text("Random head 12 of 12")
    fewer = heads.get_by_role("button", name="Show the first 4 heads")
    expect(fewer).to_have_attribute("aria-expanded", "true")
    fewer.click()
    expect(random).to_have_count(4)
    # named as the lesson's `heads` cell names them: W_qkv (C, 3C) and W_o (C, C)
    expect(heads.locator(".heads-params")).to_contain_text("W_qkv 48×144 = 6,912 + W_o 48×48 = 2,304 = 9,216")
    heads.get_by_label("Number of heads H").select_option("4")
    expect(heads).to_have_attribute("data-heads", "4", timeout=RUN_TIMEOUT_MS)
    expect(heads.locator(".heads-more")).to_be_hidden()  # four heads: nothing more to show


# ---------------------------------------------------------------------------- real heads

def test_real_heads_grid_opens_heads_by_keyboard_click_and_featured_button(page):
    real = Widget(page, "real").locator
    real.scroll_into_view_if_needed()
    canvas = real.locator(".realheads-grid canvas")
    expect(canvas).to_have_attribute("data-heads", "72", timeout=RUN_TIMEOUT_MS)  # 6 layers x 12 heads drawn
    minilm = realheads.load("minilm")
    open_tables(real)
    caption = real.locator(".realheads-table caption")
    # the keyboard: from the open head (0, 2) one right and one down, then Enter
    canvas.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    expect(canvas).to_have_attribute("aria-label", re.compile(r"Focused: layer 1, head 3"))
    page.keyboard.press("Enter")
    expect(real).to_have_attribute("data-open", "1,3")
    expect(caption).to_contain_text("MiniLM-L6 (all-MiniLM-L6-v2), layer 1, head 3 (counted from 0)")
    np.testing.assert_array_equal(real_table(real), minilm.pattern(0, 1, 3))
    # a featured head's button
    f = minilm.featured_head("same")
    real.get_by_role("button", name=f"same word: layer {f['layer']}, head {f['head']}").click()
    expect(real).to_have_attribute("data-open", f"{f['layer']},{f['head']}")
    # SmolLM2, the sentence written twice: 270 heads; a click on a thumbnail opens it
    real.get_by_label("Model").select_option("smollm2")
    expect(canvas).to_have_attribute("data-heads", "270", timeout=RUN_TIMEOUT_MS)
    real.get_by_label("Sentence", exact=True).select_option("3")
    smol = realheads.load("smollm2")
    expect(real.locator(".realheads-tokens")).to_contain_text(f"{len(smol.tokens(3))} tokens", timeout=RUN_TIMEOUT_MS)
    ind = smol.featured_head("induction")
    rect = page.evaluate("""([layer, head]) => lessonWidgets.find((w) => w.id === 'real').grid.layout().rects
        .find((r) => r.layer === layer && r.head === head)""", [ind["layer"], ind["head"]])
    # the grid is taller than the screen (30 layers as rows): the click scrolls to the head first
    canvas.click(position={"x": rect["x"] + rect["size"] / 2, "y": rect["y"] + rect["size"] / 2})
    expect(real).to_have_attribute("data-open", f"{ind['layer']},{ind['head']}")
    expect(caption).to_contain_text(f"SmolLM2-135M-Instruct (4-bit GGUF), layer {ind['layer']}, head {ind['head']} (counted from 0)")
    np.testing.assert_array_equal(real_table(real), smol.pattern(3, ind["layer"], ind["head"]))


def test_real_heads_ablation_view_comes_with_the_widget_and_shows_the_shipped_results(page):
    from lessonpy.models import ablation

    real = Widget(page, "real").locator
    real.scroll_into_view_if_needed()  # the widget is made when near, its ablation view with it (the build's data)
    view = real.locator(".realheads-ablation")
    view.scroll_into_view_if_needed()
    expect(view).to_have_attribute("data-state", "ready")
    p = ablation.payload()
    bars = view.locator(".realheads-ablation-bar")
    expect(bars).to_have_count(len(p["heads"]))
    top = p["heads"][0]
    expect(bars.first).to_have_attribute("data-layer", str(top["layer"]))
    expect(bars.first).to_contain_text(f"+{top['increase']:.2f} nats")
    expect(view.locator(".realheads-ablation-bar.named")).to_have_count(sum(bool(h["names"]) for h in p["heads"]))
    runs = view.locator(".realheads-ablation-run")
    expect(runs).to_have_count(len(p["example"]["runs"]))
    for i, run in enumerate(p["example"]["runs"]):
        expect(runs.nth(i).locator("del")).to_have_count(sum(run["wrong"]))
    assert not page.errors


# ---------------------------------------------------------------------------- lookup-view

def lookup_step(tau):
    """The step of lessonpy.maths.lookup's temperature grid nearest tau (on the log scale the slider moves along)."""
    return int(np.argmin(np.abs(np.log(lookup.temperature_grid()) - math.log(tau))))


def lookup_table(section):
    """The lookup's table (N, 5): x, y, score q·k, weight at the slider's τ, value, from the cells' data-value."""
    open_tables(section)
    rows = section.locator(".attn-table tbody tr")
    return np.array(rows.evaluate_all("trs => trs.map(tr => [...tr.querySelectorAll('td')].map(td => Number(td.dataset.value)))"))


def test_show_lookup_from_a_cell_replaces_the_picture_and_the_slider_moves_without_python(page):
    soft = Widget(page, "soft").locator
    Cell(page, "lookup").run()
    expect(soft.locator(".widget-source")).to_contain_text("Showing what Cell 3 computed")
    others = {wid: Widget(page, wid).locator.get_attribute("data-updated") for wid in ("view", "steps")}
    updated = int(soft.get_attribute("data-updated"))
    Cell(page, "lookup").run()  # again: the cells it builds on have run, so this run alone sends arrays
    expect(soft).to_have_attribute("data-updated", str(updated + 1))
    expected = lookup.build_lookup_payload(keys=[[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [-0.6, 0.6]], query=[0.2, 1.0],
                                           values=[10.0, 20.0, 30.0, 40.0])["arrays"]
    view = soft.locator(".attn-lookup")
    step = lookup_step(0.25)  # the fence's temperature, kept for the reader's arrays
    expect(view).to_have_attribute("data-step", str(step))
    np.testing.assert_allclose(lookup_table(soft), np.column_stack([expected["keys"], expected["scores"], expected["weights"][step],
                                                                      expected["values"]]), atol=1e-6)
    # every temperature came with the one event: a move is drawn in the same task, no call to Python
    slider = soft.get_by_label("Temperature τ")
    for i in (0, len(lookup.temperature_grid()) - 1):
        slider.fill(str(i))
        assert view.get_attribute("data-step") == str(i)
        np.testing.assert_allclose(lookup_table(soft)[:, 3], expected["weights"][i], atol=1e-6)
        answer = soft.locator(".attn-lookup-stats dd").first.get_attribute("data-value")
        assert float(answer) == pytest.approx(expected["answers"][i], rel=1e-6)
    canvas = soft.locator("canvas")
    canvas.focus()
    page.keyboard.press("End")
    expect(canvas).to_have_attribute("data-focus", "3")
    expect(canvas).to_have_attribute("aria-label", re.compile(r"Focused: key 3 at \(−0\.60, 0\.60\)"))
    # show_lookup's events never reach the attention views
    assert {wid: Widget(page, wid).locator.get_attribute("data-updated") for wid in others} == others


def test_show_lookup_refusal_shows_in_the_cell_and_on_the_picture(page):
    soft = Widget(page, "soft").locator
    bad = ("from lessonpy.maths.lookup import show_lookup\n"
           "show_lookup(keys=[1.0, 0.0, 0.5], query=[1.0, 0.0], values=[1, 2, 3], target='soft')")
    out = Cell(page, "lookup").run(bad)
    message = "keys: expected an (N, 2) array, one 2-D point per row, got shape (3,)"
    expect(out).to_contain_text(message)
    expect(soft.locator(".attn-message")).to_contain_text(message)
    expect(soft.locator("canvas")).to_have_attribute("data-message", message)
    expect(soft.locator(".widget-source")).to_contain_text("cannot be drawn")
    # an untargeted call goes to the lookup-view after its cell, and the picture recovers
    Cell(page, "lookup").run("from lessonpy.maths.lookup import show_lookup\nshow_lookup(keys=[[3.0, 4.0]], query=[1.0, 0.0], values=[7.0])")
    expect(soft.locator(".attn-lookup")).to_have_attribute("data-state", "ok")
    np.testing.assert_allclose(lookup_table(soft), [[3, 4, 3, 1, 7]])
