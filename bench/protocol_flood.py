#!/usr/bin/env python3
"""What checking every message against protocol.js costs the page in an output flood (not a timed test).

    python3 bench/protocol_flood.py [SITE] [--rounds 4] [--lines 100000]

Opens the lesson of a built site (default site/) once and runs a cell printing --lines lines, in rounds,
alternating the page's check of every message on (runtime.checkProtocol = true: every page before the
check moved, and the browser tests now) and off (a reader's page now). For each it reports the messages
the page received, the run's time and messages/s. Then, on the page's own main thread, the time of one
protocolError call on the messages of a flood (a stdout event) and on an arrays event (what the worker
still checks on every page, for each lessonpy.runtime.bridge event).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))  # the browser tests' helpers (browser.py)

from browser import launch  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from sitebuild.server import serve_in_thread  # noqa: E402

LESSON = "lessons/attention/"

FLOOD = """() => {
globalThis.floodRun = async (code, checked) => {
  const runtime = lessonPage.runtime;
  runtime.checkProtocol = checked;
  let messages = 0;
  const count = () => { messages += 1; };
  runtime.addEventListener("python-event", count);
  const started = performance.now();
  const reply = await runtime.run(code, "output", { cells: { output: code } });
  if (!reply.ok) throw new Error(reply.error);
  const ms = performance.now() - started;
  runtime.removeEventListener("python-event", count);
  return { messages, ms };
};
}
"""

#: Where the page imports protocol.js from for CHECK_COST: the site bundles it into the page's chunks, so the
#: bench serves the repository's module (it imports nothing) at this path on the site's origin.
PROTOCOL_URL = "/bench/protocol.js"
PROTOCOL_FILE = ROOT / "static" / "js" / "shared" / "protocol.js"

CHECK_COST = """
async (n) => {
  const { protocolError } = await import(new URL(PROTOCOL_URL, location.href).href);
  const stdout = { type: "stdout", runId: 7, text: "line 12345\\n".repeat(20) };
  const arrays = { type: "arrays", runId: 7, view: "attention", title: null, target: null, tokens: ["a", "b"],
                   arrays: { weights: { shape: [2, 2], dtype: "float32", data: new Float32Array(4) } },
                   derived: [], stats: {} };
  const time = (message) => {
    let bad = 0;
    for (let i = 0; i < n / 10; i++) if (protocolError("event", message)) bad++;  // warm-up
    const t0 = performance.now();
    for (let i = 0; i < n; i++) if (protocolError("event", message)) bad++;
    if (bad) throw new Error("the sample messages must be valid");
    return (performance.now() - t0) * 1000 / n;  // microseconds per check
  };
  return { stdout: time(stdout), arrays: time(arrays) };
}
""".replace("PROTOCOL_URL", repr(PROTOCOL_URL))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "site")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args(argv)
    code = f"for i in range({args.lines}):\n    print('line', i)\n"
    server, url = serve_in_thread(args.site, port=0, isolate=True, quiet=True)
    results = {True: [], False: []}
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page()
            page.route("**" + PROTOCOL_URL, lambda route: route.fulfill(path=PROTOCOL_FILE,
                                                                        content_type="text/javascript"))
            page.goto(url + LESSON)
            page.wait_for_selector(".py-status[data-state=ready]", timeout=120_000)
            page.evaluate(FLOOD)
            page.evaluate("(code) => floodRun(code, false)", "print('warm-up')")
            for r in range(args.rounds):
                for checked in ((True, False) if r % 2 == 0 else (False, True)):
                    results[checked].append(page.evaluate("([code, checked]) => floodRun(code, checked)",
                                                          [code, checked]))
            cost = page.evaluate(CHECK_COST, 200_000)
            browser.close()
    finally:
        server.shutdown()
    for checked, runs in results.items():
        rates = [r["messages"] / r["ms"] * 1000 for r in runs]
        print(f"every message checked={str(checked):5}  messages per run {statistics.median(r['messages'] for r in runs):.0f}"
              f"  run {statistics.median(r['ms'] for r in runs):.0f} ms (median of {len(runs)})"
              f"  messages/s {statistics.median(rates):.0f} (runs: {', '.join(f'{x:.0f}' for x in rates)})")
    print(f"protocolError on the main thread: {cost['stdout']:.2f} µs per stdout event, "
          f"{cost['arrays']:.2f} µs per arrays event")


if __name__ == "__main__":
    main()
