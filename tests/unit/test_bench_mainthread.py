"""bench/mainthread.py's pure part: the main thread's CPU figures read off a Chromium trace.

No browser: the traces are small hand-made event lists shaped like Chromium's (RunTask with its thread time,
tdur, in microseconds; the bench's own mark at the output's moment)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_spec = importlib.util.spec_from_file_location("bench_mainthread", ROOT / "bench" / "mainthread.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)

PAGE, OTHER = (10, 10), (20, 21)  # (pid, tid): the lesson's main thread, and another renderer's


def task(thread, ts_ms, cpu_ms, wall_ms=None):
    """A RunTask of `cpu_ms` thread time starting at `ts_ms` (wall time: twice that, as on a busy machine)."""
    pid, tid = thread
    return {"name": "RunTask", "ph": "X", "pid": pid, "tid": tid, "ts": ts_ms * 1000,
            "dur": (wall_ms or 2 * cpu_ms) * 1000, "tdur": cpu_ms * 1000}


def trace(*events, mark_ms=1000):
    mark = {"name": bench.OUTPUT_MARK, "ph": "I", "pid": PAGE[0], "tid": PAGE[1], "ts": mark_ms * 1000}
    return json.dumps({"traceEvents": [*events, mark]}).encode()


def test_tasks_split_at_the_output_and_counted_in_thread_time():
    figures = bench.cpu_figures(trace(task(PAGE, 100, 20), task(PAGE, 400, 70), task(PAGE, 1200, 55), task(PAGE, 1500, 10)))
    assert figures == pytest.approx({
        "cpu_ms": 90, "cpu_longest_ms": 70, "cpu_blocking_ms": 20,
        "tail_cpu_ms": 65, "tail_cpu_longest_ms": 55, "tail_cpu_blocking_ms": 5,
    })


def test_only_the_thread_that_marked_the_output_counts():
    figures = bench.cpu_figures(trace(task(PAGE, 100, 30), task(OTHER, 200, 500), task((PAGE[0], 99), 300, 400)))
    assert (figures["cpu_ms"], figures["cpu_longest_ms"], figures["tail_cpu_ms"]) == (30, 30, 0)


def test_a_trace_without_the_mark_says_so():
    events = json.dumps({"traceEvents": [task(PAGE, 100, 30)]}).encode()
    with pytest.raises(SystemExit, match=bench.OUTPUT_MARK):
        bench.cpu_figures(events)


def test_a_trace_without_thread_times_says_so_instead_of_zeros():
    plain = {key: value for key, value in task(PAGE, 100, 30).items() if key != "tdur"}
    with pytest.raises(SystemExit, match="no thread time"):
        bench.cpu_figures(trace(plain))
