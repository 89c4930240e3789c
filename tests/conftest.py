import os
import sys
from collections import Counter
from pathlib import Path

# the browser's Python lives in py/ (lessonpy, scaffold); import it as the page does
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "py"))

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "lessons"))  # each lesson's numbers module, beside it


def pytest_collection_modifyitems(config, items):
    """The layers (pytest.ini's markers): every test of a *_browser.py file is a browser test, and every test
    that needs the real site built is slow, whether or not its file says so. The fast layer is what is left.

    And the order the two workers take the files in (pytest.ini: --dist loadfile --no-loadscope-reorder): the
    browser files, those with the most tests first, then the CPython files, whose many short tests keep both
    workers busy instead of one waiting for the other's last browser file, and the files that say they are long."""
    for item in items:
        if item.path.name.endswith("_browser.py"):
            item.add_marker(pytest.mark.browser)
        if "built_site" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    per_file = Counter(item.path for item in items)
    # A file that says it is long (LONG_FILE = True: the engine tests, Firefox and WebKit for minutes) goes last,
    # when the other worker has only CPython files left, which no load disturbs: beside WebKit's and Firefox's
    # boots, Chromium's Stop tests (a 1.5 s grace, a 1 s ping) and its layout-shift test (fonts late) failed now
    # and then. It costs the suite a few minutes of one idle worker.
    long_file = {item.path: getattr(item.module, "LONG_FILE", False) for item in items}

    def order(item):
        kind = 2 if long_file[item.path] else 0 if item.path.name.endswith("_browser.py") else 1
        return kind, -per_file[item.path], item.path.name

    items.sort(key=order)


@pytest.fixture
def bridge_events():
    """The events lessonpy.runtime.bridge records during one test (no page, so no sink: kept in a list)."""
    from lessonpy.runtime import bridge

    bridge.install_sink(None)
    bridge.recorded.clear()
    yield bridge.recorded
    bridge.recorded.clear()


def session_folder(tmp_path_factory) -> Path:
    """A folder every worker of this test session shares (pytest-xdist gives each worker a temporary folder
    of its own, inside this one; without xdist it is the session's own)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(tmp_path_factory, name: str, make) -> Path:
    """The site `make(out_dir)` builds, built once for the whole test session into <session folder>/<name>/site:
    the first worker to ask builds it, the others wait for it and serve the same files (read-only)."""
    from filelock import FileLock

    folder = session_folder(tmp_path_factory) / name
    out, done = folder / "site", folder / "built"
    with FileLock(str(folder) + ".lock"):
        if not done.exists():
            folder.mkdir(exist_ok=True)
            make(out)
            done.touch()
    return out


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
    """The real lessons built once per test session into a temporary site/."""
    import build

    return build_once(tmp_path_factory, "site", lambda out: build.build(build.Options(out_dir=out, log=lambda *_: None)))


@pytest.fixture(scope="session")
def playwright_instance():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_instance):
    from browser import launch

    b = launch(playwright_instance)
    yield b
    b.close()


def _serve(site, **options):
    from sitebuild.server import serve_in_thread

    return serve_in_thread(site, port=0, quiet=True, **options)


@pytest.fixture()
def serve():
    """Start servers for the test (serve(site, **options) -> base URL); all are stopped afterwards."""
    servers = []

    def start(site, **options):
        server, url = _serve(site, **options)
        servers.append(server)
        return url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def site_url(built_site):
    """Base URL of the built site, served with COOP/COEP (cross-origin isolated)."""
    server, url = _serve(built_site, isolate=True)
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def plain_site_url(built_site):
    """The same site without COOP/COEP, like most static hosts."""
    server, url = _serve(built_site, isolate=False)
    yield url
    server.shutdown()
