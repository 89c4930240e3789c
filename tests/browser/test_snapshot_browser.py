"""Python restored from the build's memory snapshot, and the normal boot whenever that fails.

The default build keeps the snapshot for revisits: a first visit starts Python, the service worker
then keeps the snapshot, and the next load (and a restart) restores it. Each way the lesson must
work the same: cells, a matplotlib figure, Stop, an exercise, Restart. Restoring fails quietly
into the normal boot when the kept copy is corrupt (sha256), when the restore throws (a layout
that does not match), or when a download ("always" builds) finds no file; the worker's own early
compile of the wasm failing only means compiling it once more. A restore reads Pyodide's large files
(but the wasm) from the service worker's copies, and the network's when none is kept.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, LOOP, RUN_TIMEOUT_MS, first_fails, paste_code, protocol_errors, wait_looping
from booting import RESTART, boot, first_visit_kept, new_interpreter, patch_config, unpatch_config
from pages import LESSON, Cell, wait_python_ready
from practice_site import solution_of

pytestmark = pytest.mark.browser
ZONE = "Asia/Kolkata"  # not the build machine's (UTC here), and a half-hour offset


@pytest.fixture()
def own_site(serve_copy):
    return serve_copy(isolate=True)


@pytest.fixture()
def context(browser):
    ctx = browser.new_context(timezone_id=ZONE)
    yield ctx
    ctx.close()


def draws(page) -> str:
    out = Cell(page, "setup").run_ok("import random, numpy as np\nprint('draws', np.random.random(), random.random())")
    return re.search(r"draws \S+ \S+", out.inner_text()).group(0)


def lesson_works(page):
    """Cells, the clock and zone, a figure, Stop in place, an exercise, then Restart (from the snapshot):
    the reader sees the same lesson whichever way Python came up."""
    out = Cell(page, "setup").run_ok("import numpy as np\nprobe = np.arange(6).reshape(2, 3)\n"
                             "print('sum', probe.sum(), (probe @ probe.T).tolist())")
    expect(out).to_contain_text("sum 15 [[5, 14], [14, 50]]")
    # What the interpreter holds (the restore must have reset it), not a zone worked out afresh.
    out = Cell(page, "scores").run_ok("import time\nprint('zone', time.timezone, time.altzone)")
    js = page.evaluate("new Date().getTimezoneOffset() * 60")
    assert js == -19800
    expect(out).to_contain_text(f"zone {js} {js}")  # the reader's zone (no summer time), not the build machine's
    out = Cell(page, "scores").run_ok("import time\nprint('clock', abs(time.time() - %d / 1000) < 60)" % page.evaluate("Date.now()"))
    expect(out).to_contain_text("clock True")

    out = Cell(page, "scores").run_ok("import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 0])\nplt.show()", timeout=90_000)
    expect(out.locator("img.out-figure")).to_have_count(1)

    paste_code(Cell(page, "scores").locator, LOOP)
    Cell(page, "scores").locator.get_by_role("button", name="Run").click()
    wait_looping(Cell(page, "scores").locator)
    Cell(page, "scores").locator.get_by_role("button", name="Stop").click()
    expect(Cell(page, "scores").locator).to_have_attribute("data-status", "stopped", timeout=10_000)
    expect(Cell(page, "scores").run_ok("print('kept', probe.sum())")).to_contain_text("kept 15")  # interrupted in place

    ex = page.get_by_role("region", name=re.compile("Scaled attention"))
    ex.scroll_into_view_if_needed()
    paste_code(ex, solution_of(ex))
    ex.get_by_role("button", name="Check my answer").click()
    expect(ex).to_have_attribute("data-status", "right", timeout=RUN_TIMEOUT_MS)

    # Once the service worker has kept the site (again, after a corrupt copy was dropped), a restart restores.
    expect(page.locator("body")).to_have_attribute("data-offline", "ready", timeout=120_000)
    page.evaluate("lessonPage.runtime.info.old = true")  # gone once a new interpreter reports
    page.get_by_role("button", name=RESTART).click()
    new_interpreter(page)
    assert boot(page) == {"from": "snapshot", "note": None}
    expect(Cell(page, "setup").run_ok("print('probe' in globals(), np.ones(3).sum())")).to_contain_text("False 3.0")
    # Nothing on the page speaks of snapshots or failures: a fallback is only slower.
    assert page.get_by_role("alert").count() == 0
    assert "snapshot" not in page.locator("body").inner_text().lower()
    assert protocol_errors(page) == []


def without_jspi(page):
    """Both boots give the same interpreter: no stack switching (hideJSPI in static/js/shared/pyodide-seams.mjs), which a restore cannot
    have (the image is made without it) and with which a cell's run is a suspendable task."""
    out = Cell(page, "scores").run_ok("from pyodide.ffi import can_run_sync\nprint('run_sync', can_run_sync())")
    expect(out).to_contain_text("run_sync False")


def test_a_revisit_restores_the_snapshot_and_the_lesson_works_the_same(context, own_site):
    page = context.new_page()
    first_visit_kept(page, own_site)
    first = draws(page)
    without_jspi(page)

    page.reload()
    wait_python_ready(page)
    assert boot(page) == {"from": "snapshot", "note": None}
    second = draws(page)
    without_jspi(page)
    page.reload()
    wait_python_ready(page)
    assert boot(page)["from"] == "snapshot"
    third = draws(page)
    # Every load draws its own numbers: the image's seeds were replaced with fresh entropy.
    assert len({first, second, third}) == 3, (first, second, third)

    lesson_works(page)


SNAPSHOT_URL = "new URL(lessonPage.config.snapshot.url, document.baseURI).href"
WHEEL_URL = "new URL(lessonPage.config.wheelURL, document.baseURI).href"


def corrupt_kept_copy(page, which=SNAPSHOT_URL):
    """Flip one byte of the file the service worker keeps (same size, another sha256): the snapshot, or the
    file whose URL the expression `which` gives."""
    page.evaluate("""async (url) => {
      for (const name of await caches.keys()) {
        const cache = await caches.open(name);
        const kept = await cache.match(url);
        if (!kept) continue;
        const bytes = new Uint8Array(await kept.arrayBuffer());
        bytes[bytes.length >> 1] ^= 0xff;
        await cache.put(url, new Response(bytes));
        return;
      }
      throw new Error("no kept copy of " + url);
    }""", page.evaluate(which))


def kept_sha256(page, which) -> str | None:
    """The SHA-256 (hex) of the service worker's copy of the file whose URL `which` gives, None: not kept."""
    return page.evaluate("""async (url) => {
      const kept = await caches.match(url);
      if (!kept) return null;
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await kept.arrayBuffer()));
      return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
    }""", page.evaluate(which))


def test_a_corrupt_snapshot_or_wheel_falls_back_to_the_network_and_is_replaced(context, own_site):
    # A kept copy gone bad (a disk error, a write cut short): the snapshot's is checked and skipped, the lesson
    # wheel's is checked and dropped (it used to end every visit in "Python could not start"); the visit works,
    # and the precache keeps good copies again.
    page = context.new_page()
    first_visit_kept(page, own_site)
    corrupt_kept_copy(page)
    corrupt_kept_copy(page, WHEEL_URL)
    wheel_sha256 = page.evaluate("lessonPage.config.wheelSha256")
    assert kept_sha256(page, WHEEL_URL) != wheel_sha256
    page.reload()
    wait_python_ready(page)
    assert boot(page)["from"] == "start"
    assert "sha256" in boot(page)["note"]
    lesson_works(page)
    expect(page.locator("body")).to_have_attribute("data-offline", "ready", timeout=120_000)
    assert kept_sha256(page, WHEEL_URL) == wheel_sha256


def test_a_restore_that_throws_or_finds_another_memory_boots_normally_and_a_failed_compile_is_redone(context, own_site):
    # One first visit, then three revisits, each with its own fault; the kept snapshot stays as it was.
    page = context.new_page()
    first_visit_kept(page, own_site)
    check = "import numpy as np\nprint('ok', np.eye(2).sum())"

    # 1. The restore throws (a function table that does not match): the normal boot, saying why.
    patch_config(context, own_site, lambda spec: spec.update(tableLength=spec["tableLength"] + 1))
    page.reload()
    wait_python_ready(page)
    assert boot(page)["from"] == "start"
    assert "function table" in boot(page)["note"]
    expect(Cell(page, "setup").run_ok(check)).to_contain_text("ok 2.0")
    unpatch_config(context)

    # 2. The image leaves out the pages the wasm module initialises (sitebuild/startup/snapshot_image.py); when the
    # page's memory does not hold them as the build saw them (here: another hash expected), nothing of it is used.
    patch_config(context, own_site, lambda spec: spec.update(baseSha256="0" * 64))
    page.reload()
    wait_python_ready(page)
    assert boot(page) == {"from": "start", "note": "snapshot: the memory it builds on differs from the build's"}
    expect(Cell(page, "setup").run_ok(check)).to_contain_text("ok 2.0")
    unpatch_config(context)

    # 3. The worker compiles pyodide.asm.wasm itself, as soon as it starts (snapshot.js's startRuntime): its request
    # is the first for that file. Failing it, the restore fetches and compiles it again, and still happens.
    requests = []
    context.route(re.compile(r".*/pyodide\.asm\.wasm$"), first_fails(requests))
    page.reload()
    wait_python_ready(page)
    assert boot(page) == {"from": "snapshot", "note": None}
    marks = [name for name, _ in page.evaluate("lessonPage.runtime.info.marks")]
    assert "wasm compiled again" in marks and "wasm compiled" not in marks
    assert len(requests) == 2
    expect(Cell(page, "setup").run_ok("import numpy as np\nprint('ok', np.linalg.norm(np.ones(4)))")).to_contain_text("ok 2.0")


def large_file_requests(page, reload) -> list[str]:
    """The names of the requests for Pyodide's archives, the wasm and the snapshot made while `reload()`
    runs: what the page's worker read from the network or the HTTP cache, not from Cache Storage."""
    names = []

    def seen(request):
        name = request.url.rsplit("/", 1)[-1]
        if name.endswith((".wasm", ".whl", ".zip", ".snapshot", "-lock.json")) and "compression-probe" not in name:
            names.append(name)

    page.on("request", seen)
    try:
        reload()
    finally:
        page.remove_listener("request", seen)
    return sorted(names)


@pytest.mark.parametrize("compress, variant", [(True, "stored"), (False, "deflated")], ids=["stored", "deflated"])
def test_a_revisit_restores_with_either_archive_variant_from_the_kept_files_and_the_wasm_once(
        context, serve_copy, compress, variant):
    # The service worker keeps Pyodide's files decoded in Cache Storage: a restore reads the standard
    # library, the lock, numpy's wheel, the lesson's wheel and the image there (kept.js), not from the
    # HTTP cache, which decodes them again on every read. The wasm alone comes from the HTTP cache, where
    # V8's cache of compiled code is, and once: Pyodide's own fetch of it (for a compile the restore
    # does not use) is never made.
    page = context.new_page()
    first_visit_kept(page, serve_copy(isolate=True, compress=compress))

    def revisit():
        page.reload()
        wait_python_ready(page)

    assert large_file_requests(page, revisit) == ["pyodide.asm.wasm"]
    assert boot(page) == {"from": "snapshot", "note": None}
    # The image is made from the deflated archives; the worker restores it with whichever variant it picked,
    # and a stdlib module the image never imported is then read from the zip as mounted (other offsets if stored).
    assert page.evaluate("lessonPage.runtime.info.archives") == {"stdlib": variant, "wheels": variant}
    out = Cell(page, "setup").run_ok("import sys\nfresh = [m for m in ('statistics', 'difflib') if m not in sys.modules]\n"
                             "import statistics, difflib, numpy as np\n"
                             "print('stdlib', fresh, statistics.mean([1, 2, 3]), np.linalg.det(np.eye(2)))")
    expect(out).to_contain_text("stdlib ['statistics', 'difflib'] 2 1.0")

    # A cache that lacks them (evicted, say): the same files come from the network and the restore happens.
    expect(page.locator("body")).to_have_attribute("data-offline", "ready", timeout=120_000)  # nothing kept after this
    page.evaluate("""async () => {
      for (const name of await caches.keys()) {
        const cache = await caches.open(name);
        for (const request of await cache.keys()) if (/\\.(whl|zip)$|-lock\\.json$/.test(request.url)) await cache.delete(request);
      }
    }""")
    requested = large_file_requests(page, revisit)
    assert boot(page) == {"from": "snapshot", "note": None}
    assert requested.count("pyodide.asm.wasm") == 1
    assert any(name.startswith("python_stdlib") for name in requested)
    assert any(name.startswith("numpy-") for name in requested)
    assert any(name.startswith("lessonpy-") for name in requested)
    expect(Cell(page, "setup").run_ok("import numpy as np\nprint('ok', np.eye(3).sum())")).to_contain_text("ok 3.0")


def test_always_builds_restore_on_a_first_visit_and_boot_normally_without_the_file(browser, own_site):
    # "always" (build.py --snapshot always): the first visit downloads the snapshot beside the wasm.
    # No service worker here, so nothing is kept between the two loads.
    context = browser.new_context(timezone_id=ZONE, service_workers="block")
    patch_config(context, own_site, lambda spec: spec.update(fetch="always"))
    page = context.new_page()
    page.goto(own_site + LESSON)
    wait_python_ready(page)
    assert boot(page) == {"from": "snapshot", "note": None}
    # The interpreter is the one the build left: what it imported is there without an import.
    held = "import sys\nprint('held', [m in sys.modules for m in ('numpy.fft', 'numpy.linalg', 'lessonpy.maths.attention')])\n"
    expect(Cell(page, "setup").run_ok(held + "import numpy as np\nprint('ok', np.eye(2).sum())")).to_contain_text("held [True, True, True]\nok 2.0")
    assert page.evaluate("caches.keys()") == []

    # The file is missing (a partial upload, say): Python starts the normal way.
    context.route(re.compile(r".*/snapshot/.*"), lambda route: route.fulfill(status=404, body="not found"))
    page.reload()
    wait_python_ready(page)
    assert boot(page) == {"from": "start", "note": None}
    expect(Cell(page, "setup").run_ok("import numpy as np\nprint('ok', np.eye(2).sum())")).to_contain_text("ok 2.0")
    context.close()


def test_always_builds_boot_normally_on_a_host_that_sends_the_image_uncompressed(browser, serve_copy):
    # Served as it is the image is 5x its brotli size: a first visit then boots normally, its download cut
    # off once its headers came (firstVisitDownload in snapshot.js; the browser's data saver too, tested
    # under Node). The same site from a compressing host restores.
    for compress in (False, True):
        url = serve_copy(isolate=True, compress=compress)
        context = browser.new_context(timezone_id=ZONE, service_workers="block")
        patch_config(context, url, lambda spec: spec.update(fetch="always"))
        page = context.new_page()
        page.goto(url + LESSON)
        wait_python_ready(page)
        assert boot(page) == {"from": "snapshot" if compress else "start", "note": None}, compress
        expect(Cell(page, "setup").run_ok("import numpy as np\nprint('ok', np.eye(2).sum())")).to_contain_text("ok 2.0")
        context.close()


def test_without_isolation_stop_restarts_python_from_the_snapshot_and_replays(context, serve_copy):
    page = context.new_page()
    first_visit_kept(page, serve_copy(isolate=False))
    page.reload()
    wait_python_ready(page)
    assert boot(page)["from"] == "snapshot"
    Cell(page, "setup").run_ok("import numpy as np\nprobe = np.arange(6).reshape(2, 3)")
    page.evaluate("lessonPage.runtime.info.old = true")  # gone once a new interpreter reports
    paste_code(Cell(page, "scores").locator, "while True:\n    pass")
    Cell(page, "scores").locator.get_by_role("button", name="Run").click()
    expect(Cell(page, "scores").locator).to_have_attribute("data-status", "running")
    Cell(page, "scores").locator.get_by_role("button", name="Stop").click()
    expect(Cell(page, "scores").locator.locator(".out-hint")).to_contain_text("Python restarted and re-ran Cell",
                                                                       timeout=BOOT_TIMEOUT_MS)
    assert page.evaluate("lessonPage.runtime.info.old") is None  # a new interpreter's report...
    assert boot(page) == {"from": "snapshot", "note": None}  # ...restored too
    expect(Cell(page, "scores").run_ok("print('replayed', probe.sum())")).to_contain_text("replayed 15")
