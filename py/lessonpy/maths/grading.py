"""Grade a reader's answer to an exercise, in the order quarto-live uses.

    blanks left? -> does it parse? -> run it (fresh namespace, timeout) -> the exercise's checks

The page calls :func:`grade` through the worker (``runtime.call("lessonpy.maths.grading", "grade",
{code, check, timeout})``) and gets plain data back::

    {"correct": bool, "stage": "blanks" | "syntax" | "run" | "timeout" | "stopped" | "checks",
     "checks": [{"correct": bool, "message": str}, ...], "output": str, "error": str | None}

The reader's code runs in a namespace of its own: never the page's notebook namespace, never
this module's. A check is a generator in a lesson's ``exercises`` module (found by name in :data:`CHECKS`) that takes that namespace
and yields :func:`ok` / :func:`fail` results; it raises :class:`CheckFailed` to stop early
(when nothing after it could make sense, such as a missing function).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import io
import linecache
import re
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ..runtime.limits import OUTPUT_CHARS, clip
from ..runtime.runner import exception_lines, exception_message, exception_name, frames_traceback, short_repr

#: Where a check is found by its name: the course's registry of every lesson's checks. A module's name, not an
#: import: the grader is the same for every course and imports none (tests/unit/test_layers.py).
CHECKS = "lessonpy.course.checks"
#: The reader's code is compiled under this name: tracebacks and the timeout look for it.
ANSWER_FILE = "<your answer>"
OUTPUT_LIMIT = 5_000  # characters of the reader's printed output sent back to the page
BLANK = re.compile(r"_{4,}")  # a ____ placeholder the starter code leaves to fill in


class GradingTimeout(BaseException):
    """The reader's code ran past its deadline (a BaseException, so `except Exception` cannot swallow it)."""


class CheckFailed(Exception):
    """Raised by a check to fail with *message* and skip the checks after it."""


def ok(message: str) -> dict:
    """A check that passed."""
    return {"correct": True, "message": clip(message)}


def fail(message: str) -> dict:
    """A check that failed, saying specifically why (within MESSAGE_CHARS: it may quote what the reader's
    function returned or raised)."""
    return {"correct": False, "message": clip(message)}


# ---------------------------------------------------------------------------- helpers for checks

def answer_line(exc: BaseException) -> int | None:
    """The line of the reader's code where *exc* happened (the innermost such frame)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == ANSWER_FILE]
    return frames[-1].lineno if frames else None


def require_function(ns: dict, name: str) -> Callable:
    """The reader's function *name*, or a CheckFailed saying what is missing."""
    func = ns.get(name)
    if func is None:
        raise CheckFailed(f"define a function named `{name}` (it was not found in your code)")
    if not callable(func):
        raise CheckFailed(f"`{name}` is a {clip(type(func).__name__)}, not a function")
    return func


def call(func: Callable, *args: Any, shown: str | None = None) -> Any:
    """Call the reader's *func*; an exception in it becomes a CheckFailed naming the call and the line."""
    shown = shown or f"{func.__name__}(…)"
    try:
        return func(*args)
    except Exception as exc:  # noqa: BLE001 - the reader's mistakes are reported, not raised
        line = answer_line(exc)
        where = f" (line {line} of your code)" if line else ""
        raise CheckFailed(f"{shown} raised {exception_name(exc)}: {exception_message(exc)}{where}") from None


# ---------------------------------------------------------------------------- the stages

def find_blanks(code: str) -> list[int]:
    """Lines (1-based) that still hold a ____ blank, or a bare `...` standing in for code."""
    lines = [i for i, text in enumerate(code.splitlines(), 1) if BLANK.search(text)]
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return lines
    subscripted = {id(n) for s in ast.walk(tree) if isinstance(s, ast.Subscript) for n in ast.walk(s.slice)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value is Ellipsis and id(node) not in subscripted:
            lines.append(node.lineno)  # x[..., 0] is numpy indexing, not a blank
    return sorted(set(lines))


def _describe_syntax_error(exc: SyntaxError) -> str:
    text = "".join(exception_lines(exc))
    return text.replace(f'File "{ANSWER_FILE}", line', "line").strip("\n")


def _describe_run_error(exc: BaseException) -> str:
    """A traceback of the reader's own lines only (the grader's frames mean nothing to them)."""
    text = frames_traceback(exc, lambda filename: filename == ANSWER_FILE)
    return text.replace(f'File "{ANSWER_FILE}", line', "Line").strip("\n")


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise GradingTimeout in the reader's code once *seconds* have passed.

    Only frames of the reader's code get line-by-line tracing; every other Python call is
    looked at once, so the grader's own code pays almost nothing. Tracing sees no new line in a
    loop on one line (``while True: pass``), so where threads exist (CPython: the notebook's
    ``%%exercise``) a timer also interrupts the main thread at the same deadline (:func:`_interrupt_at`).
    Code stuck inside one C call (a huge matrix product) cannot be interrupted from here: the page
    falls back to stopping the worker.
    """
    end = time.monotonic() + seconds

    def local(frame, event, arg):
        if time.monotonic() > end:
            raise GradingTimeout
        return local

    def on_call(frame, event, arg):
        if time.monotonic() > end:
            raise GradingTimeout
        return local if frame.f_code.co_filename == ANSWER_FILE else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        with _interrupt_at(seconds):
            yield
    finally:
        sys.settrace(previous)


@contextlib.contextmanager
def _interrupt_at(seconds: float) -> Iterator[None]:
    """Raise GradingTimeout in the main thread after *seconds*, unless the block ended first.

    A timer thread raises SIGINT's handler in the main thread (``_thread.interrupt_main``); the handler is
    this block's own for its length, since an inherited one may ignore SIGINT (a process started in the
    background does) and the simulated signal then does nothing. A SIGINT that is not the timer's (the
    reader's Ctrl-C, Jupyter's "Interrupt") stays a KeyboardInterrupt. Nothing where there are no threads
    (Pyodide: the page stops the worker instead) or off the main thread (signal handlers live there).
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    import _thread

    lock = threading.Lock()
    state = {"done": False, "fired": False, "delivered": False}

    def expire():
        with lock:
            if not state["done"]:
                state["fired"] = True
                _thread.interrupt_main(signal.SIGINT)

    def on_sigint(signum, frame):
        if not state["fired"]:
            raise KeyboardInterrupt
        state["delivered"] = True
        raise GradingTimeout

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        try:
            timer.start()
        except RuntimeError:  # no threads here
            yield
            return
        try:
            yield
        finally:
            with lock:
                state["done"] = True
            timer.cancel()
        if state["fired"] and not state["delivered"]:  # fired as the block ended: take its signal here, not later
            try:
                for _ in range(10_000_000):
                    pass
            except GradingTimeout:
                pass
    finally:
        signal.signal(signal.SIGINT, previous)


def _truncate(text: str, limit: int = OUTPUT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output cut: {len(text) - limit} more characters]\n"


def _result(stage: str, checks: list[dict] | None = None, output: str = "", error: str | None = None) -> dict:
    checks = checks or []
    correct = stage == "checks" and bool(checks) and all(c["correct"] for c in checks)
    error = None if error is None else clip(error, OUTPUT_CHARS)  # the blanks' list of lines too
    return {"correct": correct, "stage": stage, "checks": checks, "output": _truncate(output), "error": error}


def _run_checks(check: Callable[[dict], Iterator[dict]], ns: dict) -> list[dict]:
    results: list[dict] = []
    try:
        for result in check(ns):
            results.append(result)
    except CheckFailed as exc:
        results.append(fail(str(exc)))
    return results


def load_check(name: str, module: str = CHECKS) -> Callable[[dict], Iterator[dict]]:
    """The check generator *name* of *module* (a LookupError names what is missing)."""
    if not name.isidentifier() or name.startswith("_"):
        raise LookupError(f"{name!r} is not the name of a check")
    check = getattr(importlib.import_module(module), name, None)
    if not callable(check):
        raise LookupError(f"{module} has no check named {name!r}")
    return check


def grade(code: str, check: str, timeout: float = 5.0, module: str = CHECKS) -> dict:
    """Grade *code* with the check *check* of *module*; never raises for the reader's mistakes."""
    check_func = load_check(check, module)
    blanks = find_blanks(code)
    if blanks:
        where = ", ".join(map(str, blanks[:-1])) + (" and " if len(blanks) > 1 else "") + str(blanks[-1])
        return _result("blanks", error=f"Fill in the blanks first: line{'s' if len(blanks) > 1 else ''} {where} "
                                       "still hold a ____ (or ...) to replace with your code.")
    try:
        compiled = compile(code, ANSWER_FILE, "exec")
    except SyntaxError as exc:
        return _result("syntax", error=_describe_syntax_error(exc))
    # linecache is where tracebacks find source lines of code that has no file.
    linecache.cache[ANSWER_FILE] = (len(code), None, code.splitlines(True), ANSWER_FILE)

    # A namespace of its own, with its own copy of the builtins: rebinding `print` or `np`
    # there changes nothing for the grader or for the page's cells.
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": dict(builtins.__dict__)}
    out = io.StringIO()
    stage = "run"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), deadline(timeout):
            exec(compiled, namespace)  # noqa: S102 - running the reader's code is the point
            stage = "checks"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # overflow warnings are what some checks provoke
                checks = _run_checks(check_func, namespace)
    except GradingTimeout:
        what = "your code" if stage == "run" else "your function"
        return _result("timeout", output=out.getvalue(),
                       error=f"{what[0].upper()}{what[1:]} ran longer than {timeout:g} s and was stopped — an endless loop?")
    except KeyboardInterrupt:
        return _result("stopped", output=out.getvalue(), error="Stopped.")
    except SystemExit as exc:
        return _result("run", output=out.getvalue(),
                       error=f"SystemExit: {short_repr(exc.code)} (your code called exit(); nothing was checked)")
    except BaseException as exc:  # noqa: BLE001 - any failure of the reader's code is reported
        if stage == "checks":  # a check itself broke: say so instead of blaming the reader
            return _result("checks", output=out.getvalue(), checks=[fail(f"the check itself failed: {exc!r}")])
        return _result("run", output=out.getvalue(), error=_describe_run_error(exc))
    finally:
        linecache.cache.pop(ANSWER_FILE, None)
    return _result("checks", checks=checks, output=out.getvalue())
