"""The worker's side of the page <-> Python bridge (imported only inside Pyodide).

worker.js imports this module once Python is up and calls :func:`start` with a JS
function ``post(type, payload, transfer)``. From then on:

* :func:`run` executes one cell and returns a plain JS object describing the result;
* :func:`call` calls a lessonpy function for a widget or a grader and returns its value, or what it
  raised as data (its traceback, formatted here);
* ``lessonpy.runtime.bridge.emit`` events (figures included) and call results are converted here: numpy arrays become
  ``{shape, dtype, data}`` with ``data`` a flat typed array whose buffer is transferred,
  so a 512×512 weights matrix crosses as one memcpy, never as nested JS arrays.
"""

from __future__ import annotations

import builtins
import importlib
from typing import Any

import numpy as np
from js import Object  # type: ignore[import-not-found]  # only exists in Pyodide
from pyodide.ffi import to_js  # type: ignore[import-not-found]

from . import bridge
from .figures import close_figures, collect_figures, quiet_show
from .runner import NAMESPACE, STOPPED, CellResult, ReaderCells, defined_names, format_exception, no_input, run_cell

_post = None


def start(post) -> None:
    """Remember how to reach the page and route bridge events through it."""
    global _post
    _post = post
    bridge.install_sink(_send_event)
    builtins.input = no_input  # there is no stdin in the page: say so instead of "OSError: [Errno 29]"
    quiet_show()


def _convert(value: Any, transfer: list) -> Any:
    """Turn a payload into JS-ready values, collecting buffers to transfer."""
    if isinstance(value, np.ndarray):
        flat = np.ascontiguousarray(value, dtype=np.float32).ravel()
        typed = to_js(flat)  # a 1-D contiguous float32 array becomes a Float32Array copy
        transfer.append(typed.buffer)
        return {"shape": list(value.shape), "dtype": "float32", "data": typed}
    if isinstance(value, dict):
        return {str(k): _convert(v, transfer) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_convert(v, transfer) for v in value]
    if isinstance(value, bytes):  # a PNG: a Uint8Array copy, transferred
        typed = to_js(value)
        transfer.append(typed.buffer)
        return typed
    if isinstance(value, np.generic):
        return value.item()
    return value


def _to_page(value: Any) -> tuple[Any, Any]:
    """*value* as a JS object for postMessage, and the list of buffers to transfer with it."""
    transfer: list = []
    converted = _convert(value, transfer)
    return to_js(converted, dict_converter=Object.fromEntries), to_js(transfer)


def _send_event(event_type: str, payload: dict[str, Any]) -> None:
    _post(event_type, *_to_page(payload))


#: The page's cells, for the functions the page calls that run the reader's code (see :func:`call`).
READER = ReaderCells(NAMESPACE)


def _takes_reader(function: Any) -> bool:
    code = getattr(function, "__code__", None)
    return code is not None and "reader" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def call(module: str, func: str, kwargs) -> Any:
    """Call ``module.func(**kwargs)`` for the page (widgets, graders); return [True, value, transfer], or
    [False, traceback, []] when it raised (a Stop's KeyboardInterrupt too).

    The value crosses like an event's payload: numpy arrays as flat typed arrays, transferred,
    so a widget's arrays and numbers come back together as the one reply to its request.
    What it raised crosses as text, formatted here, and worker.js throws it: an exception raised across
    into JavaScript is formatted by Pyodide 0.27.7 on its way, and that now and then failed ("Error
    occurred while formatting traceback", the exception it held having an empty type name), so the
    reader saw that instead of their forward pass's error (README, Speed: *The first figure*).
    A function with a ``reader`` parameter (the live panel's, which runs the reader's own forward) gets the
    reader's cells (:data:`READER`): how the page's state reaches code that imports no runtime.
    """
    try:
        kwargs = kwargs.to_py() if hasattr(kwargs, "to_py") else dict(kwargs or {})
        function = getattr(importlib.import_module(module), func)
        if _takes_reader(function):
            kwargs["reader"] = READER
        value = function(**kwargs)
        page_value, transfer = _to_page(value)
    except BaseException as exc:  # noqa: BLE001 - every failure is the page's to show; KeyboardInterrupt is a Stop
        return to_js([False, format_exception(exc), []])  # within the limits, its message clipped first
    return to_js([True, page_value, transfer])


def _name_hint(missing: str | None, cells: dict[str, str], cell_id: str) -> str | None:
    """Say which other cell defines a name the reader's cell used before it existed."""
    if not missing:
        return None
    owners = [cid for cid, code in cells.items() if cid != cell_id and missing in defined_names(code)]
    if not owners:
        return None
    return f"`{missing}` is defined in cell \"{owners[0]}\": run that cell first."


def _post_figures() -> None:
    for png in collect_figures():
        bridge.emit("figure", {"format": "png", "data": png})


async def run(code: str, cell_id: str, other_cells=None):
    """Run one cell; return {ok, value, error, errorName, hint} as a JS object."""
    result = await run_cell(code, cell_id, NAMESPACE, finish=_post_figures, cleanup=close_figures)
    return _reply(result, dict(other_cells) if other_cells is not None else {}, cell_id)


def stopped():
    """The reply to a run stopped before its code started (the worker saw the Stop first)."""
    return _reply(STOPPED, {}, "")


def _reply(result: CellResult, cells: dict[str, str], cell_id: str):
    reply = {
        "ok": result.ok,
        "value": result.value_repr,
        "error": result.error,
        "errorName": result.error_name,
        "hint": _name_hint(result.missing_name, cells, cell_id),
    }
    return to_js(reply, dict_converter=Object.fromEntries)
