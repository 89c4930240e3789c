#!/usr/bin/env python3
"""Benchmark: how soon does a reader see a NumPy result, against a raw Pyodide page, in one run.

    python3 bench/startup.py [--runs 5] [--site site]

Both pages are served by the project's dev server from this machine, cold (a new browser
context each run, so nothing is cached), interleaved run by run so that machine noise hits
both alike. For each it reports medians of:

* first result: navigation start -> the attention output is on screen. The raw page computes
  as soon as Pyodide and numpy are loaded; the lesson page gets its Run button pressed the
  moment it appears (the run queues until Python is ready) -- what an eager reader does;
* blocking: the main thread's total blocking time (sum of long tasks' time past 50 ms) and
  the longest task, up to that point;
* bytes: what crossed the network (compressed) up to the first result;
* first figure: once the result is in, the time to import matplotlib and get a PNG of a
  small plot (matplotlib loads on first use in both pages);
* warm revisit: the same page opened again in the same context (HTTP cache), to "ready".

The raw page is the design doc's baseline: Pyodide on the main thread, stock files (no .pyc),
`loadPyodide()` then `loadPackage("numpy")`. Figures are noisy on a shared machine: read the
ratio, which is measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from browser import launch  # noqa: E402
from sitebuild.pyodide_assets import PYODIDE_VERSION, core_file_names  # noqa: E402
from sitebuild.server import serve_in_thread  # noqa: E402

# Long tasks are recorded from the very start of each page (an init script runs before any page script).
LONGTASK_PROBE = """
window.__longtasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longtasks.push(e.duration); })
  .observe({ type: "longtask", buffered: true });
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

RAW_PAGE = """<!doctype html><meta charset="utf-8"><title>raw pyodide</title>
<script src="pyodide.js"></script>
<pre id="out">loading…</pre>
<script type="application/json" id="code">{code}</script>
<script>
(async () => {{
  const pyodide = await loadPyodide();
  await pyodide.loadPackage("numpy");
  const code = JSON.parse(document.getElementById("code").textContent);
  document.getElementById("out").textContent = pyodide.runPython(code);
  window.makeFigure = async (figureCode) => {{
    await pyodide.loadPackage("matplotlib");
    return pyodide.runPython(figureCode);
  }};
}})();
</script>
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


# Both return the seconds from asking for a figure to having its PNG bytes.
RAW_FIGURE = "async (code) => { const t = performance.now(); await window.makeFigure(code); return (performance.now() - t) / 1000; }"
LESSON_FIGURE = """async (code) => {
  const t = performance.now();
  const result = await lessonPage.runtime.run(code, "bench-figure");
  if (!result.ok) throw new Error(result.error);
  return (performance.now() - t) / 1000;
}"""


def measure(context, url: str, ready, warm_ready, figure_js) -> dict:
    """Open url cold, wait for the first result, collect timings; then revisit warm."""
    sizes = []
    context.on("requestfinished", lambda req: sizes.append(req.sizes()["responseBodySize"]))
    page = context.new_page()
    page.add_init_script(LONGTASK_PROBE)
    page.goto(url, wait_until="commit")
    ready(page)
    first = page.evaluate("performance.now()")
    tasks = page.evaluate("window.__longtasks")
    transferred = sum(sizes)
    figure = page.evaluate(figure_js, FIGURE_CODE)
    page.close()
    page = context.new_page()
    start = time.perf_counter()
    page.goto(url, wait_until="commit")
    warm_ready(page)
    warm = time.perf_counter() - start
    page.close()
    return {"first_result_s": first / 1000, "blocking_ms": sum(max(0, t - 50) for t in tasks),
            "longest_task_ms": max(tasks, default=0), "mb": transferred / 1e6, "figure_s": figure, "warm_s": warm}


def raw_ready(page):
    page.wait_for_selector("#out:has-text('output shape')", timeout=180_000)


def lesson_ready(page):
    # An eager reader presses Run on the fourth cell the moment it exists; the run queues until Python is ready.
    cell = page.locator('[data-cell="output"]')
    cell.get_by_role("button", name="Run").click(timeout=60_000)
    cell.locator(".cell-output").filter(has_text="output shape").wait_for(timeout=180_000)


def lesson_warm_ready(page):
    page.get_by_role("banner").get_by_role("status").filter(has_text="Python is ready").wait_for(timeout=180_000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--site", type=Path, default=ROOT / "site", help="a built site (python3 build.py)")
    args = parser.parse_args()
    if not (args.site / "lessons" / "attention" / "index.html").exists():
        print(f"no built lesson in {args.site}: run `python3 build.py` first", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "site").symlink_to(args.site.resolve(), target_is_directory=True)
        make_raw_page(root / "raw", ROOT / ".cache")
        server, base = serve_in_thread(root, port=0, quiet=True, isolate=True)
        pages = {
            "raw Pyodide (main thread, stock files)": (base + "raw/index.html", raw_ready, raw_ready, RAW_FIGURE),
            "lesson (worker, precompiled)": (base + "site/lessons/attention/", lesson_ready, lesson_warm_ready,
                                             LESSON_FIGURE),
        }
        results = {name: [] for name in pages}
        with sync_playwright() as p:
            browser = launch(p)
            for run in range(args.runs):
                for name, (url, ready, warm_ready, figure_js) in pages.items():
                    context = browser.new_context()
                    try:
                        results[name].append(measure(context, url, ready, warm_ready, figure_js))
                    finally:
                        context.close()
                print(f"run {run + 1}/{args.runs} done", file=sys.stderr)
            browser.close()
        server.shutdown()

    print(f"Pyodide {PYODIDE_VERSION}, headless Chromium, {args.runs} cold runs each, medians:")
    keys = [("first_result_s", "first result (s)"), ("blocking_ms", "main-thread blocking (ms)"),
            ("longest_task_ms", "longest task (ms)"), ("mb", "transferred (MB)"), ("figure_s", "first figure (s)"),
            ("warm_s", "warm revisit to ready (s)")]
    medians = {name: {k: statistics.median(r[k] for r in runs) for k, _ in keys} for name, runs in results.items()}
    width = max(len(n) for n in medians)
    raw, ours = medians.values()
    names = list(medians)
    print(f"{'':28}" + "".join(f"{n.split(' (')[0]:>16}" for n in names) + f"{'lesson / raw':>16}")
    for key, label in keys:
        ratio = ours[key] / raw[key] if raw[key] else float("nan")
        print(f"{label:28}" + "".join(f"{medians[n][key]:>16.2f}" for n in names) + f"{ratio:>15.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
