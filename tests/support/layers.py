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
    order). First the files that say they are long (LONG_FILE = True: the engine smoke, Firefox and WebKit for
    minutes): last, they ended the run on one worker while the other idled (4-5 min of the suite). Then the
    browser files, those with the most tests first; then the CPython files, whose many short tests keep both
    workers busy instead of one waiting for the other's last browser file."""
    kind = 0 if long_file else 1 if is_browser_file(path) else 2
    return kind, -tests_in_file, path.name
