"""What every layer shares: the layers' markers, the order the workers take the files in, and the real site built
once per session. The layers' own fixtures are in their folders' conftest.py (unit/, build/, browser/, engines/);
plain helpers several layers use are modules in support/ (on sys.path: pytest.ini's pythonpath)."""

from collections import Counter
from pathlib import Path

import pytest

from sites import build_once, session_folder

TESTS = Path(__file__).resolve().parent
BROWSER_LAYERS = (TESTS / "browser", TESTS / "engines")  # real browsers: Chromium (Playwright), Firefox, WebKit


def pytest_collection_modifyitems(config, items):
    """The layers (pytest.ini's markers): every test under browser/ or engines/ is a browser test, and every test
    that needs the real site built is slow, whether or not its file says so. The fast layer is what is left.

    And the order the two workers take the files in (pytest.ini: --dist loadfile --no-loadscope-reorder): first
    the files that say they are long (LONG_FILE = True: the engine smoke, Firefox and WebKit for minutes), so
    that they do not end the run on one worker while the other idles; then the browser files, those with the
    most tests first; then the CPython files, whose many short tests keep both workers busy instead of one waiting
    for the other's last browser file."""
    for item in items:
        if any(item.path.is_relative_to(layer) for layer in BROWSER_LAYERS):
            item.add_marker(pytest.mark.browser)
        if "built_site" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    per_file = Counter(item.path for item in items)
    long_file = {item.path: getattr(item.module, "LONG_FILE", False) for item in items}

    def order(item):
        browser = any(item.path.is_relative_to(layer) for layer in BROWSER_LAYERS)
        kind = 0 if long_file[item.path] else 1 if browser else 2
        return kind, -per_file[item.path], item.path.name

    items.sort(key=order)


@pytest.fixture(scope="session", autouse=True)
def builds_one_at_a_time(tmp_path_factory):
    """Every build of the session's workers takes its turn (one lock across them). The build's cache is safe
    for two writers (each result lands by an atomic rename), but on a cold cache two workers would each
    precompile, pack and brotli-compress the same Pyodide files; in turn, the second finds them cached."""
    from filelock import FileLock

    import build

    lock = FileLock(str(session_folder(tmp_path_factory) / "build.lock"))
    unlocked = build.build

    def build_in_turn(opts):
        with lock:
            return unlocked(opts)

    build.build = build_in_turn
    yield
    build.build = unlocked


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The real lessons built once per test session into a temporary site/, as readers get them: Python restored
    from the build's memory snapshot on a first visit too (build.py's default, --snapshot always)."""
    import build

    return build_once(tmp_path_factory, "site", lambda out: build.build(
        build.Options(out_dir=out, snapshot="always", log=lambda *_: None)))
