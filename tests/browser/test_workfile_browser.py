"""The reader's work in a file: "Save my work" and "Open saved work…" in the take-home section.

Browsers may delete what a site keeps (Safari after 7 days without a visit); a file of the reader's
brings the edits and answers back. A file the page cannot open changes nothing and says why in one sentence.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from browser import CODE, paste_code

pytestmark = pytest.mark.browser
LESSON = "lessons/attention/"
MY_CODE = "weights = np.exp(scores)  # mine, kept in a file"


@pytest.fixture(scope="module")
def page(browser, site_url):
    """One page for the module (loading it is slow on a busy machine), with empty storage."""
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.goto(site_url + LESSON)
    wait_ready(page)
    yield page
    context.close()


def wait_ready(page):
    expect(page.locator("body")).to_have_attribute("data-cells", "ready", timeout=60_000)


def take_home(page):
    return page.get_by_role("region", name="Take it home")


def stored(page) -> dict:
    return page.evaluate("Object.fromEntries(Object.entries(localStorage))")


def open_file(page, name: str, contents: bytes, mime="application/json"):
    take_home(page).get_by_label("Open saved work…").set_input_files(
        files=[{"name": name, "mimeType": mime, "buffer": contents}])


def refuses(page, name: str, contents: bytes, sentence: str):
    """Opening the file says `sentence` and changes nothing: storage as it was, the page not reloaded."""
    before = stored(page)
    page.evaluate("window.stillThisPage = true")
    open_file(page, name, contents)
    expect(take_home(page).get_by_role("status")).to_have_text(sentence)
    assert stored(page) == before
    assert page.evaluate("window.stillThisPage === true"), "the page reloaded"


def test_saved_work_comes_back_after_the_browser_deleted_it(page):
    status = take_home(page).get_by_role("status")
    take_home(page).get_by_role("button", name="Save my work").click()
    expect(status).to_contain_text("Nothing is saved yet")

    cell = page.locator('[data-cell="softmax"]')
    paste_code(cell, MY_CODE)
    quiz = page.locator('[data-quiz="quiz-rows"]')
    # a wrong choice (the build shuffles them: data-correct names the right ones by key)
    right, authored = quiz.get_attribute("data-correct").split(), quiz.get_attribute("data-authored").split()
    wrong = next(key for key in authored if key not in right)
    choice = quiz.locator(f'input[value="{wrong}"]')
    choice.check()
    quiz.get_by_role("button", name="Check").click()
    expect(quiz.locator(".quiz-feedback")).to_contain_text("Not quite")

    with page.expect_download() as info:
        take_home(page).get_by_role("button", name="Save my work").click()
    assert info.value.suggested_filename == "attention-my-work.json"
    path = Path(info.value.path())
    work = json.loads(path.read_text(encoding="utf-8"))
    assert (work["format"], work["version"], work["lesson"]) == ("attention-lesson-work", 1, "attention")
    assert work["items"]["cell:softmax"]["code"] == MY_CODE
    assert work["items"]["quiz:quiz-rows"]["chosen"] == [authored.index(wrong)]  # saved in the lesson's order
    expect(status).to_have_text("Saved your work (2 items) as attention-my-work.json: "
                                "“Open saved work…” brings it back, in this browser or another.")

    # What Safari does after 7 days without a visit: storage is gone, the next visit shows the lesson's own.
    page.evaluate("localStorage.clear()")
    page.reload()
    wait_ready(page)
    expect(cell.locator(CODE).first).not_to_contain_text("kept in a file")
    expect(choice).not_to_be_checked()

    with page.expect_navigation():
        take_home(page).get_by_label("Open saved work…").set_input_files(path)
    wait_ready(page)
    expect(cell.locator(CODE).first).to_have_text(MY_CODE)
    expect(choice).to_be_checked()
    expect(quiz.locator(".quiz-feedback")).to_contain_text("Not quite")


def test_a_file_that_is_not_this_lessons_work_changes_nothing(page):
    work = {"format": "attention-lesson-work", "version": 1, "lesson": "attention", "saved": "2025-01-01T00:00:00Z",
            "items": {"cell:scores": {"code": "print('from a file')", "base": "0"}}}
    refuses(page, "notes.json", b"these are not the droids",
            "This file is not a saved-work file or a notebook (it is not JSON): nothing was changed.")
    refuses(page, "causal.json", json.dumps({**work, "lesson": "causal-mask"}).encode(),
            "This file holds work on another lesson (“causal-mask”): open it on that lesson's page. Nothing was changed.")
    refuses(page, "future.json", json.dumps({**work, "version": 2}).encode(),
            "This file was saved by another version of the page (format version 2, this page reads 1): nothing was changed.")
    refuses(page, "damaged.json", json.dumps({**work, "items": {"cell:scores": {"code": 42}}}).encode(),
            "This file is damaged (its item “cell:scores” is not what the page saves): nothing was changed.")
    refuses(page, "huge.json", b" " * (5 * 1024 * 1024 + 1),
            "This file is too big to be saved work (5.0 MB; the page opens files up to 5 MB): nothing was changed.")
    # Storage that refuses the writes: said, and no reload (the page is what the reader has).
    page.evaluate("() => { Storage.prototype.setItem = () => { throw new DOMException('quota', 'QuotaExceededError'); }; }")
    refuses(page, "work.json", json.dumps(work).encode(),
            "This browser's storage refused the work (it is full, or turned off): nothing was changed, "
            "and the page is as it was.")


def test_a_notebook_with_my_edits_opens_as_edits_and_persistence_is_asked_at_the_first_save(browser, site_url):
    # The browser grants persistent storage here (Chromium decides by its own measure of engagement otherwise).
    context = browser.new_context(accept_downloads=True)
    context.add_init_script("""
        window.persistAsks = 0;
        navigator.storage.persist = async () => { window.persistAsks += 1; return true; };
        navigator.storage.persisted = async () => false;""")
    try:
        page = context.new_page()
        page.goto(site_url + LESSON)
        wait_ready(page)
        keep = take_home(page).locator(".take-home-keep")
        expect(keep).to_have_text("Browsers may delete what a site keeps, Safari after 7 days without a visit: "
                                  "save your work to a file to keep it.")
        assert page.evaluate("window.persistAsks") == 0, "asked at load"

        cell_code = "print('my scores')"
        answer = "def attention_params(n_embd, n_head):\n    return 4 * n_embd * n_embd"
        paste_code(page.locator('[data-cell="scores"]'), cell_code)
        expect(keep).to_contain_text("This browser has agreed not to delete what this site keeps to free space")
        paste_code(page.locator('[data-exercise="attention-params"]'), answer)
        assert page.evaluate("window.persistAsks") == 1, "asked once"

        with page.expect_download() as info:
            take_home(page).get_by_role("button", name="Download with my edits").click()
        path = Path(info.value.path())
        page.evaluate("localStorage.clear()")
        page.reload()
        wait_ready(page)
        expect(page.locator('[data-cell="scores"]').locator(CODE).first).not_to_have_text(cell_code)

        with page.expect_navigation():
            take_home(page).get_by_label("Open saved work…").set_input_files(
                files=[{"name": "attention-my-edits.ipynb", "mimeType": "application/x-ipynb+json",
                        "buffer": path.read_bytes()}])
        wait_ready(page)
        expect(page.locator('[data-cell="scores"]').locator(CODE).first).to_have_text(cell_code)
        expect(page.locator('[data-exercise="attention-params"]').locator(CODE).first).to_contain_text("return 4 * n_embd * n_embd")
        # only the two edits were written: the notebook's other cells are the lesson's own
        assert sorted(stored(page)) == ["attn-lesson:v1:attention:cell:scores",
                                        "attn-lesson:v1:attention:exercise:attention-params"]
    finally:
        context.close()
