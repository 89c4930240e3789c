"""The attention lesson as a reader meets it: every cell runs in Pyodide, the text states what
the cells print, the maths is typeset with MathML, and the module's code can be copied."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser import BOOT_TIMEOUT_MS
from lessonpy import lesson_numbers
from playwright.sync_api import expect

from sitebuild.lessons import read_lesson
from sitebuild.numbers import format_value

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parent.parent
LESSON = "lessons/attention/"
DONE = re.compile(r"^(ok|error|stopped)$")


@pytest.fixture(scope="module")
def context(browser):
    ctx = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def page(context, site_url):
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.goto(site_url + LESSON)
    expect(pg.locator(".py-status")).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    yield pg
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.fixture(scope="module")
def numbers():
    return {k: format_value(k, v) for k, v in lesson_numbers.numbers().items()}


def test_every_cell_runs_in_order_and_prints_what_the_text_states(page, numbers):
    cells = read_lesson(ROOT / "lessons" / "attention.md", maths=False).cells
    assert page.locator("[data-cell]").count() == len(cells)
    for cell in cells:
        box = page.locator(f'[data-cell="{cell.id}"]')
        box.get_by_role("button", name="Run").click()
        expect(box).to_have_attribute("data-status", DONE, timeout=60_000)
        out = box.locator(".cell-output")
        assert box.get_attribute("data-status") == "ok", f"cell {cell.id} failed:\n{out.inner_text()}"
        text = out.inner_text()
        assert "Ran code cell" not in text, f"cell {cell.id} needed earlier cells: they should have run"
        for key in lesson_numbers.CELL_PRINTS.get(cell.id, []):
            # Pyodide's numpy 2.0.2 must print what CPython's numpy gave the text
            assert numbers[key] in text, f"cell {cell.id}: expected {key} = {numbers[key]!r} in:\n{text}"


def test_the_text_states_the_computed_numbers(page, numbers):
    # textContent, not innerText: off-screen parts of the lesson are not rendered (content-visibility)
    text = page.evaluate("""() => {
        const article = document.querySelector("article.lesson").cloneNode(true);
        article.querySelectorAll("script, annotation").forEach((e) => e.remove());
        return article.textContent;
    }""")
    for key in ("draft_min", "draft_max", "draft_scaled_std", "sweep_raw_std_last", "sweep_scaled_entropy_last",
                "exp_limit", "attn_params", "attn_share_pct"):
        assert numbers[key] in text, key
    assert "{{" not in text and "num." not in text


def test_maths_is_typeset_with_mathml_and_no_tex_shows(page):
    katex = page.locator("article .katex")
    assert katex.count() > 20
    expect(katex.first.locator("math")).to_have_count(1)
    display = page.locator(".math-display .katex-display math[display=block]")
    assert display.count() >= 6
    # what a reader sees: no dollar signs, no backslash commands (the TeX sits only in MathML annotations)
    visible = page.evaluate("""() => {
        const clone = document.querySelector('article.lesson').cloneNode(true);
        clone.querySelectorAll('.katex-mathml, pre, code, script, .cell').forEach(e => e.remove());
        return clone.innerText;
    }""")
    assert "$" not in visible
    assert not re.search(r"\\(frac|sqrt|operatorname|mathbb|left|right)", visible)
    # the KaTeX stylesheet and fonts loaded, so the formulas are typeset, not raw spans
    font = page.locator(".katex .mathnormal").first.evaluate("e => getComputedStyle(e).fontFamily")
    assert "KaTeX" in font


def test_the_included_module_shows_and_copies(page):
    block = page.locator('[data-copy][data-source="py/scaffold/attention.py"]')
    expect(block).to_have_count(1)
    expect(block.locator(".code-title")).to_have_text("attention.py")
    expect(block.locator("pre")).to_contain_text("class MultiHeadAttention(nn.Module):")
    assert block.locator("pre .k").count() > 0  # highlighted
    button = block.get_by_role("button", name="Copy attention.py")
    expect(button).to_be_visible()
    button.click()
    expect(block.locator(".copy-status")).to_have_text("Copied")
    expect(button).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == (ROOT / "py" / "scaffold" / "attention.py").read_text(encoding="utf-8")
    expect(button).to_have_text("Copy", timeout=5_000)


def test_config_and_laptop_script_have_copy_buttons(page):
    expect(page.locator('[data-copy][data-source="py/scaffold/config.py"] .copy-button')).to_be_visible()
    script = page.locator("figure.code-block", has=page.locator(".code-title", has_text="check_attention.py"))
    expect(script.get_by_role("button", name="Copy check_attention.py")).to_be_visible()
