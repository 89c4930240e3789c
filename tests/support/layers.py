"""The test suite's layers, by folder (tests/conftest.py applies them): which files drive a real browser, and the
order the xdist workers take the files in."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: Real browsers: Chromium through Playwright (browser/), Firefox and WebKit (engines/).
BROWSER_LAYERS = (TESTS / "browser", TESTS / "engines")


def is_browser_file(path: Path) -> bool:
    return any(path.is_relative_to(layer) for layer in BROWSER_LAYERS)


def file_order(path: Path, tests_in_file: int, long_file: bool) -> tuple:
    """The sort key of a test file (pytest.ini: --dist loadfile --no-loadscope-reorder hands the files out in this
    order). First the browser files, those with the most tests first; then the CPython files, whose many short
    tests keep both workers busy; last the files that say they are long (LONG_FILE = True: the engine smoke,
    Firefox and WebKit for minutes). Run first, beside the Chromium files, they made both flaky on this machine
    (one idle full run: WebKit's Stop not ending a loop within 120 s, three Chromium tests failing that pass
    alone, one scroll that never ended); last, they cost the suite some minutes of one worker idling."""
    kind = 2 if long_file else 0 if is_browser_file(path) else 1
    return kind, -tests_in_file, path.name
