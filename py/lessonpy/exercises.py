"""The hidden checks of the attention lesson's exercises ("Practice it yourself").

Each check takes the namespace the reader's code ran in and yields ``ok(message)`` or
``fail(message)`` per thing it checks (see :mod:`lessonpy.grading`). A failure says what
is wrong in the reader's terms and, where a common mistake explains it, which mistake:
the checks compare against the plausible wrong answers, not only against the right one.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .attention import softmax
from .grading import CheckFailed, call, fail, ok, require_function


def _shape(value) -> tuple | None:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def _same(a, b) -> bool:
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------------------- a. the parameter budget

def _count_mistake(got: int, C: int, H: int) -> str:
    """Why a parameter count for (C, H) is wrong, when we recognise the mistake."""
    D = C // H
    full = 4 * C * C
    if got == 3 * C * C:
        return "that is 3·C²: you counted W_Q, W_K and W_V but forgot the output projection W_O (another C·C)"
    if got == 4 * C * D or got == 3 * C * D + C * C or got == 4 * C * C // H:
        return ("that depends on n_head: each head's projections are C×D with D = C / n_head, "
                "but there are n_head of them, so together they are C×C again")
    if got - full in (C, 3 * C, 4 * C):
        return "that counts biases: this block has none (bias=False), only the four weight matrices"
    if got == 4 * C:
        return "that is 4·C: each projection is a C×C matrix, so C² parameters, not C"
    return f"{full:,} was expected (3·C² for the fused W_QKV plus C² for W_O)"


def attention_params(ns: dict) -> Iterator[dict]:
    """Exercise: count the parameters of a bias-free multi-head attention block."""
    func = require_function(ns, "attention_params")
    got = call(func, 768, 12, shown="attention_params(768, 12)")
    if isinstance(got, (bool, np.bool_)) or not isinstance(got, (int, np.integer)):
        if isinstance(got, (float, np.floating)):
            yield fail(f"attention_params(768, 12) returned {got!r}, a float: a parameter count is a whole "
                       "number (use // for division, or no division at all)")
        else:
            yield fail(f"attention_params(768, 12) returned {got!r} ({type(got).__name__}): return an int")
        return
    yield ok("returns a whole number (an int)")
    got = int(got)
    if got != 4 * 768 * 768:
        yield fail(f"attention_params(768, 12) returned {got:,}: {_count_mistake(got, 768, 12)}")
        return
    yield ok("GPT-2 small (n_embd=768, n_head=12): 2,359,296 parameters")
    for C, H in [(768, 1), (768, 4), (64, 4), (512, 8)]:
        got = int(call(func, C, H, shown=f"attention_params({C}, {H})"))
        if got != 4 * C * C:
            hint = ("is the number hard-coded?" if got == 4 * 768 * 768
                    else _count_mistake(got, C, H))
            yield fail(f"attention_params({C}, {H}) returned {got:,} where {4 * C * C:,} was expected: {hint}")
            return
    yield ok("other sizes too: always 4·n_embd², whatever n_head")


# ---------------------------------------------------------------------------- b. the fused QKV split

def _reference_split(qkv: np.ndarray, H: int, order=(0, 1, 2), mistake=None) -> list[np.ndarray]:
    """The right split (and, with *order* / *mistake*, the usual wrong ones) of (B, T, 3C)."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    D = C // H
    parts = [qkv[..., i * C:(i + 1) * C] for i in order]  # q, k, v, each (B, T, C)
    if mistake == "straight":  # reshaping straight to (B, H, T, D) scrambles positions and heads
        return [p.reshape(B, H, T, D) for p in parts]
    if mistake == "interleaved":  # (B, T, D, H): head h gets features h, h + H, h + 2H, ...
        return [p.reshape(B, T, D, H).transpose(0, 3, 1, 2) for p in parts]
    return [p.reshape(B, T, H, D).transpose(0, 2, 1, 3) for p in parts]  # (B, H, T, D)


def _split_values_mistake(got: list, qkv: np.ndarray, H: int) -> str:
    names = "qkv"
    for i, name in enumerate(names):
        for j, other in enumerate(_reference_split(qkv, H)):
            if i != j and _same(np.asarray(got[i], dtype=float), other):
                return (f"{name} holds what should be {names[j]}: the fused projection's output is "
                        "q, k, v side by side along the last axis, in that order")
    def matches(mistake):
        return all(_same(np.asarray(g, dtype=float), r) for g, r in zip(got, _reference_split(qkv, H, mistake=mistake)))
    if matches("straight"):
        return ("right shape but wrong values: did you reshape straight to (B, H, T, D) instead of "
                "(B, T, H, D) then transpose?")
    if matches("interleaved"):
        return ("right shape but wrong values: you reshaped each position's features to (D, n_head), so head h "
                "took every n_head-th feature; reshape to (B, T, n_head, D) instead, so head h holds features "
                "h·D to (h+1)·D − 1, then transpose to (B, H, T, D)")
    return ("right shape but wrong values: split the last axis into q, k, v, then reshape each to "
            "(B, T, H, D) and transpose to (B, H, T, D)")


def _split_shape_mistake(name: str, shape, B: int, T: int, C: int, H: int) -> str:
    D = C // H
    message = f"{name} has shape {shape} where {(B, H, T, D)} was expected"
    if shape == (B, T, H, D):
        return message + ": you split into heads but did not move the head axis: transpose to (B, H, T, D)"
    if shape == (B, T, C):
        return message + f": {name} is still (B, T, C); split it into n_head heads of size C // n_head"
    if shape is not None and len(shape) == 3 and shape[-1] == 3 * C:
        return message + ": q, k and v sit side by side along the last axis: split that one"
    return message


def split_qkv(ns: dict) -> Iterator[dict]:
    """Exercise: split a fused (B, T, 3C) projection into q, k, v of shape (B, H, T, D)."""
    func = require_function(ns, "split_qkv")
    rng = np.random.default_rng(4)
    for B, T, C, H in [(2, 8, 768, 12), (1, 6, 12, 3)]:
        qkv = rng.standard_normal((B, T, 3 * C))
        shown = f"split_qkv(qkv of shape {(B, T, 3 * C)}, n_head={H})"
        try:
            got = call(func, qkv.copy(), H, shown=shown)
        except CheckFailed as exc:
            if "equal division" in str(exc):
                raise CheckFailed(f"{exc}: did you split along the wrong axis? q, k and v sit side by side "
                                  "along the last axis (axis=-1)") from None
            raise
        # Anything `q, k, v = split_qkv(...)` unpacks into three arrays will do, a (3, B, H, T, D) array too.
        unpacks = isinstance(got, (tuple, list)) or (isinstance(got, np.ndarray) and got.ndim >= 1)
        if not unpacks or len(got) != 3:
            if _shape(got) is not None:
                what = f"an array of shape {_shape(got)}"
            elif isinstance(got, (tuple, list)):
                what = f"{type(got).__name__} of length {len(got)}"
            else:
                what = type(got).__name__
            yield fail(f"{shown} should return three arrays (q, k, v); it returned {what}")
            return
        for name, part in zip("qkv", got):
            if _shape(part) != (B, H, T, C // H):
                yield fail(_split_shape_mistake(name, _shape(part), B, T, C, H))
                return
        if not all(_same(np.asarray(g, dtype=float), r) for g, r in zip(got, _reference_split(qkv, H))):
            yield fail(f"{shown}: {_split_values_mistake(got, qkv, H)}")
            return
        yield ok(f"{shown}: q, k and v have shape {(B, H, T, C // H)} and the right values")


# ---------------------------------------------------------------------------- c. scaled attention

#: d_k of the starter's example call, (4, 8) arrays: the size a hard-coded d_k usually has.
STARTER_D_K = 8
#: Scores this large overflow np.exp in float64 (past 709) and in np.longdouble (past about 11,356).
LARGE_SCORE = 1e5


def _fitted_scale(weights: np.ndarray, raw: np.ndarray) -> float | None:
    """The s for which weights == softmax(raw / s) row by row, if some s fits."""
    if np.any(weights <= 0):
        return None
    logw = np.log(weights)
    r = raw - raw.mean(axis=-1, keepdims=True)
    lw = logw - logw.mean(axis=-1, keepdims=True)  # log softmax(raw / s) = raw / s - const per row
    denom = float((r * lw).sum())
    if denom <= 0:
        return None
    s = float((r * r).sum()) / denom
    return s if _same(weights, softmax(raw / s)) else None


def _scaling_mistake(weights: np.ndarray, Q, K, V) -> str:
    """Name the wrong scale the reader's weights correspond to, if any."""
    T, d_k = Q.shape
    raw = Q @ K.T
    for scale, why in [
        (1.0, "you forgot to divide the scores by √d_k"),
        (d_k, "you divided the scores by d_k: divide by √d_k, its square root"),
        (1 / np.sqrt(d_k), "you multiplied the scores by √d_k: divide by it instead, Q @ K.T / np.sqrt(d_k)"),
        (np.sqrt(STARTER_D_K), f"you divided the scores by √{STARTER_D_K}: {STARTER_D_K} is d_k in the starter's "
                               f"example, hard-coded; read it from the arrays, d_k = K.shape[-1] ({d_k} here)"),
        (np.sqrt(T), "you divided by √T, the number of positions: divide by √d_k, the size of each key"),
        (np.sqrt(V.shape[-1]), "you divided by the square root of V's width: use d_k, the size of Q's and K's rows"),
    ]:
        if _same(weights, softmax(raw / scale)):
            return why
    if _same(weights, softmax(raw.T / np.sqrt(d_k))):
        return "your weights are transposed: row i should hold query i against every key (Q @ K.T)"
    scale = _fitted_scale(weights, raw)
    if scale is not None:
        return (f"your scores are divided by {scale:.4g}, where √d_k = √{d_k} = {np.sqrt(d_k):g} was expected: "
                "d_k is the size of each key, K.shape[-1]")
    return "the weights differ from softmax(Q Kᵀ / √d_k) taken along each row"


def _rows_mistake(weights: np.ndarray, Q, K) -> str:
    """Why the rows of the reader's weights do not sum to 1."""
    d_k = Q.shape[1]
    if np.allclose(weights.sum(axis=0), 1.0):
        return "your weights' rows do not sum to 1: its columns do — take the softmax along each row (axis=-1), over the keys"
    sums = weights.sum(axis=-1)
    c = float(sums.mean())
    if c > 0 and np.allclose(sums, c) and _same(weights / c, softmax(Q @ K.T)):
        named = {1 / np.sqrt(d_k): " (1/√d_k)", 1 / d_k: " (1/d_k)", np.sqrt(d_k): " (√d_k)"}
        which = next((text for value, text in named.items() if np.isclose(c, value)), "")
        return (f"you scaled after the softmax: each row of your weights sums to {c:.4g}{which} instead of 1. "
                "Divide the scores before the softmax: softmax(Q @ K.T / np.sqrt(d_k))")
    return "your weights' rows do not sum to 1"


def _with_row_offsets(Q: np.ndarray, K: np.ndarray, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Q, K whose scaled scores are the usual ones (over d_k - 1 features) plus offsets[i] on row i."""
    Q, K = Q.copy(), K.copy()
    Q[:, -1] = np.asarray(offsets, dtype=float) * np.sqrt(Q.shape[1])
    K[:, -1] = 1.0
    return Q, K


def _large_scores_mistake(func, Q, K, V) -> str | None:
    """None if the reader's softmax survives scores near ±LARGE_SCORE, else what goes wrong.

    Two probes tell the two usual mistakes apart. Every row near +LARGE_SCORE: a softmax
    without the max subtracted overflows (inf / inf), whatever float it uses. Rows far apart:
    subtracting the max of the whole array leaves the lower rows at exp(...) = 0 (0 / 0).
    """
    d_k = Q.shape[1]
    T = Q.shape[0]
    probes = [("high", np.full(T, LARGE_SCORE)),
              ("spread", np.linspace(LARGE_SCORE, -LARGE_SCORE, T))]
    for name, offsets in probes:
        Qp, Kp = _with_row_offsets(Q, K, offsets)
        with np.errstate(all="ignore"):
            got = call(func, Qp.copy(), Kp.copy(), V.copy(), shown=f"attention(Q, K, V) with scores near {LARGE_SCORE:,.0f}")
            weights = np.asarray(got[1], dtype=float)
        if not np.all(np.isfinite(weights)):
            if name == "high":
                return (f"overflow: with scores near {LARGE_SCORE:,.0f} np.exp returns inf (float64 overflows past 709, "
                        "np.longdouble past about 11,356) and inf / inf is nan — subtract each row's max before "
                        "np.exp (the softmax does not change)")
            return ("underflow: you subtracted the largest score of the whole array (z.max()), not each row's own: "
                    "in a row whose scores all lie far below it np.exp gives 0 everywhere, and 0 / 0 is nan. "
                    "Subtract each row's max: z - z.max(axis=-1, keepdims=True)")
        if not _same(weights, softmax(Qp @ Kp.T / np.sqrt(d_k))):
            return f"with scores near {LARGE_SCORE:,.0f} the weights are finite but wrong"
    return None


def attention(ns: dict) -> Iterator[dict]:
    """Exercise: scaled dot-product attention with a numerically stable softmax."""
    func = require_function(ns, "attention")
    rng = np.random.default_rng(7)
    T, d_k, d_v = 5, 16, 3  # T ≠ d_k ≠ d_v ≠ STARTER_D_K, so every wrong scale gives different weights
    Q, K, V = rng.standard_normal((T, d_k)), rng.standard_normal((T, d_k)), rng.standard_normal((T, d_v))
    shown = "attention(Q, K, V)"
    got = call(func, Q.copy(), K.copy(), V.copy(), shown=shown)
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise CheckFailed(f"{shown} should return two arrays, (out, weights); it returned "
                          f"{type(got).__name__}" + (f" of length {len(got)}" if isinstance(got, (tuple, list)) else ""))
    if _shape(got[0]) == (T, T) and _shape(got[1]) == (T, d_v):
        raise CheckFailed(f"{shown} returned (weights, out): the first array has the weights' shape {(T, T)} and "
                          f"the second out's {(T, d_v)}. Return them the other way round: return out, weights")
    out, weights = (np.asarray(x, dtype=float) if _shape(x) is not None else x for x in got)
    if _shape(weights) != (T, T):
        raise CheckFailed(f"weights have shape {_shape(weights)} where {(T, T)} was expected "
                          f"(Q is {Q.shape}, K is {K.shape}: one row per query, one column per key)")
    if _shape(out) != (T, d_v):
        raise CheckFailed(f"out has shape {_shape(out)} where {(T, d_v)} was expected (weights @ V)")
    yield ok(f"shapes: out {(T, d_v)}, weights {(T, T)}")

    if not np.allclose(weights.sum(axis=-1), 1.0):
        yield fail(_rows_mistake(weights, Q, K))
        return
    yield ok("each row of weights sums to 1")

    expected = softmax(Q @ K.T / np.sqrt(d_k))
    if not _same(weights, expected):
        yield fail(_scaling_mistake(weights, Q, K, V))
        return
    yield ok("the scores are scaled by √d_k")
    if _same(out, expected @ V):
        yield ok("out is the weighted sum of the values, weights @ V")
    else:
        yield fail("out should be weights @ V: each output row blends the rows of V")

    # Only a right softmax is worth probing with large scores: otherwise that message would be noise.
    mistake = _large_scores_mistake(func, Q, K, V)
    if mistake:
        yield fail(mistake)
    else:
        yield ok(f"stable with scores near ±{LARGE_SCORE:,.0f} (no overflow or underflow in np.exp)")
