"""How far a right answer may lie from the float64 reference: one rule for every exercise's check.

A reader may compute in float16, float32 or float64 (or return float64 of float16 work), so an answer is held
to the rounding error of the float it was computed in, derived from bounds on that error, not picked: a right
answer in any float passes, and the wrong answers the checks name are off by far more than any of them.
"""

from __future__ import annotations

import numpy as np

#: The coarsest float a right answer is judged by when its values say nothing coarser: an answer may compute
#: in float32 and return float64 (x.astype(float)), so no answer is held to more than float32's precision.
COARSEST_FLOAT = np.dtype(np.float32)
#: Units in the last place one np.exp may be off: numpy's SIMD exp is not correctly rounded,
#: only accurate to a few ulp.
EXP_ULPS = 4
#: Roundings in one scaled score besides its d_k multiply-adds: Q and K rounded to the reader's
#: float, √d_k and the division by it (or d_k ** -0.25 on each side), and the shift (z − max, or
#: the addition in a logsumexp).
SCORE_ROUNDINGS = 6


def unit_roundoff(dtype) -> float:
    """u: one rounding to *dtype* changes a value by at most this fraction of it."""
    return float(np.finfo(dtype).eps) / 2


def gamma(n: int, u: float) -> float:
    """γ_n: the relative error of n roundings in a row (Higham, Accuracy and Stability of
    Numerical Algorithms, §3.1); a sum of n products is within γ_n·Σ|terms| of its exact value,
    whatever the order of its additions."""
    return n * u / (1 - n * u)


def _held_in_float16(value: np.ndarray) -> bool:
    """Every value of *value* is a float16 number: it was computed in float16 and widened afterwards
    (np.vstack onto a float64 cache, .astype(float)); no float64 result of wider work is one by chance."""
    with np.errstate(all="ignore"):
        return value.size > 0 and bool(np.all(value.astype(np.float16) == value))


def float_of(*values) -> np.dtype:
    """The float the reader computed *values* in: the least precise among their float dtypes, COARSEST_FLOAT,
    and float16 when every value of one of them is a float16 number (a float16 result keeps its precision, not
    its dtype, once something wider is mixed in)."""
    floats = [COARSEST_FLOAT]
    for value in values:
        if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f":
            floats.append(value.dtype)
            if _held_in_float16(np.asarray(value)):
                floats.append(np.dtype(np.float16))
    return max(floats, key=lambda dtype: np.finfo(dtype).eps)


def within(got: np.ndarray, want: np.ndarray, bound) -> bool:
    """*got* has *want*'s shape and lies within *bound* of it everywhere (a nan never does)."""
    return got.shape == want.shape and bool(np.all(np.abs(got - want) <= bound))


def copied(got, want: np.ndarray) -> bool:
    """*got* holds *want*'s values, each rounded at most once to the float it was computed in (below the
    float's smallest normal number, a rounding moves a value by up to half its smallest subnormal)."""
    dtype = float_of(got)
    spacing = float(np.finfo(dtype).smallest_subnormal) / 2
    return within(np.asarray(got, dtype=float), want, unit_roundoff(dtype) * np.abs(want) + spacing)


def product_within(got, a: np.ndarray, b: np.ndarray, dtype) -> bool:
    """*got* is the matrix product a @ b computed in *dtype* from a and b rounded to it: within
    γ_(n+2)·|a| @ |b| (n multiply-adds), the float64 reference's own error added."""
    n = a.shape[-1] + 2
    rtol = gamma(n, unit_roundoff(dtype)) + gamma(n, unit_roundoff(np.float64))
    return within(np.asarray(got, dtype=float), a @ b, rtol * (np.abs(a) @ np.abs(b)) + float(np.finfo(dtype).tiny))


class Tolerance:
    """How far a right attention answer computed in float *dtype* can lie from the float64 reference.

    Each scaled score is within γ_n·max(|Q| @ |K|ᵀ) / √d_k of its exact value (n = d_k + SCORE_ROUNDINGS, plus
    2·*projected* when Q, K and V are themselves products of *projected* multiply-adds each, as a decode step's
    q = x @ W_q is: then Q and K are the sizes |x| @ |W|, and V's own roundings join the output's). Storing a score near 1e5 in float32 alone moves it by up to ±0.004 (half its spacing
    there), and its d_k + SCORE_ROUNDINGS roundings at that size by ±0.13 at worst. A change δ_j in the scores
    changes weight j by the factor exp(δ_j − Σ_k w_k·δ_k), at most exp(2·max|δ|), so at 1e5 a right float32
    weight may be off by up to 30 % (typically under 1 %), at ordinary scores by about 1e-5. Then come np.exp
    (EXP_ULPS ulp), the sum of a row's T terms and the division. Scores past *dtype*'s largest number (float16's
    is 65,504) cannot have been computed in it: they were computed in COARSEST_FLOAT at least, and only the
    weights rounded to *dtype*. The float64 reference errs too, so its bound is added. Every wrong answer the
    checks catch is nan, uniform or off by far more.
    """

    def __init__(self, Q: np.ndarray, K: np.ndarray, dtype: np.dtype, projected: int = 0):
        T, d_k = Q.shape
        largest = float((np.abs(Q) @ np.abs(K).T).max()) / np.sqrt(d_k)
        score_float = dtype if largest < float(np.finfo(dtype).max) else COARSEST_FLOAT
        self.weights_rtol = self.product_rtol = 0.0
        for scores_u, u in ((unit_roundoff(score_float), unit_roundoff(dtype)),
                            (unit_roundoff(np.float64), unit_roundoff(np.float64))):
            score_error = gamma(d_k + SCORE_ROUNDINGS + 2 * projected, scores_u) * largest
            weights_rtol = float(np.expm1(2 * score_error)) + gamma(2 * EXP_ULPS + T + 1, u)
            self.weights_rtol += weights_rtol
            # weights @ V: V rounded (after its own projection's multiply-adds), T multiply-adds
            self.product_rtol += weights_rtol + gamma(T + 1 + projected, u)
        self.atol = float(np.finfo(dtype).tiny)  # np.exp(...) below it underflows to 0 (or a subnormal)

    def weights(self, got: np.ndarray, want: np.ndarray) -> bool:
        return within(got, want, self.weights_rtol * np.abs(want) + self.atol)

    def sums_to_one(self, weights: np.ndarray) -> bool:
        return self.weights(weights.sum(axis=-1), np.ones(len(weights)))

    def product(self, got: np.ndarray, a: np.ndarray, b: np.ndarray, b_size: np.ndarray | None = None) -> bool:
        """*got* is a @ b, one of them the weights (known to weights_rtol), the other V (whose size is |b|, or
        *b_size* when V is itself a product, |x| @ |W_v|)."""
        size = np.abs(b) if b_size is None else b_size
        return within(got, a @ b, self.product_rtol * (np.abs(a) @ size) + self.atol)
