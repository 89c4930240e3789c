#!/usr/bin/env python3
"""Benchmark: Lighthouse's mobile run of the lesson page, N times, as one table.

    python3 bench/lighthouse.py [--runs 3] [--site DIR] [--url-path /lessons/attention/] [--json FILE]

Builds the site (`python3 build.py --out DIR`, the command line's defaults) unless --site names a built one,
serves it with the project's dev server on 127.0.0.1 (COOP/COEP on, compressed, as `build.py serve` does),
and runs Lighthouse's default config on the lesson page --runs times, each in a fresh Chromium profile:
a phone's form factor and *simulated* throttling (a slow 4G link and a 4x slower CPU, estimated from the
unthrottled load by Lighthouse's model): Lighthouse's phone, not this machine, though the CPU work it
multiplies by 4 is this machine's, so a loaded machine still shows in the blocking time.
It prints, per figure, the median and min-max over the runs, then the audits that scored below 0.9 in the
median run (by performance score). --json keeps every run's full Lighthouse result.

Lighthouse is pinned in bench/lighthouse/ (package.json + package-lock.json) and installed there on first
use (`npm ci`, node_modules git-ignored), not in the root package.json: the build's `npm ci` stays lean.
It drives Debian's Chromium (CHROMIUM_PATH, default /usr/bin/chromium). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))  # the browser tests' helpers (browser.py)

PACKAGE_DIR = ROOT / "bench" / "lighthouse"
LIGHTHOUSE_CLI = PACKAGE_DIR / "node_modules" / "lighthouse" / "cli" / "index.js"
# chrome-launcher (inside Lighthouse) starts Chromium with its DEFAULT_FLAGS, then ours
LAUNCHER_FLAGS = PACKAGE_DIR / "node_modules" / "chrome-launcher" / "dist" / "flags.js"
DISABLE_FEATURES = "--disable-features="
# Which lock the installed node_modules came from: a changed pin reinstalls on the next run.
INSTALLED_STAMP = PACKAGE_DIR / "node_modules" / ".bench-lock-sha256"
MIN_NODE_MAJOR = 18  # lighthouse 12's engines: node >= 18.16
FAILING_BELOW = 0.9  # Lighthouse colours a score below 0.9 orange or red
TOP_AUDITS = 15
RUN_TIMEOUT_S = 600  # one run on a busy 2-core machine takes about a minute; a hung Chromium should not hang us


class BenchError(Exception):
    """Something this bench needs is missing or failed; the message says what to do."""


class LighthouseRunError(BenchError):
    """One Lighthouse run failed; `code` is Lighthouse's runtime error code, if it gave one."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.code = code


# Lighthouse's own "Please run Lighthouse again" failures: its trace of the load came out incomplete (2 of about
# 12 runs on this machine on 4 December gave NO_NAVSTART). Such a run is made again, up to RETRIES times, and said.
TRANSIENT = frozenset({"NO_NAVSTART", "NO_TRACING_STARTED", "TRACING_ALREADY_STARTED", "PROTOCOL_TIMEOUT"})
RETRIES = 2


def with_retries(attempt, say=lambda text: print(text, file=sys.stderr)):
    """attempt()'s result, made again (at most RETRIES more times) while it fails with a TRANSIENT code."""
    for tried in range(RETRIES + 1):
        try:
            return attempt()
        except LighthouseRunError as exc:
            if exc.code not in TRANSIENT or tried == RETRIES:
                raise
            say(f"  Lighthouse's trace failed ({exc.code}): running it again")
    raise AssertionError("unreachable")


# --- Reading Lighthouse results (pure: the unit test feeds it small hand-made results) ---

Reader = Callable[[dict], "float | None"]


@dataclass(frozen=True)
class Metric:
    label: str
    read: Reader  # one run's value, or None when that run did not produce it (an audit that errored)
    show: Callable[[float], str]


def category_score(name: str) -> Reader:
    """A category's score as Lighthouse shows it, 0-100."""
    def read(lhr: dict) -> float | None:
        score = lhr.get("categories", {}).get(name, {}).get("score")
        return None if score is None else score * 100
    return read


def audit_value(audit_id: str) -> Reader:
    """An audit's numericValue: milliseconds for the timing metrics, a count for dom-size, unitless for CLS."""
    def read(lhr: dict) -> float | None:
        return lhr.get("audits", {}).get(audit_id, {}).get("numericValue")
    return read


def page_document(lhr: dict) -> dict | None:
    """The lesson page's own request in the network-requests audit: the main document's URL (after redirects,
    e.g. /lessons/attention -> /lessons/attention/), else the first Document."""
    items = lhr.get("audits", {}).get("network-requests", {}).get("details", {}).get("items", [])
    documents = [item for item in items if item.get("resourceType") == "Document"]
    url = lhr.get("mainDocumentUrl") or lhr.get("finalDisplayedUrl")
    return next((item for item in documents if item.get("url") == url), documents[0] if documents else None)


def page_html(field: str) -> Reader:
    """transferSize (as served: the dev server gzips HTML) or resourceSize (decoded) of the page itself."""
    def read(lhr: dict) -> float | None:
        document = page_document(lhr)
        return None if document is None else document.get(field)
    return read


def _score(value: float) -> str:
    return f"{value:.0f}"


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.2f} s"


def _ms(ms: float) -> str:
    return f"{ms:,.0f} ms"


def _count(value: float) -> str:
    return f"{value:,.0f}"


def _bytes(value: float) -> str:
    return f"{value:,.0f} B"


METRICS: tuple[Metric, ...] = (
    Metric("performance score", category_score("performance"), _score),
    Metric("accessibility score", category_score("accessibility"), _score),
    Metric("best practices score", category_score("best-practices"), _score),
    Metric("SEO score", category_score("seo"), _score),
    Metric("cumulative layout shift", audit_value("cumulative-layout-shift"), lambda v: f"{v:.3f}"),
    Metric("total blocking time (simulated 4x CPU)", audit_value("total-blocking-time"), _ms),
    Metric("largest contentful paint", audit_value("largest-contentful-paint"), _seconds),
    Metric("first contentful paint", audit_value("first-contentful-paint"), _seconds),
    Metric("speed index", audit_value("speed-index"), _seconds),
    Metric("DOM elements at load (dom-size)", audit_value("dom-size"), _count),
    Metric("page HTML, transferred", page_html("transferSize"), _bytes),
    Metric("page HTML, resource size", page_html("resourceSize"), _bytes),
)


@dataclass(frozen=True)
class Summary:
    metric: Metric
    values: list[float]  # the runs that produced a value, in run order

    def cells(self, runs: int) -> tuple[str, str]:
        """(median, min-max) as shown; a figure some runs lacked says in how many it was found."""
        if not self.values:
            return "n/a", "n/a"
        show = self.metric.show
        median = show(statistics.median(self.values))
        if len(self.values) < runs:
            median += f" ({len(self.values)} of {runs} runs)"
        return median, f"{show(min(self.values))}–{show(max(self.values))}"


def summarise(lhrs: list[dict], metrics: tuple[Metric, ...] = METRICS) -> list[Summary]:
    """Each metric's values over the runs."""
    summaries = []
    for metric in metrics:
        values = [metric.read(lhr) for lhr in lhrs]
        summaries.append(Summary(metric, [v for v in values if v is not None]))
    return summaries


def format_table(lhrs: list[dict]) -> str:
    """The Markdown table: one row a metric, median and min-max over the runs."""
    runs = len(lhrs)
    lines = [f"| Lighthouse mobile ({runs} run{'s' if runs != 1 else ''}) | median | min–max |", "|---|---|---|"]
    for summary in summarise(lhrs):
        median, spread = summary.cells(runs)
        lines.append(f"| {summary.metric.label} | {median} | {spread} |")
    return "\n".join(lines)


def median_run(lhrs: list[dict]) -> int:
    """The index of the run whose performance score is the median (the lower middle one for an even count;
    a run with no score sorts first), so that its audits are typical rather than the best or the worst."""
    read = category_score("performance")
    order = sorted(range(len(lhrs)), key=lambda i: (read(lhrs[i]) is not None, read(lhrs[i]) or 0, i))
    return order[(len(order) - 1) // 2]


def failing_audits(lhr: dict, below: float = FAILING_BELOW) -> list[tuple[str, float, str]]:
    """(id, score, display value) of every scored audit below `below`, worst first. Informative, manual and
    not-applicable audits have no score, so they never count."""
    failing = [(audit_id, audit["score"], audit.get("displayValue", ""))
               for audit_id, audit in lhr.get("audits", {}).items()
               if isinstance(audit.get("score"), (int, float)) and audit["score"] < below]
    return sorted(failing, key=lambda row: (row[1], row[0]))


def format_failing(lhrs: list[dict], top: int = TOP_AUDITS) -> str:
    """The median run's failing audits, each with how many of all the runs failed it too."""
    index = median_run(lhrs)
    failing = failing_audits(lhrs[index])
    if not failing:
        return f"No audit scored below {FAILING_BELOW} in the median run (run {index + 1})."
    per_run = [{audit_id for audit_id, _, _ in failing_audits(lhr)} for lhr in lhrs]
    lines = [f"Audits below {FAILING_BELOW} in the median run (run {index + 1}), worst first:"]
    for audit_id, score, shown in failing[:top]:
        in_runs = sum(audit_id in ids for ids in per_run)
        lines.append(f"  {audit_id}: {score:.2f}{f' ({shown})' if shown else ''}, in {in_runs} of {len(lhrs)} runs")
    if len(failing) > top:
        lines.append(f"  (+{len(failing) - top} more; --json keeps every audit)")
    return "\n".join(lines)


# --- Running it (node, npm, Chromium, the build, the server) ---

def check_node() -> str:
    """Node's path, if it is new enough for Lighthouse 12."""
    from sitebuild.node import NodeError, node_and_version

    try:
        node, version = node_and_version()
    except NodeError as exc:
        raise BenchError(f"{exc}: Lighthouse needs Node.js >= {MIN_NODE_MAJOR} (./setup.sh installs it)") from exc
    major = version.lstrip("v").split(".")[0]
    if not major.isdigit() or int(major) < MIN_NODE_MAJOR:
        raise BenchError(f"Node.js {version} is too old for Lighthouse 12: it needs >= {MIN_NODE_MAJOR}")
    return node


def ensure_lighthouse() -> Path:
    """Lighthouse's CLI, installed from bench/lighthouse/package-lock.json on first use (or when the lock
    changed since the last install)."""
    lock = hashlib.sha256((PACKAGE_DIR / "package-lock.json").read_bytes()).hexdigest()
    if LIGHTHOUSE_CLI.exists() and INSTALLED_STAMP.exists() and INSTALLED_STAMP.read_text() == lock:
        return LIGHTHOUSE_CLI
    npm = shutil.which("npm")
    if npm is None:
        raise BenchError("`npm` not found on PATH: it installs Lighthouse (./setup.sh installs Node.js and npm)")
    print(f"installing Lighthouse into {PACKAGE_DIR / 'node_modules'} (npm ci, once)…", file=sys.stderr)
    done = subprocess.run([npm, "ci", "--prefix", str(PACKAGE_DIR), "--no-audit", "--no-fund", "--loglevel=error"],
                          capture_output=True, text=True)
    if done.returncode != 0 or not LIGHTHOUSE_CLI.exists():
        # npm says why in its first lines, then prints the command's whole usage: keep the first ones.
        said = "\n".join((done.stderr or done.stdout).strip().splitlines()[:12])
        raise BenchError(f"`npm ci --prefix {PACKAGE_DIR}` failed (exit {done.returncode}):\n{said}")
    INSTALLED_STAMP.write_text(lock)
    return LIGHTHOUSE_CLI


def chromium() -> tuple[str, list[str]]:
    """Debian's Chromium and the tests' flags: headless, no sandbox (we may be root), and none of Chromium's
    calls home, which this machine's closed network would refuse."""
    # Imported here: tests/support/browser.py pulls in Playwright, which the pure part above (and its test) do not need.
    try:
        from browser import CHROMIUM_ARGS, chromium_path

        return chromium_path(), list(CHROMIUM_ARGS)
    except ImportError as exc:
        raise BenchError(f"tests/support/browser.py, which knows the Chromium flags, needs {exc.name}: ./setup.sh --test") from exc
    except RuntimeError as exc:
        raise BenchError(str(exc)) from exc


def disabled_features(flags: list[str]) -> list[str]:
    """The features a list of Chromium flags disables, in order, each once."""
    names = [name for flag in flags if flag.startswith(DISABLE_FEATURES)
             for name in flag[len(DISABLE_FEATURES):].split(",") if name]
    return list(dict.fromkeys(names))


def with_disabled_features(flags: list[str], more: list[str]) -> list[str]:
    """*flags* with one --disable-features that names both its own features and *more*. Chromium reads only the
    last of several such switches, and chrome-launcher puts ours after its own, which would turn its back on."""
    merged = list(dict.fromkeys([*more, *disabled_features(flags)]))
    rest = [flag for flag in flags if not flag.startswith(DISABLE_FEATURES)]
    return [*rest, DISABLE_FEATURES + ",".join(merged)] if merged else rest


def launcher_disabled_features(node: str) -> list[str]:
    """The features chrome-launcher's own default flags disable, read from the installed package."""
    script = f"import({json.dumps(LAUNCHER_FLAGS.as_uri())}).then((m) => console.log(JSON.stringify(m.DEFAULT_FLAGS)))"
    done = subprocess.run([node, "-e", script], capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"could not read chrome-launcher's default flags ({LAUNCHER_FLAGS}): {done.stderr.strip()[-500:]}")
    return disabled_features(json.loads(done.stdout))


def build_site(out: Path) -> Path:
    """Build as a reader's site is built (the command line's defaults: snapshot always, live model), its log on
    stderr so stdout holds only the results."""
    print(f"building the site into {out} (python3 build.py --out …)", file=sys.stderr)
    done = subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(out)], stdout=sys.stderr)
    if done.returncode != 0:
        raise BenchError(f"the build failed (exit {done.returncode}); its messages are above")
    return out


def tree_state() -> str:
    """Which tree was built: the commit, and whether the working tree differed from it (others may be editing)."""
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "the working tree (git did not answer)"
    return f"the tree of commit {commit}" + (" with uncommitted changes" if dirty else "")


def run_lighthouse(node: str, cli: Path, url: str, chrome: tuple[str, list[str]], out: Path) -> dict:
    """One Lighthouse run with its default config (mobile, simulated throttling), in a fresh profile; its result."""
    path, flags = chrome
    command = [node, str(cli), url, "--output=json", f"--output-path={out}", "--quiet",
               f"--chrome-flags={' '.join(flags)}"]
    # CHROME_PATH is how chrome-launcher (inside Lighthouse) is told which Chromium to start.
    env = {**os.environ, "CHROME_PATH": path}
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise BenchError(f"Lighthouse took longer than {RUN_TIMEOUT_S} s on {url}") from exc
    try:
        lhr = json.loads(out.read_text())
    except (OSError, ValueError):  # no result written, or a partial one: the exit code and stderr say why
        lhr = None
    error = (lhr or {}).get("runtimeError")
    if done.returncode != 0 or lhr is None or error:
        why = f"{error['code']}: {error.get('message', '')}" if error else (done.stderr or done.stdout).strip()[-3000:]
        raise LighthouseRunError(f"Lighthouse failed on {url} (exit {done.returncode}): {why}",
                                 error.get("code") if error else None)
    return lhr


def notes(lhrs: list[dict]) -> str:
    """What the table does not say: the versions, the throttling Lighthouse applied, its reading of this machine's
    speed (the simulated CPU is this machine's work times 4, so a loaded machine moves TBT), and its warnings."""
    first = lhrs[0]
    settings = first.get("configSettings", {})
    throttling = settings.get("throttling", {})
    index = [lhr.get("environment", {}).get("benchmarkIndex") for lhr in lhrs]
    lines = [f"Lighthouse {first.get('lighthouseVersion', '?')}, "
             f"{first.get('environment', {}).get('hostUserAgent', '?')}",
             # Read back from the result, so the table's heading is what Lighthouse did, not what we meant it to.
             f"form factor {settings.get('formFactor', '?')}, throttling {settings.get('throttlingMethod', '?')}: "
             f"{throttling.get('rttMs', '?')} ms RTT, {throttling.get('throughputKbps', 0):,.0f} kbit/s, "
             f"CPU x{throttling.get('cpuSlowdownMultiplier', '?')}",
             f"machine benchmark index (Lighthouse's, of this machine, not the page): "
             f"{', '.join(f'{v:.0f}' for v in index if v is not None) or 'n/a'}"]
    warnings = sorted({w for lhr in lhrs for w in lhr.get("runWarnings", [])})
    lines += [f"warning: {w}" for w in warnings]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--site", type=Path, help="a built site (default: build one into a temporary folder)")
    parser.add_argument("--url-path", default="/lessons/attention/", help="the page to measure, under the site")
    parser.add_argument("--json", type=Path, help="write every run's full Lighthouse result (a JSON list) here")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    from sitebuild.server import serve_in_thread

    try:
        node, (path, flags) = check_node(), chromium()
        cli = ensure_lighthouse()
        chrome = (path, with_disabled_features(flags, launcher_disabled_features(node)))
        with tempfile.TemporaryDirectory(prefix="lighthouse-bench-") as tmp:
            if args.site is None:
                site, built = build_site(Path(tmp) / "site"), tree_state()
            else:
                site, built = args.site.resolve(), str(args.site)
            if not (site / args.url_path.strip("/")).exists():
                raise BenchError(f"{args.url_path} is not in {site}: build the site first (python3 build.py)")
            # Compressed and isolated, as `build.py serve` serves it: the page a reader of a good host gets.
            server, base = serve_in_thread(site, port=0, quiet=True, isolate=True)
            url = base + args.url_path.lstrip("/")
            lhrs = []
            try:
                for run in range(args.runs):
                    print(f"Lighthouse run {run + 1}/{args.runs} on {url}…", file=sys.stderr)
                    out = Path(tmp) / f"run-{run + 1}.json"
                    lhrs.append(with_retries(lambda: run_lighthouse(node, cli, url, chrome, out)))
            finally:
                server.shutdown()
                server.server_close()
    except BenchError as exc:
        print(f"bench/lighthouse.py: {exc}", file=sys.stderr)
        return 1
    if args.json:
        args.json.write_text(json.dumps(lhrs))
    print(f"{args.url_path} of {built}, Lighthouse's default mobile config (simulated throttling)\n")
    print(format_table(lhrs))
    print()
    print(format_failing(lhrs))
    print()
    print(notes(lhrs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
