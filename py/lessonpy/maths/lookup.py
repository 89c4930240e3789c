"""``show_lookup``: the lesson's soft dictionary lookup as a picture on the page.

A cell holds keys (N, 2), a query (2,) and values (N,) and calls
``show_lookup(keys=keys, query=query, values=values, target="soft-lookup")``. This module checks
them and computes the lookup at every temperature of a fixed log-spaced grid:

    scores  = keys @ query                 (N,)
    weights = softmax(scores / τ)          (n, N): one row per temperature τ
    answer  = weights @ values             (n,)
    size    = ‖J‖ of the softmax at weights, J = diag(p) − p pᵀ   (n,)

and emits one ``"arrays"`` event with ``view: "lookup"``. The page's temperature slider steps
along that grid (static/js/page/components/lookupview.js), so moving it never waits for Python:
Python computes, JavaScript draws. A low τ sharpens the weights toward the best-matching key (a
hard, dict-like lookup, whose Jacobian is ~0: no gradient reaches the scores); a high τ flattens
them toward the plain average of the values.

On a problem it emits the event with ``"error"`` (the view shows it in place) and raises
:class:`~lessonpy.maths.show.ShowError` with the same one-line message, as ``show_attention`` does.
"""

from __future__ import annotations

import math

import numpy as np

from .attention import softmax
from ..runtime.limits import WIDGET_LIMITS
from .show import ShowError, as_numbers, caption, send

__all__ = ["show_lookup", "build_lookup_payload", "temperature_grid", "jacobian_norm", "EXAMPLE"]

#: How many keys a picture draws, and the temperatures its slider spans (lessonpy.runtime.limits, shared).
KEYS, TEMPERATURES = WIDGET_LIMITS["lookup-view"]["keys"], WIDGET_LIMITS["lookup-view"]["temperature"]
#: Grid points per doubling of τ: fine enough that the slider looks continuous, and every power of
#: two (the lesson's spreads 1, 4, 16, 64 are τ = 1, 1/4, 1/16, 1/64) lies exactly on the grid.
STEPS_PER_DOUBLING = 4
#: The lesson's example (the ``lookup`` cell): the picture the page shows before Python runs.
EXAMPLE = {"keys": [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]], "values": [10.0, 20.0, 30.0], "query": [1.0, 0.2]}

_F32_MAX = float(np.finfo(np.float32).max)  # what the page's float32 arrays can hold


def temperature_grid() -> np.ndarray:
    """The temperatures the page's slider steps through, (n,), lowest first: powers of 2 in quarter steps."""
    lo, hi = (math.log2(t) for t in TEMPERATURES)
    n = round((hi - lo) * STEPS_PER_DOUBLING) + 1
    return 2.0 ** np.linspace(lo, hi, n)  # exact powers of two where the exponent is whole


def jacobian_norm(p: np.ndarray) -> np.ndarray:
    """The Frobenius norm of the softmax's Jacobian J_ij = p_i (δ_ij − p_j) at weights p (..., N) -> (...).

    The lesson's "size of J", with respect to the softmax's input (the scores divided by τ): 0 when one
    weight is 1, so a hard lookup passes no gradient back to the scores."""
    N = p.shape[-1]
    J = p[..., :, None] * (np.eye(N) - p[..., None, :])  # (..., N, N)
    return np.linalg.norm(J, axis=(-2, -1))


def show_lookup(*, keys=None, query=None, values=None, title=None, target=None):
    """Draw a soft dictionary lookup on the page; returns None.

      keys:    (N, 2), one 2-D point per key
      query:   (2,), the point to look up
      values:  (N,), one number per key
      title:   a caption for the picture
      target:  the id of the lookup picture on the page (None: the one after this cell)
    Arrays may be NumPy arrays, lists, or anything np.asarray accepts.
    """
    send("lookup", lambda: build_lookup_payload(keys=keys, query=query, values=values, title=title, target=target),
         title, target)


def build_lookup_payload(*, keys, query, values, title=None, target=None) -> dict:
    """The event payload for one lookup at every temperature of the grid, or raise ShowError."""
    if title is not None and not isinstance(title, str):
        raise ShowError(f"title: expected a string, got {type(title).__name__}")
    if target is not None and not isinstance(target, str):
        raise ShowError(f"target: expected a string naming a picture, got {type(target).__name__}")
    missing = [name for name, a in (("keys", keys), ("query", query), ("values", values)) if a is None]
    if missing:
        raise ShowError(f"nothing to look up without {' and '.join(missing)}: "
                        "pass keys= (N, 2), query= (2,) and values= (N,)")
    keys, query, values = _check_inputs(keys, query, values)

    temperatures = temperature_grid()  # (n,)
    scores = keys @ query  # (N, 2) @ (2,) -> (N,)
    _check_drawable("keys @ query (computed from your arrays)", scores)
    weights = softmax(scores[None, :] / temperatures[:, None], axis=-1)  # (n, N): a row per τ
    answers = weights @ values  # (n, N) @ (N,) -> (n,)
    best = np.flatnonzero(scores == scores.max())  # a tie shares the hard lookup's weight
    stats = {
        "N": int(len(values)),
        "steps_per_doubling": STEPS_PER_DOUBLING,
        "best": [int(i) for i in best],
        "hard_answer": float(values[best].mean()),  # the answer as τ -> 0
        "plain_average": float(values.mean()),  # the answer as τ -> infinity
    }
    f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731 - what the worker transfers
    return {
        "view": "lookup", "title": caption(title), "target": caption(target),
        "arrays": {"keys": f32(keys), "query": f32(query), "values": f32(values), "scores": f32(scores),
                   "temperatures": f32(temperatures), "weights": f32(weights), "answers": f32(answers),
                   "jacobian_norm": f32(jacobian_norm(weights))},
        "stats": stats,
    }


def _check_inputs(keys, query, values):
    """keys (N, 2), query (2,), values (N,) as float64 arrays, or a ShowError naming the first problem."""
    keys, query, values = as_numbers("keys", keys), as_numbers("query", query), as_numbers("values", values)
    if keys.ndim != 2 or keys.shape[1] != 2:
        hint = "; one key is [[x, y]]" if keys.shape == (2,) else ""
        raise ShowError(f"keys: expected an (N, 2) array, one 2-D point per row, got shape {keys.shape}{hint}")
    N = keys.shape[0]
    if N > KEYS[1]:
        raise ShowError(f"keys: {N} keys is more than this picture draws ({KEYS[1]}); "
                        f"pass the first {KEYS[1]}, e.g. keys[:{KEYS[1]}]")
    if query.shape != (2,):
        hint = " (query.ravel() makes it one)" if query.size == 2 else ""
        raise ShowError(f"query: expected one 2-D point, shape (2,), got shape {query.shape}{hint}")
    if values.ndim != 1:
        hint = " (values.ravel() makes it one)" if values.size == N else ""
        raise ShowError(f"values: expected one number per key, shape ({N},), got shape {values.shape}{hint}")
    if len(values) != N:
        raise ShowError(f"values: got {len(values)} values for {N} keys; pass one value per key")
    for name, a in (("keys", keys), ("query", query), ("values", values)):
        _check_drawable(name, a)
    return keys, query, values


def _check_drawable(name, a):
    """Finite, and small enough for the page's float32 arrays."""
    bad = ~np.isfinite(a)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"row {at[0]}, column {at[1]}" if len(at) == 2 else f"entry {at[0]}"
        raise ShowError(f"{name}: contains {a[at]} at {where}; pass finite numbers")
    if np.abs(a).max() > _F32_MAX:
        raise ShowError(f"{name}: holds values as large as {np.abs(a).max():.3g}, "
                        "too large to draw (float32 stops at 3.4e38)")
