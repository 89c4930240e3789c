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



def _causal_reference(Q: np.ndarray, K: np.ndarray, scale: bool = True) -> np.ndarray:
    """The causal weights of Q and K (float64): -inf above the diagonal, then the row softmax."""
    T = len(Q)
    scores = Q @ K.T / (np.sqrt(K.shape[-1]) if scale else 1.0)
    return softmax(np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores))


def causal_attention(ns: dict) -> Iterator[dict]:
    """Exercise: attention with the causal mask, -inf above the diagonal before the softmax."""
    func = require_function(ns, "causal_attention")
    rng = np.random.default_rng(11)
    T, d_k, d_v = 5, 6, 3  # all different, so a wrong axis or product shows as a wrong shape
    Q, K, V = rng.standard_normal((T, d_k)), rng.standard_normal((T, d_k)), rng.standard_normal((T, d_v))
    shown = "causal_attention(Q, K, V)"
    with np.errstate(all="ignore"):  # the reader's NaNs are reported below, not warned about
        out, weights, _ = returned(call(func, Q.copy(), K.copy(), V.copy(), shown=shown), shown, T, d_k, d_v)
    yield ok(f"shapes: out {(T, d_v)}, weights {(T, T)}")
    if np.isnan(weights[0]).all():
        yield fail("row 0 of the weights is NaN: the diagonal is masked too, so query 0 has no key left "
                   "(its softmax computes -inf - (-inf)). Mask only the keys after each query: "
                   "np.triu(np.ones((T, T), dtype=bool), k=1)")
        return
    if not np.isfinite(weights).all():
        yield fail("some weights are NaN or infinite: put -inf in the scores (not in the weights) and take the "
                   "max-shifted softmax of every row")
        return
    above, below = np.triu(weights, k=1), np.tril(weights, k=-1)
    if np.any(above != 0):
        if np.all(below == 0):
            yield fail("the past is masked and the future shown: query i may read keys 0 … i. Mask the keys "
                       "after it, np.triu(np.ones((T, T), dtype=bool), k=1), not the ones before it")
        else:
            yield fail(f"weights above the diagonal should be exactly 0 (a query never reads a later key); the "
                       f"largest is {np.abs(above).max():.3g}")
        return
    yield ok("every weight on a later key is exactly 0")
    expected = _causal_reference(Q, K)
    if not np.allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-6):
        if np.allclose(weights, np.tril(softmax(Q @ K.T / np.sqrt(d_k))), atol=1e-6):
            yield fail("the rows do not sum to 1: the future was zeroed after the softmax, which takes part of each "
                       "row's weight with it. Put -inf in the scores before the softmax")
        else:
            yield fail(f"each row of the weights should sum to 1; the sums are {np.round(weights.sum(axis=1), 3)}")
        return
    yield ok("each row sums to 1 over the keys it may read")
    if not np.allclose(weights, expected, rtol=1e-5, atol=1e-7):
        if np.allclose(weights, _causal_reference(Q, K, scale=False), rtol=1e-5, atol=1e-7):
            yield fail("the weights are those of unscaled scores: divide Q @ K.T by √d_k before masking")
        else:
            yield fail(f"the weights differ from the masked softmax of Q Kᵀ/√d_k by up to "
                       f"{np.abs(weights - expected).max():.3g}")
        return
    yield ok("the weights are the masked softmax of Q Kᵀ/√d_k")
    if np.allclose(out, weights @ V, rtol=1e-5, atol=1e-7):
        yield ok("out = weights @ V: each row blends only its past and itself")
    else:
        yield fail("out should be weights @ V, shape (T, d_v)")


def _decode_returned(got, shown: str, rows: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise CheckFailed(f"{shown} should return three things, (out_t, K_cache, V_cache); it returned "
                          f"{short_repr(got)}")
    out_t, K_cache, V_cache = (np.asarray(a, dtype=float) for a in got)
    for name, value, shape in (("K_cache", K_cache, (rows, d)), ("V_cache", V_cache, (rows, d)),
                               ("out_t", out_t, (d,))):
        if value.shape != shape:
            grow = " (the cache grows by one row per token)" if name != "out_t" else ""
            raise CheckFailed(f"after {shown}, {name} has shape {value.shape}; expected {shape}{grow}")
    return out_t, K_cache, V_cache


def decode_step(ns: dict) -> Iterator[dict]:
    """Exercise: one step of generation with a KV cache, which must give the rows of the masked pass."""
    func = require_function(ns, "decode_step")
    rng = np.random.default_rng(12)
    T, C, d = 5, 7, 3
    x = rng.standard_normal((T, C))
    W_q, W_k, W_v = (rng.standard_normal((C, d)) / np.sqrt(C) for _ in range(3))
    K_all, V_all = x @ W_k, x @ W_v
    expected = _causal_reference(x @ W_q, K_all) @ V_all
    K_cache = V_cache = np.zeros((0, d))
    for t in range(T):
        shown = f"decode_step(x[{t}], W_q, W_k, W_v, K_cache, V_cache) with {t} cached rows"
        try:
            got = call(func, x[t].copy(), W_q, W_k, W_v, K_cache.copy(), V_cache.copy(), shown=shown)
        except CheckFailed as exc:
            if t == 0 and "zero-size array" in str(exc):
                raise CheckFailed(f"{exc}: you read the cache before appending, and at the first token it is "
                                  "empty. Append the token's key and value first: its query reads its own key "
                                  "too") from None
            raise
        out_t, K_cache, V_cache = _decode_returned(got, shown, t + 1, d)
        if not (np.allclose(K_cache, K_all[:t + 1]) and np.allclose(V_cache, V_all[:t + 1])):
            yield fail(f"after {shown}, the cache should hold each token's key x_t @ W_k and value x_t @ W_v, the "
                       "newest as the last row, the earlier rows unchanged")
            return
        if not np.allclose(out_t, expected[t], rtol=1e-5, atol=1e-7):
            q = x[t] @ W_q
            if t > 0 and np.allclose(out_t, softmax(K_all[:t] @ q / np.sqrt(d)) @ V_all[:t]):
                yield fail("out_t skips the token itself: you read the cache before appending. Append the key and "
                           "value first; the newest query reads its own key too (the diagonal)")
            elif np.allclose(out_t, softmax(K_all[:t + 1] @ q) @ V_all[:t + 1]):
                yield fail("the scores are not scaled: divide K_cache @ q by √d (d = the size of a key)")
            else:
                yield fail(f"{shown}: out_t differs from row {t} of the masked pass by up to "
                           f"{np.abs(out_t - expected[t]).max():.3g}")
            return
    yield ok(f"the cache grows by one key and one value per token: {(T, d)} after {T} tokens")
    yield ok(f"token by token, the outputs equal the {T} rows of one masked pass")
