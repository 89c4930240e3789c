#!/usr/bin/env python3
"""Benchmark: how soon does a reader see a NumPy result, against a raw Pyodide page, in one run.

    python3 bench/startup.py [--runs 5] [--site site] [--no-compress]

Both pages are served by the project's dev server from this machine and measured run by run,
interleaved, so that machine noise hits both alike. Each run measures each page three ways:

* cold, loopback: a new persistent profile (nothing cached), navigation start -> the attention
  output is in the page (the moment its text arrives, seen by the page: OUTPUT_PROBE). The raw page
  computes as soon as Pyodide and numpy are loaded; the lesson page gets its Run button pressed the
  moment it appears (the run queues until Python is ready), which is what an eager reader does.
  Also recorded: the bytes that had crossed the network by then (as served, i.e. compressed) by
  file type, the main thread's total blocking time (sum of long tasks' time past 50 ms) until
  Playwright saw the output; then the time to a first matplotlib figure, asked for at once;
* warm revisit: the same profile (HTTP cache, compiled-wasm cache, service worker), the page
  opened again a few seconds later (once the lesson's service worker has kept what it keeps,
  the memory snapshot among them), to the first output again;
* cold, throttled: a fresh context on a 40 Mbit/s, 40 ms link (DevTools network emulation; it
  covers the page's worker, which the run checks against the wasm file's transfer time).

It prints medians with min-max, and ratios paired run by run (lesson / raw of the same run;
warm / cold of the same page). The raw page is the design doc's baseline: Pyodide on the main
thread, stock files (no .pyc), `loadPyodide()` then `loadPackage("numpy")`. Absolute figures
are noisy on a shared machine: read the paired ratios.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))  # the browser tests' helpers (browser.py)

from browser import CHROMIUM_ARGS, chromium_path, launch  # noqa: E402
from sitebuild.files import link_or_copy  # noqa: E402
from sitebuild.startup.pyodide_assets import PYODIDE_VERSION, core_file_names  # noqa: E402
from sitebuild.server import serve_in_thread  # noqa: E402

# Long tasks are recorded from the very start of each page (an init script runs before any page script).
LONGTASK_PROBE = """
window.__longtasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longtasks.push(e.duration); })
  .observe({ type: "longtask", buffered: true });
"""
# The moment the output appears (ms since navigation start), seen by the page itself: Playwright
# only polls for it, every 500 ms after the first few tries, which would add 0-0.5 s to either page's
# time, and count the bytes of whatever the page fetches in that lag (the lesson's idle preload).
OUTPUT_PROBE = """
window.__outputAt = null;
new MutationObserver((_, observer) => {
  const el = document.querySelector(%s);
  if (el && el.textContent.includes("output shape")) {
    window.__outputAt = performance.now();
    observer.disconnect();
  }
}).observe(document, { subtree: true, childList: true, characterData: true });
"""

ATTENTION_CODE = """
import numpy as np
rng = np.random.default_rng(0)
T, D = 4, 8
x = rng.standard_normal((T, D))
W_q, W_k, W_v = (rng.standard_normal((D, D)) / np.sqrt(D) for _ in range(3))
Q, K, V = x @ W_q, x @ W_k, x @ W_v
scores = Q @ K.T / np.sqrt(D)
w = np.exp(scores - scores.max(axis=1, keepdims=True))
w /= w.sum(axis=1, keepdims=True)
out = w @ V
f"output shape: {out.shape}"
"""

FIGURE_CODE = """
import io
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.imshow([[0.1, 0.9], [0.6, 0.4]])
buffer = io.BytesIO()
plt.savefig(buffer, format="png")
plt.close("all")
len(buffer.getvalue())
"""

# The raw page's script is a file of its own: the dev server sends pages a CSP without inline scripts.
RAW_PAGE = """<!doctype html><meta charset="utf-8"><title>raw pyodide</title>
<script src="pyodide.js"></script>
<pre id="out">loading…</pre>
<script type="application/json" id="code">{code}</script>
<script src="raw.js"></script>
"""
RAW_SCRIPT = """
(async () => {
  const pyodide = await loadPyodide();
  await pyodide.loadPackage("numpy");
  const code = JSON.parse(document.getElementById("code").textContent);
  document.getElementById("out").textContent = pyodide.runPython(code);
  window.makeFigure = async (figureCode) => {
    await pyodide.loadPackage("matplotlib");
    return pyodide.runPython(figureCode);
  };
})();
"""


def make_raw_page(dest: Path, cache_dir: Path) -> None:
    """A raw Pyodide page from the stock npm core and the stock (verified) wheels the build cached."""
    dest.mkdir(parents=True)
    core = ROOT / "node_modules" / "pyodide"
    for name in core_file_names():
        shutil.copy2(core / name, dest / name)
    for wheel in (cache_dir / "wheels").glob("*.whl"):  # numpy, matplotlib and its dependencies
        shutil.copy2(wheel, dest / wheel.name)
    (dest / "index.html").write_text(RAW_PAGE.format(code=json.dumps(ATTENTION_CODE)), encoding="utf-8")
    (dest / "raw.js").write_text(RAW_SCRIPT, encoding="utf-8")


# Both return the seconds from asking for a figure to having its PNG bytes.
RAW_FIGURE = "async (code) => { const t = performance.now(); await window.makeFigure(code); return (performance.now() - t) / 1000; }"
LESSON_FIGURE = """async (code) => {
  const t = performance.now();
  const result = await lessonPage.runtime.run(code, "bench-figure");
  if (!result.ok) throw new Error(result.error);
  return (performance.now() - t) / 1000;
}"""


# The throttled link: DevTools network emulation (bytes per second, ms of latency per request).
LINK_MBIT, LINK_LATENCY_MS = 40, 40
THROTTLE = {"offline": False, "latency": LINK_LATENCY_MS, "downloadThroughput": LINK_MBIT * 1e6 / 8,
            "uploadThroughput": LINK_MBIT * 1e6 / 8}
REVISIT_AFTER_S = 3  # a reader coming back to the page a few seconds later
FILE_TYPES = {".wasm": "wasm", ".js": "js", ".mjs": "js", ".zip": "stdlib", ".whl": "wheels", ".json": "json",
              ".html": "html", "": "html", ".css": "css", ".woff2": "fonts", ".snapshot": "snapshot"}


# A wheel's parts for a restore (sitebuild/startup/wheel_split.py) are zips, but a package's files, not the stdlib's.
WHEEL_PARTS = (".libs.zip", ".rest.zip")


def file_type(url: str) -> str:
    """The column a file's bytes are counted in."""
    name = url.split("?", 1)[0].rsplit("/", 1)[-1]
    if name.endswith(WHEEL_PARTS):
        return "wheels"
    return FILE_TYPES.get(Path(name).suffix.lower(), "other")


class Traffic:
    """Bytes as served (compressed body) per file type, and when each file arrived, for one context."""

    def __init__(self, context):
        self.files = []  # (when it arrived, ms since the epoch; file type; bytes)
        self.done = {}  # file name -> (seconds since this object was made, bytes)
        self.start = time.perf_counter()
        context.on("requestfinished", self.finished)

    def finished(self, request):
        from playwright.sync_api import Error

        try:
            size = max(0, request.sizes()["responseBodySize"])
        except Error:  # it finished as its page closed (after the measurements): nothing left to count
            return
        timing = request.timing
        self.files.append((timing["startTime"] + timing["responseEnd"], file_type(request.url), size))
        self.done[request.url.rsplit("/", 1)[-1]] = (time.perf_counter() - self.start, size)

    def bytes_until(self, epoch_ms: float) -> dict[str, int]:
        """Bytes per file type of the files that had arrived by `epoch_ms` (the browser's clock)."""
        by_type = defaultdict(int)
        for arrived, kind, size in self.files:
            if arrived <= epoch_ms:
                by_type[kind] += size
        return dict(by_type)


def first_result(page, url: str, ready, output: str) -> dict:
    """Navigate, wait for the first output (in the element `output` selects); return its time (s from
    navigation), the browser's clock then (ms since the epoch) and blocking figures up to it."""
    page.add_init_script(LONGTASK_PROBE)
    page.add_init_script(OUTPUT_PROBE % json.dumps(output))
    page.goto(url, wait_until="commit")
    ready(page)
    at_ms, epoch_ms = page.evaluate("[window.__outputAt, performance.timeOrigin + window.__outputAt]")
    assert at_ms is not None, f"the page's output probe never saw {output!r} change: wrong selector?"
    tasks = page.evaluate("window.__longtasks")  # up to when Playwright saw the output: within 0.5 s of it
    return {"first_s": at_ms / 1000, "epoch_ms": epoch_ms,
            "blocking_ms": blocking_ms(tasks), "longest_ms": max(tasks, default=0),
            # the lesson's Python: restored from the build's snapshot or started ("-" for the raw page)
            "boot": page.evaluate("globalThis.lessonPage?.runtime.info?.boot.from ?? '-'")}


def cold_and_warm(playwright, url: str, ready, output: str, figure_js) -> dict:
    """A new persistent profile: cold visit (first output, bytes, first figure), then a revisit."""
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            traffic = Traffic(context)
            page = context.new_page()
            cold = first_result(page, url, ready, output)
            cold["figure_s"] = page.evaluate(figure_js, FIGURE_CODE)
            by_type = traffic.bytes_until(cold["epoch_ms"])  # read late: every file that came before is counted
            page.wait_for_timeout(REVISIT_AFTER_S * 1000)  # the reader leaves; the page finishes what it does
            # ... including what the lesson's service worker keeps for revisits (its memory snapshot among them)
            # (polled: the lesson's CSP refuses the string evaluation that wait_for_function needs)
            deadline = time.monotonic() + 120
            while page.evaluate("!!globalThis.lessonPage && document.body.dataset.offline !== 'ready'"):
                if time.monotonic() > deadline:
                    print("the lesson's service worker kept nothing within 120 s", file=sys.stderr)
                    break
                page.wait_for_timeout(200)
            page.close()
            page = context.new_page()
            warm = first_result(page, url, ready, output)
            page.close()
        finally:
            context.close()
    return {**cold, "bytes": by_type, "mb": sum(by_type.values()) / 1e6, "warm_s": warm["first_s"],
            "boots": f"{cold['boot']}/{warm['boot']}"}


def throttled(browser, url: str, ready, output: str) -> dict:
    """A fresh context on the emulated link: first output, bytes, and when the wasm (a worker fetch) arrived."""
    context = browser.new_context()
    try:
        traffic = Traffic(context)
        page = context.new_page()
        session = context.new_cdp_session(page)
        session.send("Network.enable")
        session.send("Network.emulateNetworkConditions", THROTTLE)
        result = first_result(page, url, ready, output)
        wasm_s, wasm_bytes = traffic.done.get("pyodide.asm.wasm", (float("nan"), 0))
        return {"throttled_s": result["first_s"], "wasm_floor_s": wasm_bytes * 8 / (LINK_MBIT * 1e6), "wasm_done_s": wasm_s,
                "throttled_boot": result["boot"]}
    finally:
        context.close()


def raw_ready(page):
    page.wait_for_selector("#out:has-text('output shape')", timeout=180_000)


LESSON_OUTPUT = '[data-cell="output"] .cell-output'  # where the lesson's measured cell prints
RAW_OUTPUT = "#out"


def blocking_ms(tasks) -> float:
    """Main-thread blocking: every long task's time beyond 50 ms (as Lighthouse's total blocking time)."""
    return sum(max(0.0, t - 50) for t in tasks)


def lesson_ready(page):
    # An eager reader presses Run on the fourth cell the moment it exists; the run queues until Python is ready.
    cell = page.locator('[data-cell="output"]')
    cell.get_by_role("button", name="Run").click(timeout=60_000)
    cell.locator(".cell-output").filter(has_text="output shape").wait_for(timeout=180_000)


def spread(values: list[float], fmt: str) -> str:
    """'median [min-max]' of values."""
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"


ROWS = [  # key, label, number format, the goal for the lesson/raw ratio (or as said)
    ("first_s", "first output, loopback (s)", ".2f", "<= 0.60x raw"),
    ("throttled_s", f"first output, {LINK_MBIT} Mbit/s {LINK_LATENCY_MS} ms (s)", ".2f", "<= 0.70x raw"),
    ("mb", "bytes to first output (MB)", ".2f", "<= 1.0x raw"),
    ("warm_s", "warm revisit, first output (s)", ".2f", "<= 0.5x own cold"),
    ("blocking_ms", "main-thread blocking (ms)", ".0f", "<= 100 ms"),
    ("longest_ms", "longest task (ms)", ".0f", ""),
    ("figure_s", "first figure after output (s)", ".2f", "<= 0.6x raw"),
]


def short(name: str) -> str:
    return name.split(" (")[0]


def report(results: dict[str, list[dict]], runs: int) -> None:
    """Print every figure: medians [min-max] per page, paired ratios, warm/cold, bytes by type."""
    (raw_name, raw), (_, ours) = results.items()
    print(f"Pyodide {PYODIDE_VERSION}, headless Chromium, {runs} interleaved runs per page; "
          "median [min-max]; ratios paired run by run")
    print(f"{'':38}" + "".join(f"{c:>24}" for c in [*map(short, results), "lesson / raw"]) + "   goal")
    for key, label, fmt, goal in ROWS:
        a, b = [r[key] for r in raw], [r[key] for r in ours]
        ratios = [y / x for x, y in zip(a, b) if x]
        print(f"{label:38}{spread(a, fmt):>24}{spread(b, fmt):>24}{spread(ratios, '.2f') + 'x':>24}   {goal}")
    print()
    for name, rows in results.items():
        own = [r["warm_s"] / r["first_s"] for r in rows]
        vs_raw = [r["warm_s"] / x["first_s"] for r, x in zip(rows, raw)]
        print(f"warm revisit, {short(name):8} {spread(own, '.2f')}x its own cold visit, "
              f"{spread(vs_raw, '.2f')}x a cold raw visit")
    print("\nhow the lesson's Python came up, per run (cold/warm loopback, throttled): "
          + ", ".join(f"{r['boots']}, {r['throttled_boot']}" for r in ours))
    print("\nbytes to first output by file type, as served (MB, medians, loopback):")
    types = sorted({t for r in raw + ours for t in r["bytes"]})
    print(f"{'':10}" + "".join(f"{t:>9}" for t in types) + f"{'total':>9}")
    for name, rows in results.items():
        med = [statistics.median(r["bytes"].get(t, 0) for r in rows) / 1e6 for t in types]
        print(f"{short(name):10}" + "".join(f"{m:>9.2f}" for m in med)
              + f"{statistics.median(r['mb'] for r in rows):>9.2f}")
    # If the emulation missed the worker, the wasm (fetched by the lesson's worker) would beat its own floor.
    print(f"\nthrottling check: pyodide.asm.wasm arrived after "
          + ", ".join(f"{spread([r['wasm_done_s'] for r in rows], '.2f')} s ({short(name)})"
                      for name, rows in results.items())
          + f"; its bytes alone take {statistics.median(r['wasm_floor_s'] for r in ours):.2f} s (lesson)"
          f" and {statistics.median(r['wasm_floor_s'] for r in raw):.2f} s (raw) at {LINK_MBIT} Mbit/s")


def built(site: Path) -> bool:
    """Whether `site` holds a built lesson; says what to do when not."""
    if (site / "lessons" / "attention" / "index.html").exists():
        return True
    print(f"no built lesson in {site}: run `python3 build.py` first", file=sys.stderr)
    return False


def serve_both(site: Path, root: Path, compress: bool = True):
    """Serve `site` at site/ and the raw page at raw/ from `root`, isolated; (server, base URL)."""
    # A copy (hard links where possible), not a symlink: the dev server does not follow links out of its folder.
    shutil.copytree(site, root / "site", copy_function=lambda src, dst: link_or_copy(Path(src), Path(dst)))
    make_raw_page(root / "raw", ROOT / ".cache")
    return serve_in_thread(root, port=0, quiet=True, isolate=True, compress=compress)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--site", type=Path, default=ROOT / "site", help="a built site (python3 build.py)")
    parser.add_argument("--no-compress", action="store_true",
                        help="serve both pages with nothing compressed, like a plain static host")
    args = parser.parse_args()
    if not built(args.site):
        return 1
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        server, base = serve_both(args.site, Path(tmp), compress=not args.no_compress)
        pages = {  # URL, waiting for the output, where the output appears, asking for a figure
            "raw (main thread, stock files)": (base + "raw/index.html", raw_ready, RAW_OUTPUT, RAW_FIGURE),
            "lesson (worker, precompiled)": (base + "site/lessons/attention/", lesson_ready,
                                             LESSON_OUTPUT, LESSON_FIGURE),
        }
        results = {name: [] for name in pages}
        with sync_playwright() as p:
            browser = launch(p)
            for run in range(args.runs):
                for name, (url, ready, output, figure_js) in pages.items():
                    row = cold_and_warm(p, url, ready, output, figure_js)
                    row.update(throttled(browser, url, ready, output))
                    results[name].append(row)
                print(f"run {run + 1}/{args.runs} done", file=sys.stderr)
            browser.close()
        server.shutdown()
    report(results, args.runs)
    return 0

if __name__ == "__main__":
    sys.exit(main())
