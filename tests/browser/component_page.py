"""The components' fixture page (tests/components/fixture.html): the canvas components of static/js/components/
mounted on arrays computed in Python (tests/components/sample_data.py), with no lesson and no Pyodide around them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = "tests/components/fixture.html"

_spec = importlib.util.spec_from_file_location("sample_data", ROOT / "tests/components/sample_data.py")
sample_data = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sample_data)


def open_fixture(browser, base_url, **context_options):
    """A new context and the fixture page in it, its script ready: (context, page, the page's uncaught errors)."""
    context_options.setdefault("viewport", {"width": 1100, "height": 900})
    context = browser.new_context(**context_options)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{base_url}/{FIXTURE}")
    page.wait_for_function("window.fxReady === true")
    return context, page, errors
