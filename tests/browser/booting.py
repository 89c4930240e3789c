"""How a lesson page's Python comes up: from the build's memory snapshot or a normal start, on a first visit or a
revisit. Read the page's report of its boot, serve the page with its snapshot spec changed, and read the build's
plan of what the page fetches later. For the boot tests (snapshot, preload, stdlib rest, wheel split, install)."""

from __future__ import annotations

import json
import re
import time

from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS
from pages import LESSON, wait_python_ready


RESTART = "Restart Python (clear all variables)"  # the page's button that restarts Python


def boot(page) -> dict:
    """How the page's Python came up: {"from": "snapshot"|"start", "note": why not restored, or None}."""
    return page.evaluate("lessonPage.runtime.info.boot")


def first_visit_kept(page, url):
    """A first visit: Python starts normally, then the service worker keeps the site, snapshot included."""
    page.goto(url + LESSON)
    wait_python_ready(page)
    assert boot(page) == {"from": "start", "note": None}
    expect(page.locator("body")).to_have_attribute("data-offline", "ready", timeout=120_000)


def new_interpreter(page):
    """Wait until a new interpreter has reported (the old report was marked `old`), then until it is ready.
    (A polling loop: the page's CSP refuses the string evaluation wait_for_function needs.)"""
    deadline = time.monotonic() + BOOT_TIMEOUT_MS / 1000
    while page.evaluate("lessonPage.runtime.info?.old") and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert not page.evaluate("lessonPage.runtime.info?.old"), "no new interpreter reported"
    wait_python_ready(page)


def patch_config(context, url, edit):
    """Serve the lesson page with its snapshot spec changed by `edit` (a dict -> None)."""
    def handle(route):
        response = route.fetch()
        html = response.text()
        match = re.search(r'<script[^>]*id="page-config"[^>]*>(.*?)</script>', html, re.S)
        config = json.loads(match.group(1))
        edit(config["snapshot"])
        body = html[:match.start(1)] + json.dumps(config).replace("<", "\\u003c") + html[match.end(1):]
        headers = {k: v for k, v in response.headers.items() if k not in ("content-encoding", "content-length")}
        route.fulfill(status=response.status, body=body, headers=headers)
    context.route(url + LESSON, handle)


def boot_normally(context, url):
    """Serve the lesson page as a build that restores only on revisits does (--snapshot revisit): a first visit
    boots Python normally. Readers' pages (--snapshot always, as built_site) restore at once."""
    patch_config(context, url, lambda spec: spec.update(fetch="kept"))


def unpatch_config(context):
    """Undo patch_config. A handler may still be serving a request for the page (the service worker keeps the
    pages, fetching them again once Python is ready); unrouted, that request goes on unpatched, and the handler's
    own fulfill then fails ("Route is already handled", once in a loaded full run): nothing is left to serve."""
    context.unroute_all(behavior="ignoreErrors")



def lesson_config(site) -> dict:
    """The lesson page's config (its page-config script) in a built site."""
    html = (site / LESSON / "index.html").read_text(encoding="utf-8")
    return json.loads(re.search(r'<script[^>]*id="page-config"[^>]*>(.*?)</script>', html, re.S).group(1))


def later_modules(site, item) -> list[str]:
    """The modules of a later file of the page's plan: its list in the plan's file of them, in the Pyodide folder."""
    config = lesson_config(site)
    lists = json.loads((site / LESSON / config["indexURL"] / config["plan"]["modulesFile"]).read_text(encoding="utf-8"))
    return lists[item["modules"]]

