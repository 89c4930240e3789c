"""The hidden checks of the causal-mask lesson's exercises (Lesson 5, "Practice it yourself"): attention
with the causal mask, and one step of generation with a KV cache. Written as Lesson 4's are
(:mod:`lessonpy.course.attention.exercises` says how a check reads and words a mistake).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ...maths.answers import returned
from ...maths.attention import softmax
from ...maths.grading import CheckFailed, call, fail, ok, require_function, short_repr
from ...maths.tolerance import Tolerance, float_of, product_within



def _causal_reference(Q: np.ndarray, K: np.ndarray, scale: bool = True) -> np.ndarray:
    """The causal weights of Q and K (float64): -inf above the diagonal, then the row softmax."""
    T = len(Q)
    scores = Q @ K.T / (np.sqrt(K.shape[-1]) if scale else 1.0)
    return softmax(np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores))


# What a causal mask can get wrong, each as what to change.
NAN_MASK = ("every row of the weights is NaN: a mask made by multiplying, np.triu(np.ones((T, T)), k=1) * -np.inf, "
            "holds 0 × (−∞) = NaN below the diagonal, not 0, and a NaN score makes its whole row NaN. Choose "
            "instead of multiplying: np.where(future, -np.inf, scores)")
DIAGONAL = ("row 0 of the weights is NaN: the diagonal is masked too, so query 0 has no key left "
            "(its softmax computes -inf - (-inf)). Mask only the keys after each query: "
            "np.triu(np.ones((T, T), dtype=bool), k=1)")
TRIL = ("the last row of the weights is NaN and the earlier rows read later keys: np.tril marks each query's own "
        "key and the ones before it, so using it as the mask hides the past and the present and shows the future, "
        "and the last query has no key left. The keys to mask are after the query: "
        "np.triu(np.ones((T, T), dtype=bool), k=1) (or keep where np.tril is True)")
PAST = ("the past is masked and the future shown: query i may read keys 0 … i. Mask the keys "
        "after it, np.triu(np.ones((T, T), dtype=bool), k=1), not the ones before it")


def _nan_rows_mistake(weights: np.ndarray) -> str:
    """Why some rows of the weights are NaN, from which rows they are."""
    nan_rows = np.isnan(weights).any(axis=-1)
    if nan_rows.all():
        return NAN_MASK
    if nan_rows[0]:
        return DIAGONAL
    if nan_rows[-1] and np.any(np.triu(np.nan_to_num(weights), k=1)[:-1] != 0):
        return TRIL
    return ("some weights are NaN or infinite: put -inf in the scores (not in the weights) and take the "
            "max-shifted softmax of every row")


def _row_sums(weights: np.ndarray) -> str:
    """The row that sums furthest from 1, with enough digits to see it (rounded, every sum reads 1.)."""
    off = weights.sum(axis=-1) - 1
    row = int(np.argmax(np.abs(off)))
    return f"row {row} sums to 1 {'+' if off[row] > 0 else '−'} {abs(off[row]):.2g}"


def causal_attention(ns: dict) -> Iterator[dict]:
    """Exercise: attention with the causal mask, -inf above the diagonal before the softmax."""
    func = require_function(ns, "causal_attention")
    rng = np.random.default_rng(11)
    T, d_k, d_v = 5, 6, 3  # all different, so a wrong axis or product shows as a wrong shape
    Q, K, V = rng.standard_normal((T, d_k)), rng.standard_normal((T, d_k)), rng.standard_normal((T, d_v))
    shown = "causal_attention(Q, K, V)"
    with np.errstate(all="ignore"):  # the reader's NaNs are reported below, not warned about
        out, weights, dtype = returned(call(func, Q.copy(), K.copy(), V.copy(), shown=shown), shown, T, d_k, d_v)
    yield ok(f"shapes: out {(T, d_v)}, weights {(T, T)}")
    if not np.isfinite(weights).all():
        yield fail(_nan_rows_mistake(weights))
        return
    above, below = np.triu(weights, k=1), np.tril(weights, k=-1)
    if np.any(above != 0):
        if np.all(below == 0):
            yield fail(PAST)
        else:
            yield fail(f"weights above the diagonal should be exactly 0 (a query never reads a later key); the "
                       f"largest is {np.abs(above).max():.3g}")
        return
    yield ok("every weight on a later key is exactly 0")
    tol = Tolerance(Q, K, dtype)
    if not tol.sums_to_one(weights):
        if tol.weights(weights, np.tril(softmax(Q @ K.T / np.sqrt(d_k)))):
            yield fail("the rows do not sum to 1: the future was zeroed after the softmax, which takes part of each "
                       "row's weight with it. Put -inf in the scores before the softmax")
        else:
            yield fail(f"each row of the weights should sum to 1 over the keys it may read; {_row_sums(weights)}")
        return
    yield ok("each row sums to 1 over the keys it may read")
    expected = _causal_reference(Q, K)
    if not tol.weights(weights, expected):
        if tol.weights(weights, _causal_reference(Q, K, scale=False)):
            yield fail("the weights are those of unscaled scores: divide Q @ K.T by √d_k before masking")
        else:
            yield fail(f"the weights differ from the masked softmax of Q Kᵀ/√d_k by up to "
                       f"{np.abs(weights - expected).max():.3g}")
        return
    yield ok("the weights are the masked softmax of Q Kᵀ/√d_k")
    if tol.product(out, expected, V):
        yield ok("out = weights @ V: each row blends only its past and itself")
    else:
        yield fail("out should be weights @ V, shape (T, d_v)")


def _decode_returned(got, shown: str, rows: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.dtype]:
    """(out_t, K_cache, V_cache) as returned (the caches go back into the next call as they are), and the float
    the reader computed them in; a CheckFailed naming a wrong count or shape."""
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise CheckFailed(f"{shown} should return three things, (out_t, K_cache, V_cache); it returned "
                          f"{short_repr(got)}")
    out_t, K_cache, V_cache = (np.asarray(a) for a in got)
    for name, value, shape in (("K_cache", K_cache, (rows, d)), ("V_cache", V_cache, (rows, d)),
                               ("out_t", out_t, (d,))):
        if value.shape != shape:
            grow = " (the cache grows by one row per token)" if name != "out_t" else ""
            raise CheckFailed(f"after {shown}, {name} has shape {value.shape}; expected {shape}{grow}")
    return out_t, K_cache, V_cache, float_of(*got)


#: What out_t is when the one row of scores was masked as if the newest query were position 0.
MASKED_ROW = ("out_t is the first token's value: you masked the single row of scores as if this query were "
              "position 0 (np.triu on a (1, t + 1) row hides every key after the first). The cache holds the past "
              "and this token, nothing later, so one decode step needs no mask: every cached key may be read")
MASKED_ALL = ("out_t is NaN: every key of the single row of scores was masked. The cache holds the past and this "
              "token, nothing later, so one decode step needs no mask: every cached key may be read")


def _decode_mistake(out_t: np.ndarray, t: int, q: np.ndarray, K_all: np.ndarray, V_all: np.ndarray,
                    tol: Tolerance, V_size: np.ndarray) -> str | None:
    """The mistake an out_t that is not row t of the masked pass shows, when we recognise it."""
    d = len(q)
    if np.isnan(out_t).all():
        return MASKED_ALL
    if t > 0 and tol.product(out_t[None], np.ones((1, 1)), V_all[:1], V_size[:1]):
        return MASKED_ROW
    if t > 0 and tol.product(out_t[None], softmax(K_all[:t] @ q / np.sqrt(d))[None], V_all[:t], V_size[:t]):
        return ("out_t skips the token itself: you read the cache before appending. Append the key and "
                "value first; the newest query reads its own key too (the diagonal)")
    if tol.product(out_t[None], softmax(K_all[:t + 1] @ q)[None], V_all[:t + 1], V_size[:t + 1]):
        return "the scores are not scaled: divide K_cache @ q by √d (d = the size of a key)"
    return None


def decode_step(ns: dict) -> Iterator[dict]:
    """Exercise: one step of generation with a KV cache, which must give the rows of the masked pass."""
    func = require_function(ns, "decode_step")
    rng = np.random.default_rng(12)
    T, C, d = 5, 7, 3
    x = rng.standard_normal((T, C))
    W_q, W_k, W_v = (rng.standard_normal((C, d)) / np.sqrt(C) for _ in range(3))
    Q_all, K_all, V_all = x @ W_q, x @ W_k, x @ W_v
    # The sizes |x| @ |W|: how far a right projection computed in a narrower float can be off
    Q_size, K_size, V_size = (np.abs(x) @ np.abs(W) for W in (W_q, W_k, W_v))
    expected = _causal_reference(Q_all, K_all) @ V_all
    K_cache = V_cache = np.zeros((0, d))
    for t in range(T):
        shown = f"decode_step(x[{t}], W_q, W_k, W_v, K_cache, V_cache) with {t} cached rows"
        try:
            with np.errstate(all="ignore"):
                got = call(func, x[t].copy(), W_q, W_k, W_v, K_cache.copy(), V_cache.copy(), shown=shown)
        except CheckFailed as exc:
            if t == 0 and "zero-size array" in str(exc):
                raise CheckFailed(f"{exc}: you read the cache before appending, and at the first token it is "
                                  "empty. Append the token's key and value first: its query reads its own key "
                                  "too") from None
            raise
        out_t, K_cache, V_cache, dtype = _decode_returned(got, shown, t + 1, d)
        if not (product_within(K_cache, x[:t + 1], W_k, dtype) and product_within(V_cache, x[:t + 1], W_v, dtype)):
            yield fail(f"after {shown}, the cache should hold each token's key x_t @ W_k and value x_t @ W_v, the "
                       "newest as the last row, the earlier rows unchanged")
            return
        tol = Tolerance(Q_size[t:t + 1], K_size[:t + 1], dtype, projected=C)
        row = _causal_reference(Q_all, K_all)[t:t + 1]
        if not tol.product(np.asarray(out_t, dtype=float)[None], row[:, :t + 1], V_all[:t + 1], V_size[:t + 1]):
            mistake = _decode_mistake(np.asarray(out_t, dtype=float), t, Q_all[t], K_all, V_all, tol, V_size)
            yield fail(mistake or f"{shown}: out_t differs from row {t} of the masked pass by up to "
                                   f"{np.nanmax(np.abs(out_t - expected[t])):.3g}")
            return
    yield ok(f"the cache grows by one key and one value per token: {(T, d)} after {T} tokens")
    yield ok(f"token by token, the outputs equal the {T} rows of one masked pass")
