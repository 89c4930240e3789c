#!/usr/bin/env python3
"""The page's main thread at load, two builds compared run by run (not a timed test).

    python3 bench/mainthread.py OLD_SITE NEW_SITE [--runs 6] [--cpu] [--profile out.cpuprofile]

Each run opens each site (alternating which goes first) in a fresh Chromium context, presses Run
on the lesson's `output` cell the moment it exists, as bench/startup.py does, and records the long
tasks until its output is on screen: their count, the blocking time (each task's time past 50 ms)
and the longest. Then it waits until every editor is built, and 1.5 s more, and records the
long tasks of that tail as well. `--cpu` also traces each load and gives the same figures in the
main thread's own CPU time (each task's thread time, Chromium's `tdur`): a long task's wall time also
counts the time its thread waited for a core, so on a busy 2-core machine a page of 30-40 ms tasks
shows long tasks of 60-80 ms and a blocking time that is the machine's, not the page's (docs/speed.md,
"The main thread"). `--profile` writes a CPU profile (DevTools format) of NEW_SITE's
first load + run, to read in Chrome's Performance panel or to summarise with --top.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from startup import LESSON_OUTPUT, blocking_ms, first_result, lesson_ready  # noqa: E402 (startup puts the project and tests/support/ on sys.path)

from browser import launch  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from sitebuild.server import serve_in_thread  # noqa: E402


# The trace --cpu reads: the scheduler's tasks with their thread time, and the page's mark (below).
TRACE_CATEGORIES = ["disabled-by-default-devtools.timeline", "blink.user_timing"]
# Put in the trace once the output is in, at the output's moment: it names the lesson's main thread and puts the
# moment in the trace's clock (Chromium's trace of a new renderer does not always hold its navigationStart).
OUTPUT_MARK = "bench:output"


def cpu_figures(trace: bytes) -> dict:
    """The main thread's CPU time up to the output and in the tail after it: total, longest task, blocking."""
    events = json.loads(trace)["traceEvents"]
    mark = next((e for e in events if e["name"] == OUTPUT_MARK), None)
    if mark is None:
        raise SystemExit(f"the trace lacks the mark {OUTPUT_MARK}: did Chromium's trace categories change?")
    thread, out = (mark["pid"], mark["tid"]), mark["ts"]
    runs = [e for e in events if e["name"] == "RunTask" and e.get("ph") == "X" and (e["pid"], e["tid"]) == thread]
    if not any("tdur" in e for e in runs):
        raise SystemExit("the trace's tasks on the page's main thread have no thread time (tdur): no CPU figures")
    tasks = [(e["ts"], e.get("tdur", 0) / 1000) for e in runs]
    figures = {}
    for prefix, part in (("", [ms for ts, ms in tasks if ts < out]), ("tail_", [ms for ts, ms in tasks if ts >= out])):
        figures |= {f"{prefix}cpu_ms": sum(part), f"{prefix}cpu_longest_ms": max(part, default=0),
                    f"{prefix}cpu_blocking_ms": blocking_ms(part)}
    return figures


def one_run(browser, url: str, profile: Path | None = None, cpu: bool = False) -> dict:
    context = browser.new_context()
    try:
        page = context.new_page()
        if cpu:
            browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
        session = None
        if profile:
            session = context.new_cdp_session(page)
            session.send("Profiler.enable")
            session.send("Profiler.setSamplingInterval", {"interval": 200})
            session.send("Profiler.start")
        first = first_result(page, url + "lessons/attention/", lesson_ready, LESSON_OUTPUT)
        seen = len(page.evaluate("window.__longtasks"))
        if cpu:
            page.evaluate("(name) => performance.mark(name, {startTime: window.__outputAt})", OUTPUT_MARK)
        if session:
            result = session.send("Profiler.stop")
            profile.write_text(json.dumps(result["profile"]))
        # Every editor built: no stand-in left (an older build's static code was `pre.cell-static`).
        page.locator("pre.code-standin, pre.cell-static").first.wait_for(state="detached", timeout=30_000)
        page.wait_for_timeout(1500)
        tail = page.evaluate("window.__longtasks")[seen:]
        row = {**first, "count": seen, "tail_blocking_ms": blocking_ms(tail), "tail_longest_ms": max(tail, default=0)}
        if cpu:
            row |= cpu_figures(browser.stop_tracing())
        return row
    finally:
        context.close()


def top_functions(profile_path: Path, n: int = 30) -> None:
    """Self and total time per function of a CPU profile (main thread), largest total first."""
    prof = json.loads(profile_path.read_text())
    nodes = {node["id"]: node for node in prof["nodes"]}
    parent = {}
    for node in prof["nodes"]:
        for child in node.get("children", []):
            parent[child] = node["id"]
    self_time = defaultdict(float)
    deltas = prof["timeDeltas"]
    for sample, dt in zip(prof["samples"], deltas):
        self_time[sample] += dt / 1000
    total = defaultdict(float)
    selfs = defaultdict(float)
    for node_id, ms in self_time.items():
        seen = set()
        frame = node_id
        cf = nodes[node_id]["callFrame"]
        selfs[f'{cf["functionName"] or "(anon)"} {cf["url"].rsplit("/", 1)[-1]}:{cf["lineNumber"] + 1}'] += ms
        while frame is not None:
            cf = nodes[frame]["callFrame"]
            key = f'{cf["functionName"] or "(anon)"} {cf["url"].rsplit("/", 1)[-1]}:{cf["lineNumber"] + 1}'
            if key not in seen:
                total[key] += ms
                seen.add(key)
            frame = parent.get(frame)
    print("total ms  self ms  function")
    for key, ms in sorted(total.items(), key=lambda kv: -kv[1])[:n]:
        print(f"{ms:8.1f} {selfs.get(key, 0):8.1f}  {key}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--cpu", action="store_true", help="also the main thread's CPU time per task, from a trace")
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--top", action="store_true", help="print the profile's heaviest functions")
    args = parser.parse_args()
    servers = {name: serve_in_thread(site, port=0, quiet=True, isolate=True) for name, site in (("old", args.old), ("new", args.new))}
    results = defaultdict(list)
    with sync_playwright() as p:
        browser = launch(p)
        try:
            if args.profile:
                one_run(browser, servers["new"][1], args.profile)
                if args.top:
                    top_functions(args.profile)
            for i in range(args.runs):
                order = ("old", "new") if i % 2 == 0 else ("new", "old")
                for name in order:
                    row = one_run(browser, servers[name][1], cpu=args.cpu)
                    results[name].append(row)
                    print(name, {k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()}, flush=True)
        finally:
            browser.close()
    cpu_keys = ("cpu_ms", "cpu_longest_ms", "cpu_blocking_ms", "tail_cpu_ms", "tail_cpu_longest_ms", "tail_cpu_blocking_ms")
    for key in ("blocking_ms", "longest_ms", "count", "first_s", "tail_blocking_ms", "tail_longest_ms", *(cpu_keys if args.cpu else ())):
        if not results["old"]:
            break
        old = [r[key] for r in results["old"]]
        new = [r[key] for r in results["new"]]
        print(f"{key:20} old median {statistics.median(old):8.1f} [{min(old):.1f}-{max(old):.1f}]"
              f"   new median {statistics.median(new):8.1f} [{min(new):.1f}-{max(new):.1f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
