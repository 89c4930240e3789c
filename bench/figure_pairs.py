#!/usr/bin/env python3
"""Diagnosis: the first matplotlib figure right after the first output, for two or more builds, interleaved.

    python3 bench/figure_pairs.py SITE_A SITE_B [--runs 3] [--warm-up-s 0]

Each run opens each site's lesson in a new profile (a cold first visit, as bench/startup.py's cold visit),
presses Run as an eager reader does, and asks for bench/startup.py's figure the moment the output shows;
with --warm-up-s, the page first runs plain Python (no import, no package) for that long, which tells the
interpreter's own warm-up apart from anything the figure waits for. It prints, per run and site, how the
page's Python came up (snapshot or start), the first output, the figure, and when matplotlib's wheel
finished downloading (s from asking for the figure; every request for it: the idle prefetch's and the
figure's own); then medians [min-max] and each site's figure over the first site's, paired run by run.
bench/startup.py remains the benchmark of record; this isolates one of its figures for two builds.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

# bench/startup.py puts the project's root and tests/support/ on sys.path, for the three imports after it
from startup import FIGURE_CODE, LESSON_FIGURE, LESSON_OUTPUT, first_result, lesson_ready, spread
from browser import CHROMIUM_ARGS, chromium_path  # noqa: E402
from sitebuild.files import link_or_copy  # noqa: E402
from sitebuild.server import serve_in_thread  # noqa: E402

# Plain Python (compiling, calls, comprehensions, dicts, strings, marshal), a quarter second per run.
WARM_UP = """import time, marshal
t = time.perf_counter()
src = "def f(a, b=2):\\n    return [x * b for x in range(a)] + list({str(i): i for i in range(50)}.values())\\n"
while time.perf_counter() - t < 0.25:
    ns = {}
    exec(compile(src, "warm-up", "exec"), ns)
    sum(len(ns["f"](200)) for _ in range(20))
    marshal.loads(marshal.dumps(ns["f"].__code__))
    "-".join(sorted(str(i) for i in range(300))).split("-")
"""
WARM_UP_JS = """async ([code, ms]) => {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    const result = await lessonPage.runtime.run(code, "bench-warm-up");
    if (!result.ok) throw new Error(result.error);
  }
}"""


def visit(playwright, url: str, warm_up_s: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as profile:
        context = playwright.chromium.launch_persistent_context(profile, executable_path=chromium_path(),
                                                                args=CHROMIUM_ARGS)
        try:
            requests = []
            context.on("requestfinished", lambda r: requests.append(
                (r.url.rsplit("/", 1)[-1], r.timing["startTime"] + r.timing["responseEnd"])))
            page = context.new_page()
            cold = first_result(page, url, lesson_ready, LESSON_OUTPUT)
            if warm_up_s:
                page.evaluate(WARM_UP_JS, [WARM_UP, warm_up_s * 1000])
            asked = page.evaluate("performance.timeOrigin + performance.now()")
            figure_s = page.evaluate(LESSON_FIGURE, FIGURE_CODE)
            page.wait_for_timeout(300)  # the last requestfinished events
            wheel = sorted((end - asked) / 1000 for name, end in requests if name.startswith("matplotlib-3"))
        finally:
            context.close()
    return {"first_s": cold["first_s"], "figure_s": figure_s, "boot": cold["boot"], "wheel": wheel}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sites", type=Path, nargs="+", help="built sites (python3 build.py --out ...)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm-up-s", type=float, default=0.0,
                        help="seconds of plain Python between the first output and the figure")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i, site in enumerate(args.sites):
            # a copy (hard links where possible): the dev server does not follow links out of its folder
            shutil.copytree(site, root / f"site{i}", copy_function=lambda a, b: link_or_copy(Path(a), Path(b)))
        server, base = serve_in_thread(root, port=0, quiet=True, isolate=True, compress=True)
        results = {site: [] for site in args.sites}
        with sync_playwright() as p:
            for run in range(args.runs):
                for i, site in enumerate(args.sites):
                    row = visit(p, f"{base}site{i}/lessons/attention/", args.warm_up_s)
                    results[site].append(row)
                    print(f"run {run + 1} {site}: {row['boot']}, first output {row['first_s']:.2f} s, figure "
                          f"{row['figure_s']:.2f} s, matplotlib's wheel in at "
                          + ", ".join(f"{s:.2f}" for s in row["wheel"]) + " s", flush=True)
        server.shutdown()
    first = args.sites[0]
    for site, rows in results.items():
        ratios = [r["figure_s"] / f["figure_s"] for r, f in zip(rows, results[first])]
        print(f"{site}: first output {spread([r['first_s'] for r in rows], '.2f')} s, figure "
              f"{spread([r['figure_s'] for r in rows], '.2f')} s, {spread(ratios, '.2f')}x {first}'s figure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
