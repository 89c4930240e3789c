#!/usr/bin/env python3
"""Benchmark: the lesson in each engine, Chromium, Firefox and WebKit: first output against a raw Pyodide page
from stock files, and the memory the lesson takes, step by step.

    python3 bench/engines.py [--runs 3] [--site site] [--engines chromium,firefox,webkit] [--no-memory]
                             [--no-startup] [--smollm2]

First output: per run and engine, each page (raw, then lesson) in a new browser with an empty profile, served
isolated by the project's dev server from this machine (interleaved, so noise hits both alike): navigation start
-> the attention output is in the page, seen by the page itself (a MutationObserver put in as the navigation
returns; the output needs Python, seconds later). The lesson gets Run pressed on its fourth cell at once, as an
eager reader does. Printed: medians [min-max] and the ratio lesson / raw paired run by run. bench/startup.py
is the Chromium benchmark of record (throttling, bytes, revisits); this one puts the three engines side by side.

Memory: the browser's processes' proportional set size (PSS: each shared page counted once across them; what a
phone's memory limit sees comes closest to this), sampled every 0.25 s, as the peak during each step and the
value at its end, less the same browser on about:blank: the lesson opened to its first output, after each cell
run in page order, after the live MiniLM panel ran on a sentence (the site's real weights: `python3 build.py`
without --no-live-model). And Python's WebAssembly memory (the worker's heap), which only grows.
--smollm2: the same memory for Lesson 5's live SmolLM2 panel (live_smollm2), with its pass and token times.
Drivers: tests/engines/drivers.py. WebKit needs Xvfb, as in the tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # tests/engines/drivers.py
sys.path.insert(0, str(ROOT / "tests" / "support"))  # browser.py, which drivers.py imports

import psutil  # noqa: E402

from engines import drivers  # noqa: E402
from startup import LESSON_OUTPUT, RAW_OUTPUT, built, serve_both  # noqa: E402

# Put in as the navigation returns (WebDriver's get returns at the load event): the output comes seconds later.
PROBE = """
const selector = arguments[0];
if (document.querySelector(selector)?.textContent.includes("output shape")) return "too late";
window.__outputAt = null;
new MutationObserver((_, observer) => {
  const el = document.querySelector(selector);
  if (el && el.textContent.includes("output shape")) {
    window.__outputAt = performance.now();
    observer.disconnect();
  }
}).observe(document, { subtree: true, childList: true, characterData: true });
return "watching";
"""
WASM_MEMORY = "import pyodide_js\npyodide_js._module.HEAP8.length"
SENTENCE = "The cat sat on the mat because it was tired."
# Processes of ours, not the browser's: the drivers, the virtual screen, Node (Playwright's, the Firefox bridge).
NOT_BROWSER = ("python", "node", "WebKitWebDriver", "Xvfb")


def first_output(engine: str, url: str, lesson: bool, log: Path) -> float:
    """Seconds from navigation start to the attention output, in a new browser."""
    d = drivers.start(engine, log)
    try:
        d.open(url)
        output = LESSON_OUTPUT if lesson else RAW_OUTPUT
        assert d.js(PROBE, output) == "watching", f"{engine}: the output came before the probe"
        if lesson:
            d.wait("return Boolean(document.querySelector('[data-cell=output] .cell-run:not([disabled])'))", "Run", 60)
            d.click("[data-cell=output] .cell-run")
        at = d.wait("return window.__outputAt", "the output", 180)
        boot = d.js("return globalThis.lessonPage?.runtime.info?.boot.from ?? '-'")
        if lesson and boot != "snapshot":
            print(f"  {engine}: the lesson booted without its snapshot", file=sys.stderr)
        return at / 1000
    finally:
        d.close()


class Sampler:
    """PSS of the browser's processes (this process's descendants but ours), every 0.25 s, in a thread."""

    def __init__(self):
        self.peak = 0
        self.now = 0
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @staticmethod
    def pss() -> int:
        total = 0
        for proc in psutil.Process().children(recursive=True):
            try:
                if proc.name().startswith(NOT_BROWSER):
                    continue
                total += proc.memory_full_info().pss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        return total

    def _run(self):
        while not self._stop:
            self.now = self.pss()
            self.peak = max(self.peak, self.now)
            time.sleep(0.25)

    def step(self) -> tuple[int, int]:
        """(peak since the last step, now); the peak starts again."""
        time.sleep(0.5)  # two samples after the step's end
        peak, now = self.peak, self.pss()
        self.peak = now
        return max(peak, now), now

    def close(self):
        self._stop = True
        self._thread.join()


def run_cell(d, cell_id: str) -> str:
    d.js("const c = document.querySelector(`[data-cell='${arguments[0]}']`); c.dataset.status = '';"
         "c.querySelector('.cell-run').click();", cell_id)
    return d.wait("const s = document.querySelector(`[data-cell='${arguments[0]}']`).dataset.status;"
                  "return ['ok', 'error', 'stopped', 'cancelled'].includes(s) && s", f"cell {cell_id}", 180, cell_id)


def wasm_mb(d) -> float:
    result = d.js("return lessonPage.runtime.run(arguments[0], 'bench-memory').then((r) => r.value)", WASM_MEMORY)
    return int(result) / 1e6


def open_lesson(d, sampler: Sampler, url: str) -> int:
    """The browser's PSS on about:blank (what every step is measured against), then the lesson at `url` open
    with Python ready and its cells set up."""
    d.open("about:blank")
    time.sleep(2)
    _, blank = sampler.step()
    d.open(url)
    d.wait("return document.querySelector('.py-status')?.dataset.state === 'ready' && document.body.dataset.cells === 'ready'",
           "Python", 180)
    return blank


#: Lesson 4's real-heads widget with the live MiniLM panel (its fence's id; Step 3's, `live: false`, has none)
LIVE_HEADS = "document.querySelector('[data-widget=real-heads][data-widget-id=real-heads]')"


def memory(engine: str, base: str, log: Path) -> list[tuple[str, float, float, float]]:
    """[(step, peak MB, end MB, wasm MB)] for the lesson in `engine`, less the browser on about:blank."""
    d = drivers.start(engine, log)
    sampler = Sampler()
    rows = []
    try:
        blank = open_lesson(d, sampler, base + "site/lessons/attention/")
        cells = d.js("return lessonPage.cells.cells.map((c) => c.id)")
        run_cell(d, "output")

        def record(step):
            peak, now = sampler.step()
            rows.append((step, (peak - blank) / 1e6, (now - blank) / 1e6, wasm_mb(d)))

        record("first output")
        for cell in cells:
            status = run_cell(d, cell)
            record(f"cell {cell}" + ("" if status == "ok" else f" ({status})"))
        # The widget starts as it nears the screen (widget-loader.js): bring it there, as a reader scrolls to it.
        # Lesson 4's first real-heads grid (Step 3's) has no live panel: the one that does is the section's.
        d.js(f"{LIVE_HEADS}.scrollIntoView()")
        live = d.wait(f"return {LIVE_HEADS}?.dataset.live", "the live panel", 60)
        if live == "idle":
            d.js(f"const w = {LIVE_HEADS}; const input = w.querySelector('input[type=text], textarea');"
                 "input.value = arguments[0]; input.dispatchEvent(new Event('input', {bubbles: true}));"
                 "[...w.querySelectorAll('button')].find((b) => /Run MiniLM/.test(b.textContent)).click();", SENTENCE)
            state = d.wait(f"const s = {LIVE_HEADS}?.dataset.live;"
                           "return ['done', 'error'].includes(s) && s", "the live model", 300)
            record(f"live MiniLM ({state})")
        else:
            print(f"  {engine}: this site has no live weights (built with --no-live-model?)", file=sys.stderr)
    finally:
        sampler.close()
        d.close()
    return rows


#: 31 tokens after the start token the panel puts first: the 32 of the issue's goal and of bench/live_smollm2.py
SMOL_TEXT = ("The cat sat on the mat because it was tired. The cat sat on the mat because it was tired. "
             "The cat sat on the mat because it was")
SMOL_NEW_TOKENS = 8
NEXT = "document.querySelector('[data-widget=next-token]')"


def live_smollm2(engine: str, base: str, log: Path) -> tuple[list, dict]:
    """Lesson 5's "What comes next?" in `engine`, as a reader uses it: Run SmolLM2 on SMOL_TEXT (the first run
    downloads the 97.7 MB), Run again (the next pass), then Generate SMOL_NEW_TOKENS greedy tokens with the KV cache.
    Returns the memory rows, as memory() does, and {step: seconds}: each step's wall time from the click, and the
    panel's own figures (the pass's time in Python, seconds per generated token)."""
    d = drivers.start(engine, log)
    sampler = Sampler()
    rows, seconds = [], {}

    def record(step):
        peak, now = sampler.step()
        rows.append((step, (peak - blank) / 1e6, (now - blank) / 1e6, wasm_mb(d)))

    def press(button: str, states: tuple[str, ...], what: str) -> float:
        d.js(f"const w = {NEXT}; w.dataset.state = ''; w.querySelector(arguments[0]).click();", button)
        start = time.monotonic()
        state = d.wait(f"const s = {NEXT}.dataset.state; return arguments[0].includes(s) && s", what, 900, list(states))
        if state not in states[:1]:
            raise RuntimeError(f"{engine}: {what} ended {state}: {d.js(f'return {NEXT}.querySelector(`.widget-status`).textContent')}")
        return time.monotonic() - start

    try:
        blank = open_lesson(d, sampler, base + "site/lessons/causal-mask/")
        d.js(f"{NEXT}.scrollIntoView()")
        state = d.wait(f"return {NEXT}?.dataset.state", "the next-token panel", 60)
        if state == "absent":
            print(f"  {engine}: this site has no SmolLM2 weights (built with --no-live-model?)", file=sys.stderr)
            return rows, seconds
        record("Lesson 5, Python ready")
        d.js(f"const box = {NEXT}.querySelector('.nexttoken-text'); box.value = arguments[0];"
             "box.dispatchEvent(new Event('input', {bubbles: true}));", SMOL_TEXT)
        seconds["first run: download + pass (wall)"] = press(".nexttoken-run", ("done", "error", "stopped"), "the first run")
        tokens = d.js(f"return {NEXT}.querySelectorAll('.nexttoken-tok').length")
        seconds[f"first pass, {tokens} tokens (Python)"] = float(d.js(f"return {NEXT}.dataset.seconds"))
        record("SmolLM2 first run")
        seconds["next run (wall)"] = press(".nexttoken-run", ("done", "error", "stopped"), "the next run")
        seconds[f"next pass, {tokens} tokens (Python)"] = float(d.js(f"return {NEXT}.dataset.seconds"))
        record("SmolLM2 next run")
        d.js(f"const n = {NEXT}.querySelector('.nexttoken-count'); n.value = arguments[0];"
             "n.dispatchEvent(new Event('input', {bubbles: true})); n.dispatchEvent(new Event('change', {bubbles: true}));",
             SMOL_NEW_TOKENS)
        seconds[f"generate {SMOL_NEW_TOKENS} with the cache (wall)"] = press(
            ".nexttoken-generate-run", ("generated", "error", "stopped"), "the generation")
        seconds["a token with the cache (Python)"] = float(d.js(f"return {NEXT}.dataset.perTokenCache"))
        record(f"generated {SMOL_NEW_TOKENS} tokens")
    finally:
        sampler.close()
        d.close()
    return rows, seconds


def print_memory(title: str, rows) -> None:
    print(f"\n{title}: the browser's processes (PSS) less about:blank, MB; Python's wasm memory, MB")
    print(f"{'step':34}{'peak':>10}{'end':>10}{'wasm':>10}")
    for step, peak, end, wasm in rows:
        print(f"{step:34}{peak:>10.0f}{end:>10.0f}{wasm:>10.0f}")
    if rows:
        print(f"{'largest':34}{max(r[1] for r in rows):>10.0f}{max(r[2] for r in rows):>10.0f}{max(r[3] for r in rows):>10.0f}")


def spread(values, fmt=".2f") -> str:
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--site", type=Path, default=ROOT / "site", help="a built site (python3 build.py)")
    parser.add_argument("--engines", default=",".join(("chromium", *drivers.ENGINES)))
    parser.add_argument("--no-memory", action="store_true", help="first output only")
    parser.add_argument("--no-startup", action="store_true", help="memory only")
    parser.add_argument("--smollm2", action="store_true",
                        help="also Lesson 5's live SmolLM2 panel: its first and next pass, 8 tokens with the cache, memory")
    args = parser.parse_args()
    engines = args.engines.split(",")
    for engine in engines:
        if drivers.missing(engine):
            print(drivers.missing(engine), file=sys.stderr)
            return 1
    if not built(args.site):
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        server, base = serve_both(args.site, Path(tmp))
        log = Path(tmp) / "driver.log"
        try:
            if not args.no_startup:
                times = {e: {"raw": [], "lesson": []} for e in engines}
                for run in range(args.runs):
                    for engine in engines:
                        times[engine]["raw"].append(first_output(engine, base + "raw/index.html", False, log))
                        times[engine]["lesson"].append(first_output(engine, base + "site/lessons/attention/", True, log))
                    print(f"run {run + 1}/{args.runs} done", file=sys.stderr)
                print(f"First output, loopback, isolated, cold profile; {args.runs} interleaved runs; median [min-max]")
                print(f"{'engine':10}{'raw (s)':>22}{'lesson (s)':>22}{'lesson / raw':>22}")
                for engine in engines:
                    raw, ours = times[engine]["raw"], times[engine]["lesson"]
                    print(f"{engine:10}{spread(raw):>22}{spread(ours):>22}{spread([b / a for a, b in zip(raw, ours)]) + 'x':>22}")
            if not args.no_memory:
                for engine in engines:
                    print_memory(f"Memory, {engine}", memory(engine, base, log))
            if args.smollm2:
                for engine in engines:
                    rows, seconds = live_smollm2(engine, base, log)
                    print_memory(f"SmolLM2 live, {engine}", rows)
                    for step, value in seconds.items():
                        print(f"  {step:44}{value:8.2f} s")
        finally:
            server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
