"""Taking the lesson home from the page: the notebook download, and the same with the reader's edits."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

from browser import paste_code
from sitebuild.pages.lessons import read_lesson
from sitebuild.pages.notebook import lesson_notebook

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
LESSON = "lessons/attention/"


@pytest.fixture(scope="module")
def page(browser, site_url):
    """One page for the module (loading it is slow on a busy machine): the plain download runs
    first, with empty storage; the test with edits comes after it."""
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.goto(site_url + LESSON)
    expect(page.locator("body")).to_have_attribute("data-cells", "ready", timeout=60_000)
    yield page
    context.close()


def download(page, control) -> tuple[str, dict]:
    """Click *control*; return the suggested file name and the file's JSON."""
    with page.expect_download() as info:
        control.click()
    return info.value.suggested_filename, json.loads(Path(info.value.path()).read_text(encoding="utf-8"))


def expected_notebook(built_site):
    """The lesson's notebook as the build makes it, with the wheel and the data files the page links."""
    page = (built_site / LESSON / "index.html").read_text(encoding="utf-8")
    wheel = re.search(r'href="\.\./\.\./assets/[^"]+/([^"/]+\.whl)" download', page).group(1)
    data = re.findall(r'href="\.\./\.\./assets/[^"]+/([^"/]+\.npz)" download', page)
    assert data, "the page links the real-heads data files the notebook reads"
    return lesson_notebook(read_lesson(ROOT / "lessons" / "attention.md", maths=False), wheel, data)


def edit(page, selector, code):
    """Replace the code of an editor on the page the way a reader pastes it in."""
    paste_code(page.locator(selector), code)


def test_download_notebook_gives_the_lessons_notebook(page, built_site):
    take_home = page.get_by_role("region", name="Take it home")
    link = take_home.get_by_role("link", name="Download notebook")
    expect(link).to_have_attribute("download", "")
    expect(page.get_by_role("navigation", name="On this page").get_by_role("link", name=re.compile("notebook"))) \
        .to_have_attribute("href", "#take-home")
    served = page.request.get(link.evaluate("a => a.href"))
    assert served.headers["content-type"] == "application/x-ipynb+json"
    name, data = download(page, link)
    assert name == "attention.ipynb"
    nbformat.validate(nbformat.from_dict(data))
    expected = expected_notebook(built_site)
    assert len(data["cells"]) == len(expected.cells)
    assert ["".join(c["source"]) for c in data["cells"]] == [c.source for c in expected.cells]
    wheel = take_home.get_by_role("link", name=re.compile(r"Download the helpers"))
    response = page.request.get(wheel.evaluate("a => a.href"))
    assert response.ok and response.body()[:2] == b"PK", "the wheel the notebook installs is served"


def test_download_with_my_edits_puts_the_edited_cell_and_answer_in(page, built_site):
    cell_code = 'scores = Q @ K.T / np.sqrt(K.shape[-1])\nprint("my own scores", scores.shape)'
    answer = "def attention_params(n_embd, n_head):\n    return 4 * n_embd * n_embd"
    edit(page, '[data-cell="scores"]', cell_code)
    edit(page, '[data-exercise="attention-params"]', answer)
    button = page.get_by_role("button", name="Download with my edits")
    expect(button).to_be_enabled()
    name, data = download(page, button)
    assert name == "attention-my-edits.ipynb"
    nbformat.validate(nbformat.from_dict(data))
    expected = expected_notebook(built_site)
    assert len(data["cells"]) == len(expected.cells)
    changed = {}
    for got, want in zip(data["cells"], expected.cells):
        if "".join(got["source"]) != want.source:
            changed[json.dumps(got["metadata"]["lesson"], sort_keys=True)] = "".join(got["source"])
    assert changed == {'{"cell": "scores"}': cell_code,
                       '{"exercise": "attention-params"}': f"%%exercise attention-params\n{answer}"}
    expect(page.get_by_role("region", name="Take it home").get_by_role("status")).to_have_text(
        "Saved the notebook with your 2 edited cells.")


def test_with_storage_full_the_edits_on_the_page_are_what_is_exported(browser, site_url, built_site):
    # Storage refuses every write: the edits live only on the page, and the notebook takes them from there.
    context = browser.new_context(accept_downloads=True)
    try:
        context.add_init_script("Storage.prototype.setItem = function () { throw new DOMException('quota', 'QuotaExceededError'); };")
        page = context.new_page()
        page.goto(site_url + LESSON)
        expect(page.locator("body")).to_have_attribute("data-cells", "ready", timeout=60_000)
        cell_code = "print('only on this page')"
        edit(page, '[data-cell="softmax"]', cell_code)
        expect(page.locator(".storage-notice")).to_contain_text("storage for the site is full")
        button = page.get_by_role("button", name="Download with my edits")
        expect(button).to_be_enabled()
        _, data = download(page, button)
        expected = expected_notebook(built_site)
        changed = {json.dumps(got["metadata"]["lesson"]): "".join(got["source"])
                   for got, want in zip(data["cells"], expected.cells) if "".join(got["source"]) != want.source}
        assert changed == {'{"cell": "softmax"}': cell_code}
        expect(page.get_by_role("region", name="Take it home").get_by_role("status")).to_have_text(
            "Saved the notebook with your 1 edited cell.")
    finally:
        context.close()
