"""What every layer shares: the layers' markers, the order the workers take the files in, and the real site built
once per session. The layers' own fixtures are in their folders' conftest.py (unit/, browser/ and its components/, widgets/);
plain helpers several layers use are modules in support/ (on sys.path: pytest.ini's pythonpath)."""

from collections import Counter

import pytest

from layers import file_order, is_browser_file
from sites import build_once, session_folder


def pytest_collection_modifyitems(config, items):
    """The layers (pytest.ini's markers): every test under browser/ or engines/ is a browser test, and every test
    that needs the real site built is slow, whether or not its file says so. The fast layer is what is left. And
    the order the workers take the files in (layers.file_order)."""
    for item in items:
        if is_browser_file(item.path):
            item.add_marker(pytest.mark.browser)
        if "built_site" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    per_file = Counter(item.path for item in items)
    long_file = {item.path: getattr(item.module, "LONG_FILE", False) for item in items}
    items.sort(key=lambda item: file_order(item.path, per_file[item.path], long_file[item.path]))


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
