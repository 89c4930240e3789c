"""The hidden checks of Lesson 6's exercises ("Practice it yourself"): LayerNorm's forward pass, with its epsilon
inside the square root, and a pre-LN block's forward pass. Written as Lessons 4 and 5's are
(:mod:`lessonpy.course.attention.exercises` says how a check reads and words a mistake): each plausible wrong
answer is recomputed here and named when the reader's matches it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from ...maths.grading import CheckFailed, call, fail, ok, require_function, short_repr
from ...maths.tolerance import float_of, gamma, unit_roundoff, within

EPS = 1e-5  # the exercise's epsilon: GPT-2's and torch.nn.LayerNorm's default

def _returned(got, shown: str, shape: tuple, keeps: str) -> tuple[np.ndarray, np.dtype]:
    """The reader's result as float64 and the float they computed it in; a CheckFailed when it is not an array
    of *shape* (*keeps*: the sentence saying why that shape)."""
    if not isinstance(got, (np.ndarray, np.generic, list, tuple)):
        raise CheckFailed(f"{shown} returned {short_repr(got)}; it should return an array: {keeps}, {shape}")
    dtype = float_of(got)
    got = np.asarray(got, dtype=float)
    if got.shape != shape:
        raise CheckFailed(f"{shown} returned shape {got.shape}; {keeps}, {shape}")
    return got, dtype


# ---------------------------------------------------------------------------- a. LayerNorm


def _layer_norm_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x (5, 16): ordinary rows, a row with a large mean, a row of tiny spread (std 1e-3, where the epsilon's
    place changes the answer threefold) and a constant row (variance 0: without an epsilon, 0 / 0); a gain and
    a bias with no 1s or 0s, so that leaving either out shows."""
    rng = np.random.default_rng(6)
    C = 16
    x = rng.standard_normal((5, C))
    x[1] = 4.0 + 2.0 * x[1]
    x[2] = 1e-3 * x[2]
    x[3] = 0.75
    gain, bias = rng.uniform(0.5, 2.0, C), rng.uniform(-1.0, 1.0, C)
    return x, gain, bias


def _norm(x, gain, bias, mistake=None):
    """LayerNorm of the rows of x in float64, or with one named *mistake*."""
    axis = 0 if mistake == "axis" else -1
    mu = x.mean(axis, keepdims=True)
    if mistake == "rms":
        mu = 0.0
    var = ((x - mu) ** 2).mean(axis, keepdims=True)
    if mistake == "ddof":
        var = var * x.shape[axis] / (x.shape[axis] - 1)
    if mistake == "outside":
        s = np.sqrt(var) + EPS
    elif mistake == "no-eps":
        s = np.sqrt(var)
    else:
        s = np.sqrt(var + EPS)
    y = (x - mu) / s
    if mistake == "swapped":
        return y * bias + gain
    if mistake == "plain":
        return y
    return y * gain + bias


LAYER_NORM_MISTAKES = {
    "outside": "the epsilon is added outside the square root, (x − μ) / (√σ² + ε): for a row of tiny spread (std "
               "0.001 here) that divides by about 0.001 instead of √(σ² + ε) ≈ 0.0033. It goes inside, "
               "np.sqrt(var + eps), as torch.nn.LayerNorm puts it",
    "ddof": "the variance divides by C − 1 (ddof=1, the sample variance); LayerNorm's divides by C, the mean of "
            "the squared deviations: np.var(x, axis=-1) or ((x - mu) ** 2).mean(-1)",
    "axis": "the mean and variance are taken over each column (axis 0), across positions; LayerNorm normalises "
            "each position's vector alone: axis=-1, keepdims=True",
    "rms": "the mean is not taken away: that is RMSNorm (x / √(mean(x²) + ε)), not LayerNorm. Subtract each "
           "row's mean first, and use it in the variance too",
    "swapped": "gain and bias are swapped: the gain multiplies the normalised row, the bias is added, "
               "x̂ · gain + bias",
    "plain": "the gain and the bias are not applied: return x̂ · gain + bias, so the model can learn each "
             "channel's scale and offset back",
}


def _bound(x: np.ndarray, dtype, gain=1.0, bias=0.0) -> np.ndarray:
    """How far a right LayerNorm output computed in *dtype* may lie from the float64 one: the mean and the
    variance are sums of C terms, so each output carries about 2C + 10 roundings of |x| / s in size."""
    C = x.shape[-1]
    mu = x.mean(-1, keepdims=True)
    s = np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + EPS)
    size = np.abs(gain) * (np.abs(x) + np.abs(mu)) / s + np.abs(bias)
    return (gamma(2 * C + 10, unit_roundoff(dtype)) + gamma(2 * C + 10, unit_roundoff(np.float64))) * size \
        + float(np.finfo(dtype).smallest_subnormal)


def layer_norm(ns: dict) -> Iterator[dict]:
    """Exercise: LayerNorm's forward pass, the epsilon inside the square root."""
    func = require_function(ns, "layer_norm")
    x, gain, bias = _layer_norm_inputs()
    shown = "layer_norm(x, gain, bias)"
    with np.errstate(all="ignore"):  # the reader's NaNs are named below, not warned about
        got, dtype = _returned(call(func, x.copy(), gain.copy(), bias.copy(), shown=shown), shown, x.shape,
                               "LayerNorm keeps x's shape")
        yield ok(f"returns x's shape, {x.shape}")
        want = _norm(x, gain, bias)
        bound = _bound(x, dtype, gain, bias)
        if not np.isfinite(got).all():
            if np.isnan(got[3]).all() and np.isfinite(np.delete(got, 3, axis=0)).all():
                yield fail("the constant row (variance 0) gives NaN: with no epsilon its normalisation is "
                           "0 / 0. Add eps to the variance inside the square root, np.sqrt(var + eps)")
            else:
                yield fail("some outputs are NaN or infinite; x̂ = (x − μ) / √(σ² + ε) is finite for every row")
            return
        if not within(got, want, bound):
            for mistake, words in LAYER_NORM_MISTAKES.items():
                if within(got, _norm(x, gain, bias, mistake), bound):
                    yield fail(words)
                    return
            yield fail(f"the output differs from (x − μ) / √(σ² + ε) · gain + bias by up to "
                       f"{np.abs(got - want).max():.3g}")
            return
        yield ok("each row to mean 0 and variance 1, then times the gain, plus the bias")
        yield ok("the row of tiny spread and the constant row too: the epsilon is inside the square root")
        x3 = np.random.default_rng(7).standard_normal((2, 3, x.shape[-1]))
        shown3 = "layer_norm(x, gain, bias) on x of shape (2, 3, 16)"
        got3 = np.asarray(call(func, x3.copy(), gain.copy(), bias.copy(), shown=shown3), dtype=float)
        want3 = _norm(x3, gain, bias)
        if within(got3, want3, _bound(x3, dtype, gain, bias)):
            yield ok("any leading shape: (B, T, C) works as (T, C) does")
        else:
            yield fail(f"{shown3} gave something else: take the statistics over the last axis with "
                       "keepdims=True (axis=-1), so any leading shape works")


# ---------------------------------------------------------------------------- b. a pre-LN block


def _parts(T: int, C: int) -> dict[str, Callable]:
    """A block's four parts as plain functions of (T, C) arrays, each visibly different: attention mixes the
    positions (a fixed (T, T) mixing), the MLP works on each position alone, the two norms have different
    gains. Seeded: the reference and the reader's call see the same ones."""
    rng = np.random.default_rng(16)
    mix = rng.uniform(0.0, 1.0, (T, T))
    mix /= mix.sum(1, keepdims=True)
    A, B1, B2 = rng.normal(0, 0.4, (C, C)), rng.normal(0, 0.4, (C, 4 * C)), rng.normal(0, 0.3, (4 * C, C))
    g1, g2 = rng.uniform(0.5, 1.5, C), rng.uniform(1.5, 2.5, C)

    def norm(gain):
        def ln(h):
            h = np.asarray(h, dtype=float)
            mu = h.mean(-1, keepdims=True)
            return (h - mu) / np.sqrt(((h - mu) ** 2).mean(-1, keepdims=True) + EPS) * gain
        return ln

    return {"attn": lambda h: np.tanh(mix @ np.asarray(h, dtype=float) @ A),
            "mlp": lambda h: np.tanh(np.asarray(h, dtype=float) @ B1) @ B2,
            "ln_1": norm(g1), "ln_2": norm(g2)}


def _block(x, p, mistake=None):
    """The pre-LN block of the parts *p*, or one named *mistake*."""
    attn, mlp, ln_1, ln_2 = p["attn"], p["mlp"], p["ln_1"], p["ln_2"]
    if mistake == "post":
        x = ln_1(x + attn(x))
        return ln_2(x + mlp(x))
    if mistake == "parallel":
        return x + attn(ln_1(x)) + mlp(ln_2(x))
    if mistake == "stream":
        x = ln_1(x)
        x = x + attn(x)
        x = ln_2(x)
        return x + mlp(x)
    if mistake == "no-residual":
        return mlp(ln_2(attn(ln_1(x))))
    if mistake == "swapped":
        x = x + attn(ln_2(x))
        return x + mlp(ln_1(x))
    if mistake == "mlp-replaces":
        x = x + attn(ln_1(x))
        return mlp(ln_2(x))
    if mistake == "attn-replaces":
        x = attn(ln_1(x))
        return x + mlp(ln_2(x))
    x = x + attn(ln_1(x))
    return x + mlp(ln_2(x))


BLOCK_MISTAKES = {
    "post": "that is post-LN, the original Transformer's arrangement: each norm is applied to the stream after "
            "the addition. Pre-LN normalises only the copy a sublayer reads: x = x + attn(ln_1(x))",
    "parallel": "the MLP reads x as it came in, not the stream with attention's write added: a parallel block "
                "(GPT-J's). In GPT-2's block the MLP reads ln_2(x) after x = x + attn(ln_1(x))",
    "stream": "the stream itself is normalised: x = ln_1(x) replaces x before the addition, so the residual "
              "path goes through every norm. Keep x and add to it: x = x + attn(ln_1(x))",
    "no-residual": "no residual: each sublayer's output replaces the stream instead of being added to it. "
                   "x = x + attn(ln_1(x)), then x + mlp(ln_2(x))",
    "swapped": "ln_1 and ln_2 are swapped: ln_1 goes before attention, ln_2 before the MLP (each has its own "
               "gain)",
    "mlp-replaces": "the MLP's write replaces the stream instead of being added: return x + mlp(ln_2(x))",
    "attn-replaces": "attention's write replaces the stream instead of being added: x = x + attn(ln_1(x))",
}


def pre_ln_block(ns: dict) -> Iterator[dict]:
    """Exercise: a pre-LN block's forward pass from its four parts."""
    func = require_function(ns, "pre_ln_block")
    T, C = 5, 8
    x = np.random.default_rng(26).standard_normal((T, C))
    p = _parts(T, C)
    shown = "pre_ln_block(x, attn, mlp, ln_1, ln_2)"
    got, dtype = _returned(call(func, x.copy(), p["attn"], p["mlp"], p["ln_1"], p["ln_2"], shown=shown), shown,
                           x.shape, "a block keeps the stream's shape")
    yield ok(f"returns the stream's shape, {x.shape}")
    want = _block(x, p)
    bound = (gamma(4 * C + 10, unit_roundoff(dtype)) + gamma(4 * C + 10, unit_roundoff(np.float64))) \
        * (np.abs(x) + 10.0)
    if within(got, want, bound):
        yield ok("x = x + attn(ln_1(x)), then x + mlp(ln_2(x)): two writes added to the stream")
        return
    for mistake, words in BLOCK_MISTAKES.items():
        if within(got, _block(x, p, mistake), bound):
            yield fail(words)
            return
    yield fail(f"the output differs from x + attn(ln_1(x)), then + mlp(ln_2(·)), by up to "
               f"{np.abs(got - want).max():.3g}")
