import sys
from pathlib import Path

# the browser's Python lives in py/ (lessonpy, scaffold); import it as the page does
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "py"))

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs Node or a whole build (seconds)")
    config.addinivalue_line("markers", "browser: drives a real Chromium with a real Pyodide")


@pytest.fixture
def bridge_events():
    """The events lessonpy.bridge records during one test (no page, so no sink: kept in a list)."""
    from lessonpy import bridge

    bridge.install_sink(None)
    bridge.recorded.clear()
    yield bridge.recorded
    bridge.recorded.clear()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The real lessons built once per test session into a temporary site/."""
    import build

    out = tmp_path_factory.mktemp("site") / "site"
    build.build(build.Options(out_dir=out, log=lambda *_: None))
    return out


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
