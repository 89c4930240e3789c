"""``show_attention``: hand what the reader computed to the page's attention view.

A lesson cell computes some of x, Q, K, V, scores, weights, out and calls
``show_attention(Q=Q, K=K, V=V)`` (or any subset that determines a picture).
This module fills in what follows from what was given, checks everything the
way a patient teacher would, and emits one ``"arrays"`` event through
:mod:`lessonpy.runtime.bridge`. Python computes, JavaScript draws: nothing here touches
the page directly and nothing is printed.

On a problem it emits an ``"arrays"`` event carrying ``"error"`` (so the view
named by ``target`` can show the message in place) and raises :class:`ShowError`
with the same one-line message (so the cell's output shows it too).
"""

from __future__ import annotations

import itertools
import math
from typing import Callable

import numpy as np

from ..runtime import bridge
from .attention import row_entropy, softmax
from ..runtime.limits import MAX_D, MAX_LABEL, MAX_T, clip  # shared with the page (static/js/shared/limits.js)

__all__ = ["ShowError", "show_attention", "build_payload", "send", "FIGURES", "MAX_T", "MAX_D"]

#: How a lesson's own view is drawn outside the page, by the view's name: ``draw(payload)`` makes a matplotlib
#: figure (:mod:`lessonpy.maths.notebook` calls it). The lesson's module registers it, as the rooms below a lesson
#: may not import it (tests/unit/test_layers.py); the views of this room are drawn by the notebook itself.
FIGURES: dict[str, Callable[[dict], object]] = {}

#: How far a row of weights may stray from summing to 1 (float32 and rounding).
ROW_SUM_TOL = 1e-3
#: Below this a weight counts as negative rather than rounding noise (and, above it, as weight on a masked key).
NEG_TOL = 1e-6
#: How far softmax(scores) may stray from the weights for the weights to count as that softmax: float32
#: storage and another order of summing stay far below it; another scale or a temperature does not.
MATCH_TOL = 1e-4
# float32 can't hold more than ~3.4e38; anything larger would arrive as inf.
_F32_MAX = float(np.finfo(np.float32).max)

# the order arrays are checked in, and their expected layout for messages
_LAYOUT = {
    "x": "(T, C)", "Q": "(T, d_k)", "K": "(T, d_k)", "V": "(T, d_v)",
    "scores": "(T, T)", "weights": "(T, T)", "out": "(T, d_v)",
}


class ShowError(ValueError):
    """What the reader passed to :func:`show_attention` can't be drawn; the message says why."""

    def __init__(self, message):
        # within MESSAGE_CHARS: a message may quote what the reader passed (their tokens, a label)
        super().__init__(clip(str(message)))

    def _render_traceback_(self):
        # IPython's hook (the downloaded notebook): one line, as the page shows it, not a
        # traceback through lessonpy's own code
        return [f"{type(self).__name__}: {self}"]


def show_attention(*, x=None, Q=None, K=None, V=None, scores=None, weights=None,
                   out=None, tokens=None, causal=False, title=None, target=None):
    """Draw an attention computation on the page; returns None.

    All arguments are keyword-only and optional; pass what you computed:
      x (T, C), Q (T, d_k), K (T, d_k), V (T, d_v),
      scores (T, T), weights (T, T), out (T, d_v)
      tokens:  T labels (default "t0", "t1", ...)
      causal:  True for a causal head: each query sees only itself and earlier
               keys. The scores drawn get -inf above the diagonal (yours, or
               those made from Q and K), your weights must be 0 there, and the
               view draws those cells grey. Scores you pass with -inf in them
               are drawn masked without it.
      title:   a caption for the view
      target:  which view on the page to draw in (None: the cell's own)
    Arrays may be NumPy arrays, nested lists, or anything np.asarray accepts; a
    single batch (1, T, ...) is squeezed to (T, ...).

    What is missing is derived, and listed in the payload's "derived":
      scores  = Q @ K.T / sqrt(d_k)   from Q and K (if your weights were made
                without the 1/sqrt(d_k), the scores match them instead)
                                      (and if your weights were made
                with the causal mask, the scores drawn are masked too)
      weights = softmax(scores)       row by row
      out     = weights @ V           when V is given
    What you pass is never replaced, only checked (causal=True masks the
    scores you pass, as the model does before its softmax).
    """
    send("attention", lambda: build_payload(x=x, Q=Q, K=K, V=V, scores=scores, weights=weights, out=out,
                                            tokens=tokens, causal=causal, title=title, target=target),
         title, target)


def send(view, build, title, target):
    """Emit the payload *build()* makes as one ``"arrays"`` event for *view*; or, when it raises ShowError, an
    event carrying that message as ``"error"`` (the view shows it in place), and raise it again (the cell shows it).
    Every show_* function sends this way."""
    try:
        payload = build()
    except ShowError as err:
        bridge.emit("arrays", {"view": view, "title": caption(title), "target": caption(target), "error": str(err)})
        raise
    bridge.emit("arrays", payload)


# -----------------------------------------------------------------------------
# building the payload: check inputs, derive the rest, collect stats


def build_payload(*, tokens, title, target, causal=False, **given):
    """Return the event payload for the given arrays, or raise ShowError."""
    if title is not None and not isinstance(title, str):
        raise ShowError(f"title: expected a string, got {type(title).__name__}")
    if target is not None and not isinstance(target, str):
        raise ShowError(f"target: expected a string naming a view, got {type(target).__name__}")
    if not isinstance(causal, (bool, np.bool_)):
        raise ShowError(f"causal: expected True or False, got {type(causal).__name__}")

    arrays = {name: _as_matrix(name, a) for name, a in given.items() if a is not None}
    if not arrays:
        raise ShowError("nothing to show: pass weights=, scores=, or Q= and K=")
    T = _check_shapes(arrays)
    for name, a in arrays.items():
        _check_finite(name, a)

    derived = []
    Q, K, V = arrays.get("Q"), arrays.get("K"), arrays.get("V")
    scale = None  # what the scores were divided by, when we made them
    asked = bool(causal)  # the reader said causal=True: then their weights must respect the mask too
    if "scores" in arrays:
        arrays["scores"], causal = _masking(arrays["scores"], arrays.get("weights"), asked)
        _check_finite("scores", arrays["scores"])  # the mask may have emptied a row the reader's -inf left one key
    elif Q is not None and K is not None:
        arrays["scores"], scale, causal = _derive_scores(Q, K, arrays.get("weights"), asked)
        derived.append("scores")
    if "weights" in arrays:
        _check_weights(arrays["weights"], _future(T) if asked else None)
    elif "scores" in arrays:
        arrays["weights"] = softmax(arrays["scores"], axis=-1)  # (T, T)
        derived.append("weights")
    else:
        have = " and ".join(sorted(arrays, key=list(_LAYOUT).index))
        need = "K" if Q is not None else "Q" if K is not None else "Q and K"
        raise ShowError(f"can't draw attention from {have} alone: also pass {need}, "
                        "or pass scores= or weights=")
    if "out" not in arrays and V is not None:
        arrays["out"] = arrays["weights"] @ V  # (T, T) @ (T, d_v) -> (T, d_v)
        derived.append("out")
    for name in derived:  # large Q and K can make scores too large to draw
        drawn = arrays[name]
        if name == "scores" and causal:  # the mask's -inf are ours: check the scores it left
            drawn = np.where(_future(T), 0.0, drawn)
        _check_finite(name, drawn, derived=True)

    labels = check_tokens(tokens, T)
    stats = _stats(arrays, T, scale, bool(causal))
    return {
        "view": "attention",
        "title": caption(title),
        "target": caption(target),
        "tokens": labels,
        "arrays": {name: _to_float32(name, a) for name, a in arrays.items()},
        "derived": derived,
        # the view greys the keys after each query in every picture of a causal head, weights too
        "causal": bool(causal),
        "stats": stats,
        "qk_divisor": _qk_divisor(arrays, scale),  # the step-through writes each score as q·k / this
    }


def as_numbers(name, a, bool_hint=""):
    """One argument as a float64 array of real numbers (any shape, not empty), or a ShowError saying
    why not; *bool_hint* follows the message for True/False values. lessonpy.maths.lookup checks with it too."""
    if isinstance(a, (str, bytes)):
        raise ShowError(f"{name}: expected numbers, got a {type(a).__name__}")
    try:
        arr = np.asarray(a)
    except Exception as err:  # ragged lists, tensors that need .detach(), ...
        if "inhomogeneous" in str(err):
            raise ShowError(f"{name}: rows of different lengths; every row needs "
                            "the same number of entries") from None
        raise ShowError(f"{name}: could not turn it into an array ({_one_line(err)})") from None
    if arr.dtype == object:
        raise ShowError(f"{name}: could not turn it into an array of numbers "
                        "(ragged rows or non-numbers inside?)")
    if arr.dtype.kind == "b":
        raise ShowError(f"{name}: got True/False values; pass numbers{bool_hint}")
    if arr.dtype.kind == "c":
        raise ShowError(f"{name}: got complex numbers; attention uses real numbers")
    if arr.dtype.kind not in "iuf":
        raise ShowError(f"{name}: expected numbers, got an array of dtype {arr.dtype}")
    if arr.size == 0:
        raise ShowError(f"{name}: is empty (shape {arr.shape})")
    return arr.astype(np.float64)


def _as_matrix(name, a):
    """Turn one argument into a 2-D float64 array, or explain why it can't be."""
    arr = as_numbers(name, a, bool_hint=" (a mask belongs in the scores)")
    layout = _LAYOUT[name]
    if arr.ndim < 2:
        raise ShowError(f"{name}: expected a 2-D {layout} array, got shape {arr.shape}")
    if arr.ndim > 2:
        lead = arr.shape[:-2]
        if all(n == 1 for n in lead):  # a batch of one (or one head of one batch)
            arr = arr.reshape(arr.shape[-2:])
        elif arr.ndim == 3:
            raise ShowError(f"{name}: got a batch of {arr.shape[0]} (shape {arr.shape}); "
                            f"pass one sequence, e.g. {name}[0]")
        elif arr.ndim == 4:
            raise ShowError(f"{name}: got shape {arr.shape}, which looks like (B, H, T, ...); "
                            f"pass one head of one sequence, e.g. {name}[0, 0]")
        else:
            raise ShowError(f"{name}: expected a 2-D {layout} array, got {arr.ndim}-D shape {arr.shape}")
    return arr.astype(np.float64)


def _check_shapes(arrays):
    """Check sizes agree with each other and the caps; return T."""
    # every array's first axis runs over positions; scores and weights are square
    for name in ("scores", "weights"):
        if name in arrays and arrays[name].shape[0] != arrays[name].shape[1]:
            raise ShowError(f"{name}: expected a square (T, T) array (every position "
                            f"against every position), got shape {arrays[name].shape}")
    first = next(iter(arrays))
    T = arrays[first].shape[0]
    for name, a in arrays.items():
        if a.shape[0] != T:
            raise ShowError(f"{name}: has {a.shape[0]} positions but {first} has {T}: "
                            f"every array needs the same T (shapes {arrays[first].shape} "
                            f"and {a.shape})")
    if T > MAX_T:
        raise ShowError(f"T={T} positions is more than this view draws ({MAX_T}); "
                        f"slice it first, e.g. x[:{MAX_T}]")
    for name in ("x", "Q", "K", "V", "out"):
        if name in arrays and arrays[name].shape[1] > MAX_D:
            raise ShowError(f"{name}: {arrays[name].shape[1]} features is more than this "
                            f"view draws ({MAX_D})")
    if "Q" in arrays and "K" in arrays and arrays["Q"].shape[1] != arrays["K"].shape[1]:
        raise ShowError(f"Q has d_k={arrays['Q'].shape[1]} but K has d_k="
                        f"{arrays['K'].shape[1]}: they must match to take dot products")
    if "V" in arrays and "out" in arrays and arrays["V"].shape[1] != arrays["out"].shape[1]:
        raise ShowError(f"out has {arrays['out'].shape[1]} features but V has "
                        f"{arrays['V'].shape[1]}: out = weights @ V keeps V's width")
    return T


def _check_finite(name, a, derived=False):
    """Reject NaN and inf; scores may hold -inf where a mask hides a key."""
    label = f"{name} (computed from your arrays)" if derived else name
    bad = np.isnan(a)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        hint = (" (did np.exp overflow? subtract each row's max before exponentiating)"
                if name in ("weights", "out") and not derived else "")
        raise ShowError(f"{label}: contains NaN, first at row {i}, column {j}{hint}")
    if name == "scores" and not derived:
        bad = np.isposinf(a)
        if not bad.any() and np.isneginf(a).all(axis=-1).any():
            row = int(np.argmax(np.isneginf(a).all(axis=-1)))
            raise ShowError(f"scores: row {row} is entirely -inf, so that query "
                            "has no key to attend to")
    else:
        bad = np.isinf(a)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ShowError(f"{label}: contains {a[i, j]} at row {i}, column {j}; "
                        "pass finite numbers")
    finite = a[np.isfinite(a)]
    if finite.size and np.abs(finite).max() > _F32_MAX:
        raise ShowError(f"{label}: holds values as large as {np.abs(finite).max():.3g}, "
                        "too large to draw (float32 stops at 3.4e38)")


def _check_weights(w, future=None):
    """Attention weights are probabilities: non-negative, each row summing to 1; with the causal
    mask (*future*: True where a key comes after its query) nothing on a key after its query."""
    if (w < -NEG_TOL).any():
        i, j = np.argwhere(w < -NEG_TOL)[0]
        raise ShowError(f"weights: entry ({i}, {j}) is {w[i, j]:.3g}; attention weights "
                        "can't be negative (did you apply softmax?)")
    rows = w.sum(axis=-1)
    off = np.abs(rows - 1.0) > ROW_SUM_TOL
    if off.any():
        i = int(np.argmax(off))
        if np.all(np.abs(w.sum(axis=0) - 1.0) <= ROW_SUM_TOL):
            raise ShowError(f"weights: columns sum to 1 but row {i} sums to {rows[i]:.3g}; "
                            "normalise over each query's row (axis=-1), not axis=0")
        raise ShowError(f"weights: row {i} sums to {rows[i]:.3g}, not 1 "
                        "(did you forget to normalise?)")
    if future is not None and (w[future] > NEG_TOL).any():
        i, j = np.argwhere(future & (w > NEG_TOL))[0]
        raise ShowError(f"weights: causal=True, but query {i} puts {w[i, j]:.3g} on key {j}, which comes "
                        "after it; put -inf in the scores above the diagonal before the softmax")


def _future(T):
    """The causal mask: True where key j comes after query i (j > i), above the diagonal."""
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def _matches(scores, weights):
    """Whether *weights* are the row softmax of *scores* (masked entries, -inf, giving 0)."""
    return bool(np.allclose(softmax(scores, axis=-1), weights, atol=MATCH_TOL))


def _masking(scores, weights, causal):
    """The scores to draw and whether they carry the causal mask.

    With *causal* the mask goes in (-inf above the diagonal, as the model puts it before its
    softmax). Scores whose -inf are exactly those cells carry it already. Otherwise unmasked
    scores get the mask only when the reader's *weights* show it:
    their softmax with the mask reproduces the weights and without it does not. Weights alone that
    are 0 above the diagonal are not taken as a mask: that needs causal=True.
    """
    future = _future(len(scores))
    masked = np.where(future, -np.inf, scores)
    if causal:
        return masked, True
    if np.array_equal(np.isneginf(scores), future) and len(scores) > 1:  # the reader masked them: the causal mask
        return scores, True
    if (weights is not None and not np.isneginf(scores).any() and len(scores) > 1
            and not _matches(scores, weights) and _matches(masked, weights)):
        return masked, True
    return scores, False


def _derive_scores(Q, K, weights, causal):
    """scores from Q and K, the factor they were divided by, and whether they carry the causal mask.

    The usual 1/sqrt(d_k). But if the reader gave their own weights, draw the
    scores those weights came from: try both conventions (and the mask, see
    :func:`_masking`) and keep the one whose softmax reproduces the weights (the
    scaled one when neither does).
    """
    raw = Q @ K.T  # (T, d_k) @ (d_k, T) -> (T, T)
    d_k = Q.shape[1]
    candidates = [math.sqrt(d_k), 1.0]
    if weights is not None:
        for s in candidates:
            scores, masked = _masking(raw / s, weights, causal)
            if _matches(scores, weights):
                return scores, s, masked
    scores, masked = _masking(raw / candidates[0], weights, causal)
    return scores, candidates[0], masked


def _qk_divisor(arrays, scale):
    """What Q @ K.T was divided by to give the scores drawn (sqrt(d_k) or 1), or None without Q and K or when
    the scores are not Q @ K.T over either (the reader's own, with a temperature, say): the page then does
    not write a score as q·k. A mask's -inf replaces a score whatever q·k is, so only the others count."""
    Q, K, scores = arrays.get("Q"), arrays.get("K"), arrays.get("scores")
    if Q is None or K is None or scores is None:
        return None
    if scale is not None:
        return float(scale)
    kept = np.isfinite(scores)
    raw = (Q @ K.T)[kept]
    for divisor in (math.sqrt(Q.shape[1]), 1.0):
        if np.allclose(raw / divisor, scores[kept], rtol=1e-4, atol=1e-6):
            return divisor
    return None


def check_tokens(tokens, T):
    """Return T string labels: the reader's, or t0, t1, ..."""
    if tokens is None:
        return [f"t{i}" for i in range(T)]
    if isinstance(tokens, (str, bytes)):
        raise ShowError("tokens: pass a list of labels, one per position, "
                        f"e.g. {clip(tokens).split()!r}" if isinstance(tokens, str)
                        else "tokens: pass a list of labels, one per position")
    try:
        items = list(itertools.islice(iter(tokens), T + 1))  # T + 1 at most: an endless iterator ends here
    except TypeError:
        raise ShowError(f"tokens: pass a list of labels, got {type(tokens).__name__}") from None
    except Exception as err:  # a generator of the reader's that fails part-way
        raise ShowError(f"tokens: reading the labels raised {type(err).__name__}: {_one_line(err)}") from None
    if len(items) > T and not hasattr(tokens, "__len__"):
        raise ShowError(f"tokens: got more than T={T} labels; pass one label per position")
    if len(items) != T:
        count = len(tokens) if hasattr(tokens, "__len__") else len(items)
        raise ShowError(f"tokens: got {count} labels for T={T} positions; "
                        "pass one label per position")
    labels = []
    for i, item in enumerate(items):
        try:
            labels.append(str(item))
        except Exception as err:  # the reader's own class with a broken __str__
            raise ShowError(f"tokens: label {i} cannot be turned into text: str() raised "
                            f"{type(err).__name__}: {_one_line(err)}") from None
    return [t if len(t) <= MAX_LABEL else t[:MAX_LABEL - 1] + "…" for t in labels]


def _stats(arrays, T, scale, causal):
    """Numbers the view prints beside the picture; plain Python types only."""
    w = arrays["weights"]
    ent = row_entropy(w)  # (T,) in nats
    # the keys each query may see: not those a mask hid (-inf scores, or the future of a causal head)
    hidden = np.isneginf(arrays["scores"]) if "scores" in arrays else np.zeros((T, T), dtype=bool)
    if causal:
        hidden |= _future(T)
    visible = T - hidden.sum(axis=-1)  # (T,), at least 1: a row with no key to see was refused
    stats = {
        "T": T,
        "log_T": math.log(T),
        "row_entropy": [float(e) for e in ent],
        "mean_entropy": float(ent.mean()),
        # the most a row's entropy can be: spread evenly over the keys it may see, log(visible) nats
        # (log T without a mask; log(i + 1) for query i of a causal head)
        "even_entropy": float(np.log(visible).mean()),
        "max_weight": [float(m) for m in w.max(axis=-1)],
        "argmax": [int(j) for j in w.argmax(axis=-1)],
        "causal": causal,
        "masked": int(hidden.sum()),
    }
    if "Q" in arrays:
        stats["d_k"] = int(arrays["Q"].shape[1])
    elif "K" in arrays:
        stats["d_k"] = int(arrays["K"].shape[1])
    if "V" in arrays:
        stats["d_v"] = int(arrays["V"].shape[1])
    if scale is not None:
        stats["scores_divided_by"] = float(scale)
    if "scores" in arrays:
        s = arrays["scores"]
        # the weights drawn beside the scores should be their softmax; when they are not (made from
        # other scores: another scale, a temperature, no mask) the view says so in words, with how far
        from_scores = softmax(s, axis=-1)
        stats["weights_gap"] = float(np.abs(from_scores - w).max())
        stats["weights_match_scores"] = bool(np.allclose(from_scores, w, atol=MATCH_TOL))  # as _matches, one softmax
        finite = s[np.isfinite(s)]
        stats["score_min"] = float(finite.min())
        stats["score_max"] = float(finite.max())
        stats["score_std"] = float(finite.std())
    return stats


# -----------------------------------------------------------------------------
# small helpers


def _to_float32(name, a):
    """The form the worker transfers: C-contiguous float32."""
    return np.ascontiguousarray(a, dtype=np.float32)


def _one_line(err):
    """First line of an exception's message, trimmed for a one-line error."""
    text = clip(str(err)).strip().splitlines()  # clipped first: splitlines would copy a huge message
    return (text[0] if text else type(err).__name__)[:120]


def caption(v):
    """A title or target for the page: a string within MESSAGE_CHARS; anything else (refused already) None."""
    return clip(v) if isinstance(v, str) else None
