"""bench/lighthouse.py's pure part: Lighthouse results summarised into a table, and its failing audits.

No browser and no Lighthouse: the results are small hand-made dicts shaped like Lighthouse 12's JSON."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_spec = importlib.util.spec_from_file_location("bench_lighthouse", ROOT / "bench" / "lighthouse.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench  # its dataclasses look their module up there
_spec.loader.exec_module(bench)

PAGE = "http://127.0.0.1:8000/lessons/attention/"


def result(performance=0.8, tbt=700.0, lcp=2000.0, html=(58_000, 336_000), dom=9_000, audits=None):
    """One run's result, with what the table reads (and a frame's document, which it must not take)."""
    documents = [{"url": "http://127.0.0.1:8000/frame.html", "resourceType": "Document",
                  "transferSize": 1, "resourceSize": 2},
                 {"url": PAGE, "resourceType": "Document", "transferSize": html[0], "resourceSize": html[1]},
                 {"url": PAGE + "page.js", "resourceType": "Script", "transferSize": 5, "resourceSize": 6}]
    return {
        "mainDocumentUrl": PAGE,
        "categories": {"performance": {"score": performance}, "accessibility": {"score": 0.93},
                       "best-practices": {"score": 1}, "seo": {"score": 1}},
        "audits": {
            "cumulative-layout-shift": {"numericValue": 0.081, "score": 0.93},
            "total-blocking-time": {"numericValue": tbt, "score": 0.4, "displayValue": f"{tbt:.0f} ms"},
            "largest-contentful-paint": {"numericValue": lcp, "score": 0.95},
            "first-contentful-paint": {"numericValue": 1510.0, "score": 0.97},
            "speed-index": {"numericValue": 1512.0, "score": 0.99},
            "dom-size": {"numericValue": dom, "score": 0, "displayValue": f"{dom:,} elements"},
            "network-requests": {"score": None, "details": {"items": documents}},
            **(audits or {}),
        },
    }


def rows(table: str) -> dict[str, list[str]]:
    """The table's body as {label: [median, min-max]}."""
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    return {label: rest for label, *rest in cells}


def test_the_table_has_each_metrics_median_and_range_over_the_runs():
    lhrs = [result(performance=0.8, tbt=725.4, lcp=1960.0), result(performance=0.74, tbt=900.0, lcp=2210.0),
            result(performance=0.83, tbt=610.0, lcp=1890.0)]
    table = bench.format_table(lhrs)
    assert table.splitlines()[0] == "| Lighthouse mobile (3 runs) | median | min–max |"
    assert rows(table) == {
        "performance score": ["80", "74–83"],
        "accessibility score": ["93", "93–93"],
        "best practices score": ["100", "100–100"],
        "SEO score": ["100", "100–100"],
        "cumulative layout shift": ["0.081", "0.081–0.081"],
        "total blocking time (simulated 4x CPU)": ["725 ms", "610 ms–900 ms"],
        "largest contentful paint": ["1.96 s", "1.89 s–2.21 s"],
        "first contentful paint": ["1.51 s", "1.51 s–1.51 s"],
        "speed index": ["1.51 s", "1.51 s–1.51 s"],
        "DOM elements at load (dom-size)": ["9,000", "9,000–9,000"],
        "page HTML, transferred": ["58,000 B", "58,000 B–58,000 B"],
        "page HTML, resource size": ["336,000 B", "336,000 B–336,000 B"],
    }


def test_an_even_number_of_runs_takes_the_mean_of_the_middle_two():
    table = bench.format_table([result(tbt=600.0), result(tbt=700.0)])
    assert rows(table)["total blocking time (simulated 4x CPU)"] == ["650 ms", "600 ms–700 ms"]


def test_a_figure_some_runs_lack_says_in_how_many_it_was_found():
    broken = result(lcp=3000.0)
    del broken["audits"]["largest-contentful-paint"]["numericValue"]  # an audit that errored has no value
    broken["categories"]["seo"]["score"] = None
    broken["audits"]["network-requests"]["details"]["items"] = []
    table = rows(bench.format_table([result(lcp=1800.0), broken, result(lcp=2200.0)]))
    assert table["largest contentful paint"] == ["2.00 s (2 of 3 runs)", "1.80 s–2.20 s"]
    assert table["SEO score"] == ["100 (2 of 3 runs)", "100–100"]
    assert table["page HTML, transferred"][0] == "58,000 B (2 of 3 runs)"
    assert rows(bench.format_table([broken]))["largest contentful paint"] == ["n/a", "n/a"]


def test_the_page_is_the_main_document_else_the_first_document():
    lhr = result()
    assert bench.page_document(lhr)["url"] == PAGE
    lhr["mainDocumentUrl"] = "http://127.0.0.1:8000/elsewhere/"
    assert bench.page_document(lhr)["url"].endswith("/frame.html")


def test_the_median_run_is_the_one_with_the_median_performance_score():
    assert bench.median_run([result(performance=0.9), result(performance=0.7), result(performance=0.8)]) == 2
    assert bench.median_run([result(performance=0.9), result(performance=0.7)]) == 1  # the lower middle one
    assert bench.median_run([result(performance=None), result(performance=0.7), result(performance=0.8)]) == 1


def test_failing_audits_are_the_scored_ones_below_0_9_worst_first():
    lhr = result(audits={"color-contrast": {"score": 0, "scoreDisplayMode": "binary"},
                         "unused-javascript": {"score": 0.5, "displayValue": "Est savings of 82 KiB"},
                         "layout-shifts": {"score": None, "scoreDisplayMode": "informative"},
                         "doctype": {"score": 1}})
    assert bench.failing_audits(lhr) == [
        ("color-contrast", 0, ""), ("dom-size", 0, "9,000 elements"),
        ("total-blocking-time", 0.4, "700 ms"), ("unused-javascript", 0.5, "Est savings of 82 KiB")]


def test_the_failing_list_is_the_median_runs_with_how_many_runs_failed_each():
    clean = result(performance=0.95, tbt=100.0, dom=500)
    clean["audits"]["total-blocking-time"]["score"] = 1
    clean["audits"]["dom-size"]["score"] = 1
    worst = result(performance=0.5)
    text = bench.format_failing([clean, result(performance=0.8), worst])
    assert text.splitlines() == [
        "Audits below 0.9 in the median run (run 2), worst first:",
        "  dom-size: 0.00 (9,000 elements), in 2 of 3 runs",
        "  total-blocking-time: 0.40 (700 ms), in 2 of 3 runs",
    ]
    assert bench.format_failing([clean]) == "No audit scored below 0.9 in the median run (run 1)."
    assert bench.format_failing([worst], top=1).splitlines()[-1] == "  (+1 more; --json keeps every audit)"


def test_lighthouse_is_pinned_apart_from_the_builds_packages():
    """The build's `npm ci` stays lean: Lighthouse has its own package.json and lock, at 12.8.2."""
    package = json.loads((ROOT / "bench" / "lighthouse" / "package.json").read_text())
    lock = json.loads((ROOT / "bench" / "lighthouse" / "package-lock.json").read_text())
    assert package["dependencies"] == {"lighthouse": "12.8.2"}
    assert lock["packages"][""]["dependencies"] == package["dependencies"]
    assert lock["packages"]["node_modules/lighthouse"]["version"] == "12.8.2"
    assert "lighthouse" not in json.loads((ROOT / "package.json").read_text()).get("dependencies", {})


def test_our_disabled_features_join_chrome_launchers_in_one_switch():
    """Chromium reads only the last --disable-features; chrome-launcher puts ours after its own defaults."""
    ours = ["--headless=new", "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup", "--no-sandbox"]
    merged = bench.with_disabled_features(ours, ["Translate", "MediaRouter", "WebUIOmniboxPopup"])
    assert merged == ["--headless=new", "--no-sandbox",
                      "--disable-features=Translate,MediaRouter,WebUIOmniboxPopup,WebUIOmniboxAimPopup"]
    assert bench.with_disabled_features(["--no-sandbox"], []) == ["--no-sandbox"]
    assert bench.disabled_features(["--disable-features=A,B", "--x", "--disable-features=B,C"]) == ["A", "B", "C"]


def test_a_run_whose_trace_failed_is_made_again_and_said_and_other_failures_are_not():
    said, calls = [], []

    def flaky(codes):
        def attempt():
            calls.append(1)
            code = codes.pop(0)
            if code:
                raise bench.LighthouseRunError(f"failed: {code}", code)
            return {"ok": True}
        return attempt

    assert bench.with_retries(flaky(["NO_NAVSTART", None]), said.append) == {"ok": True}
    assert len(calls) == 2 and said == ["  Lighthouse's trace failed (NO_NAVSTART): running it again"]
    calls.clear()
    try:
        bench.with_retries(flaky(["NO_FCP", None]), said.append)  # the page never painted: not the trace's fault
    except bench.LighthouseRunError as exc:
        assert exc.code == "NO_FCP" and len(calls) == 1
    else:
        raise AssertionError("a failure that is not transient must end the bench")
    calls.clear()
    try:
        bench.with_retries(flaky(["NO_NAVSTART"] * (bench.RETRIES + 1)), said.append)
    except bench.LighthouseRunError:
        assert len(calls) == bench.RETRIES + 1
    else:
        raise AssertionError("retries are bounded")
