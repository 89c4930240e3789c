"""The hidden checks of the attention lesson's exercises ("Practice it yourself").

Each check takes the namespace the reader's code ran in and yields ``ok(message)`` or
``fail(message)`` per thing it checks (see :mod:`lessonpy.maths.grading`). A failure says what
is wrong in the reader's terms and, where a common mistake explains it, which mistake:
the checks compare against the plausible wrong answers, not only against the right one.
Answers are compared within the rounding error of the float type they were computed in
(:mod:`lessonpy.maths.tolerance`), so a float16 or float32 answer passes and a wrong one still fails.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ...maths.attention import merge_heads, softmax, split_heads
from ...maths.attention import multi_head_attention as reference_multi_head_attention
from ...maths.answers import out_and_weights, returned, shape_of
from ...maths.grading import CheckFailed, call, fail, ok, require_function
from ...maths.tolerance import Tolerance, copied, float_of, gamma, unit_roundoff, within



# ---------------------------------------------------------------------------- a. the parameter budget

#: (n_embd, n_head) the count is checked at: GPT-2 small first, then sizes where a count that
#: depends on n_head, or a hard-coded number, gives something else.
PARAM_SIZES = [(768, 12), (768, 1), (768, 4), (64, 4), (512, 8)]


def _not_a_count(got) -> str | None:
    """What follows "returned {got!r}" when *got* is not a parameter count (a whole number); None if it is."""
    if isinstance(got, (int, np.integer)) and not isinstance(got, (bool, np.bool_)):
        return None
    if isinstance(got, (float, np.floating)):
        return ", a float: a parameter count is a whole number (use // for division, or no division at all)"
    if isinstance(got, (tuple, list)) and all(isinstance(x, (int, np.integer)) for x in got):
        return (f", a {type(got).__name__} of {len(got)} counts: add them up and return one int "
                "(the fused projection's weights plus the output projection's)")
    return f" ({type(got).__name__}): return an int"


def _depends_on_heads(func, got: int, C: int, H: int) -> bool:
    """Whether the reader's count for (C, H) differs from theirs for one head (it must not)."""
    if H == 1:
        return False
    try:
        one_head = call(func, C, 1)
    except CheckFailed:
        return False
    return one_head != got


def _count_mistake(func, got: int, C: int, H: int) -> str:
    """Why a parameter count for (C, H) is wrong, when we recognise the mistake."""
    D = C // H
    full = 4 * C * C
    if got == 3 * C * C:
        return "that is 3·C²: you counted W_Q, W_K and W_V but forgot the output projection W_O (another C·C)"
    if got == 2 * C * C:
        return ("that is 2·C²: the fused projection maps C features to 3·C (queries, keys and values), "
                "so it has 3·C² weights, and W_O another C²")
    if got in (4 * C * C * H, 3 * C * C * H + C * C):
        return ("that multiplies by n_head: each head's projections are C×D with D = C / n_head, not C×C; "
                "all n_head heads together make one C×C matrix per projection")
    if got - full in (C, 3 * C, 4 * C):
        return "that counts biases: this block has none (bias=False), only the four weight matrices"
    if got == 4 * C:
        return "that is 4·C: each projection is a C×C matrix, so C² parameters, not C"
    if got in (4 * C * D, 3 * C * D + C * C, 4 * C * C // H) or _depends_on_heads(func, got, C, H):
        return ("that depends on n_head: each head's projections are C×D with D = C / n_head, "
                "but there are n_head of them, so together they are C×C again")
    return f"{full:,} was expected (3·C² for the fused W_QKV plus C² for W_O)"


def attention_params(ns: dict) -> Iterator[dict]:
    """Exercise: count the parameters of a bias-free multi-head attention block."""
    func = require_function(ns, "attention_params")
    C0, H0 = PARAM_SIZES[0]
    for C, H in PARAM_SIZES:
        shown = f"attention_params({C}, {H})"
        got = call(func, C, H, shown=shown)
        mistake = _not_a_count(got)
        if mistake:
            yield fail(f"{shown} returned {got!r}{mistake}")
            return
        got = int(got)
        if (C, H) == (C0, H0):
            yield ok("returns a whole number (an int)")
            if got != 4 * C * C:
                yield fail(f"{shown} returned {got:,}: {_count_mistake(func, got, C, H)}")
                return
            yield ok(f"GPT-2 small (n_embd={C}, n_head={H}): {got:,} parameters")
        elif got != 4 * C * C:
            hint = "is the number hard-coded?" if got == 4 * C0 * C0 else _count_mistake(func, got, C, H)
            yield fail(f"{shown} returned {got:,} where {4 * C * C:,} was expected: {hint}")
            return
    yield ok("other sizes too: always 4·n_embd², whatever n_head")


# ---------------------------------------------------------------------------- b. the fused QKV split

def _reference_split(qkv: np.ndarray, H: int, order=(0, 1, 2), mistake=None) -> list[np.ndarray] | None:
    """The right split (and, with *order* / *mistake*, the usual wrong ones) of (B, T, 3C); None
    when *mistake* cannot happen for this shape."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    D = C // H
    parts = [qkv[..., i * C:(i + 1) * C] for i in order]  # q, k, v, each (B, T, C)
    if mistake == "positions":  # np.split(qkv, 3, axis=1): a third of the positions each, all 3C features
        if T % 3:
            return None  # np.split raises instead, which split_qkv reports
        parts = [p.reshape(B, T, C) for p in np.split(qkv, 3, axis=1)]
    if mistake == "straight":  # reshaping straight to (B, H, T, D) scrambles positions and heads
        return [p.reshape(B, H, T, D) for p in parts]
    if mistake == "interleaved":  # (B, T, D, H): head h gets features h, h + H, h + 2H, ...
        return [p.reshape(B, T, D, H).transpose(0, 3, 1, 2) for p in parts]
    return [p.reshape(B, T, H, D).transpose(0, 2, 1, 3) for p in parts]  # (B, H, T, D)


def _split_values_mistake(got: list, qkv: np.ndarray, H: int) -> str:
    names = "qkv"
    for i, name in enumerate(names):
        for j, other in enumerate(_reference_split(qkv, H)):
            if i != j and copied(got[i], other):
                return (f"{name} holds what should be {names[j]}: the fused projection's output is "
                        "q, k, v side by side along the last axis, in that order")

    def matches(mistake):
        wrong = _reference_split(qkv, H, mistake=mistake)
        return wrong is not None and all(copied(g, w) for g, w in zip(got, wrong))
    if matches("positions"):
        return ("right shape but wrong values: you split along axis 1, the positions; q, k and v sit side by side "
                "along the last axis: np.split(qkv, 3, axis=-1)")
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
    if shape == (B, H, D, T):
        return message + ": positions and head features are swapped: from (B, T, H, D) use .transpose(0, 2, 1, 3)"
    if shape is not None and sorted(shape) == sorted((B, H, T, D)):
        return message + ": the right axes in the wrong order; from (B, T, H, D) use .transpose(0, 2, 1, 3)"
    if shape == (B, T, C):
        return message + f": {name} is still (B, T, C); split it into n_head heads of size C // n_head"
    if shape is not None and len(shape) == 3 and shape[-1] == 3 * C:
        return message + ": q, k and v sit side by side along the last axis: split that one"
    return message


def _three_parts(got, shown: str) -> list:
    """q, k, v as `q, k, v = split_qkv(...)` unpacks them; a CheckFailed if that would not work.

    A tuple, a list, a generator and a (3, B, H, T, D) array all unpack into three arrays."""
    if isinstance(got, Iterator):
        got = list(got)
    if isinstance(got, (tuple, list)) or (isinstance(got, np.ndarray) and got.ndim >= 1):
        if len(got) == 3:
            return list(got)
    if shape_of(got) is not None:
        what = f"an array of shape {shape_of(got)}"
    elif isinstance(got, (tuple, list)):
        what = f"{type(got).__name__} of length {len(got)}"
    else:
        what = type(got).__name__
    raise CheckFailed(f"{shown} should return three arrays (q, k, v); it returned {what}")


def split_qkv(ns: dict) -> Iterator[dict]:
    """Exercise: split a fused (B, T, 3C) projection into q, k, v of shape (B, H, T, D)."""
    func = require_function(ns, "split_qkv")
    rng = np.random.default_rng(4)
    for B, T, C, H in [(2, 8, 768, 12), (1, 6, 12, 3)]:
        qkv = rng.standard_normal((B, T, 3 * C))
        shown = f"split_qkv(qkv of shape {(B, T, 3 * C)}, n_head={H})"
        try:
            got = _three_parts(call(func, qkv.copy(), H, shown=shown), shown)
        except CheckFailed as exc:
            if "equal division" in str(exc):
                raise CheckFailed(f"{exc}: did you split along the wrong axis? q, k and v sit side by side "
                                  "along the last axis (axis=-1)") from None
            raise
        for name, part in zip("qkv", got):
            if shape_of(part) != (B, H, T, C // H):
                yield fail(_split_shape_mistake(name, shape_of(part), B, T, C, H))
                return
        if not all(copied(g, r) for g, r in zip(got, _reference_split(qkv, H))):
            yield fail(f"{shown}: {_split_values_mistake(got, qkv, H)}")
            return
        yield ok(f"{shown}: q, k and v have shape {(B, H, T, C // H)} and the right values")


# ---------------------------------------------------------------------------- c. scaled attention

#: d_k of the starter's example call, (4, 8) arrays: the size a hard-coded d_k usually has.
STARTER_D_K = 8
#: Scores this large overflow np.exp in float64 (past 709) and in np.longdouble (past about 11,356).
LARGE_SCORE = 1e5
#: Each key's offset, in units of LARGE_SCORE, in the probe whose keys lie far apart inside every
#: row. The largest is shared by two keys (so the weights are not one-hot) that are neither the
#: first nor the last; the row's mean (0.1), median and midrange (0), min and first entry (−1) and
#: last entry (−0.5) all lie at least LARGE_SCORE / 2 below it, so a softmax shifted by any of
#: them still exponentiates about +LARGE_SCORE / 2 or more. Its length is the checks' T.
KEY_OFFSETS = (-1.0, 1.0, 0.0, 1.0, -0.5)
#: T = d_k = d_v of the square Q, K, V an answer that raised is run on again: there Q @ K and
#: V @ weights run, so the mistake shows in the values.
SQUARE = 6


def _named_factor(c: float, T: int, d_k: int, d_v: int) -> str:
    """' (1/√d_k)' and the like when *c* is one of the sizes a reader may wrongly divide by."""
    named = {1 / np.sqrt(d_k): "1/√d_k", 1 / d_k: "1/d_k", np.sqrt(d_k): "√d_k", 1 / d_v: "1/d_v",
             1 / np.sqrt(d_v): "1/√d_v", 1 / T: "1/T"}
    return next((f" ({text})" for value, text in named.items() if np.isclose(c, value)), "")


# How a softmax can go wrong, each as what to change.
COLUMNS = ("your weights' rows do not sum to 1: its columns do — take the softmax along each row (axis=-1), "
           "over the keys")
MAX_WITHOUT_KEEPDIMS = ("you subtracted z.max(axis=-1) without keepdims=True: that array of shape (T,) lines up with "
                        "the columns, so column j lost row j's max — a different number in each column of a row, "
                        "which changes the softmax. Keep the axis: z - z.max(axis=-1, keepdims=True)")
COLUMN_MAX = ("you subtracted each column's max (axis=0): the softmax only stays the same if each row loses one "
              "number, and only its own max keeps every exponent ≤ 0: z - z.max(axis=-1, keepdims=True)")
SUM_WITHOUT_KEEPDIMS = ("you divided by e.sum(axis=-1) without keepdims=True: that array of shape (T,) lines up "
                        "with the columns, so column j was divided by row j's sum. Keep the axis: "
                        "e / e.sum(axis=-1, keepdims=True)")
WHOLE_SUM = ("your weights sum to 1 over the whole matrix, not along each row: e.sum() and scipy.special.softmax(z) "
             "without an axis take axis=None. Sum along each row: e.sum(axis=-1, keepdims=True) "
             "(or softmax(z, axis=-1))")
NUMERATOR_ONLY = ("you subtracted the max in the numerator only: divide e = np.exp(z - z.max(axis=-1, keepdims=True)) "
                  "by e.sum(axis=-1, keepdims=True), the sum of the same shifted exponentials")


def _softmax_slips(z: np.ndarray) -> Iterator[tuple[np.ndarray, str]]:
    """The wrong softmaxes of the scores *z* a reader plausibly writes, each with what to change.

    A shift (what np.exp's argument loses) combined with a normalisation (what e is divided by).
    """
    shifts = [(z - z.max(axis=-1, keepdims=True), None),
              (z - z.max(), None),  # one number for every row: right here, the large-score probes catch it
              (z - z.max(axis=0, keepdims=True), COLUMN_MAX),
              (z - z.max(axis=-1), MAX_WITHOUT_KEEPDIMS)]
    for shifted, shift_slip in shifts:
        e = np.exp(shifted)
        for weights, norm_slip in [(e / e.sum(axis=-1, keepdims=True), None),
                                   (e / e.sum(axis=-1), SUM_WITHOUT_KEEPDIMS),
                                   (e / e.sum(), WHOLE_SUM),
                                   (e / e.sum(axis=0, keepdims=True), COLUMNS)]:
            # Both wrong shifts take one number per column, which cancels in a softmax over columns.
            slips = [s for s in (None if norm_slip is COLUMNS else shift_slip, norm_slip) if s]
            if slips:
                yield weights, "; and ".join(slips)
    yield np.exp(shifts[0][0]) / np.exp(z).sum(axis=-1, keepdims=True), NUMERATOR_ONLY


def _score_slips(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> Iterator[tuple[np.ndarray, str]]:
    """A right softmax of wrong scores (or of the right ones, rearranged), each with what to change."""
    T, d_k = Q.shape
    d_v = V.shape[-1]
    raw = Q @ K.T
    for scale, why in [
        (1.0, "you forgot to divide the scores by √d_k"),
        (d_k, "you divided the scores by d_k: divide by √d_k, its square root"),
        (1 / np.sqrt(d_k), "you multiplied the scores by √d_k: divide by it instead, Q @ K.T / np.sqrt(d_k)"),
        (np.sqrt(STARTER_D_K), f"you divided the scores by √{STARTER_D_K}: {STARTER_D_K} is d_k in the starter's "
                               f"example, hard-coded; read it from the arrays, d_k = K.shape[-1] ({d_k} here)"),
        (np.sqrt(T), "you divided by √T, the number of positions: divide by √d_k, the size of each key"),
        (np.sqrt(d_v), "you divided by the square root of V's width: use d_k, the size of Q's and K's rows"),
        (d_v, "you divided the scores by d_v, V's width: divide by √d_k, the square root of the keys' size"),
    ]:
        yield softmax(raw / scale), why
    z = raw / np.sqrt(d_k)
    yield softmax(z.T), "your weights are transposed: row i should hold query i against every key (Q @ K.T)"
    yield softmax(z).T, ("you transposed the weights after the softmax: row i must hold query i's weights over "
                         "the keys, as the softmax gave them (return weights, not weights.T)")
    yield (softmax(np.where(np.tril(np.ones((T, T), dtype=bool)), z, -np.inf)),
           "you applied a causal mask: this exercise's attention has none, every query attends to every key")


def _fitted_scale(weights: np.ndarray, raw: np.ndarray, tol: Tolerance) -> float | None:
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
    return s if tol.weights(weights, softmax(raw / s)) else None


def _scaled_after_softmax(weights: np.ndarray, Q, K, V, tol: Tolerance) -> str | None:
    """The mistake when every row of weights sums to the same c ≠ 1: a softmax multiplied by c."""
    T, d_k = Q.shape
    sums = weights.sum(axis=-1)
    c = float(sums.mean())
    if c <= 0 or not tol.weights(sums, np.full(T, c)):
        return None
    raw = Q @ K.T
    sums_to = f"each row of your weights sums to {c:.4g}{_named_factor(c, T, d_k, V.shape[-1])} instead of 1"
    if tol.weights(weights / c, softmax(raw)):
        return (f"you scaled after the softmax: {sums_to}. Divide the scores before the softmax: "
                "softmax(Q @ K.T / np.sqrt(d_k))")
    if tol.weights(weights / c, softmax(raw / np.sqrt(d_k))):
        return f"you scaled the weights after the softmax as well: {sums_to}. The softmax's output is the weights"
    return None


def _weights_mistake(weights: np.ndarray, Q, K, V, tol: Tolerance) -> str:
    """Why the weights are not softmax(Q Kᵀ / √d_k) row by row, naming the mistake where we can."""
    d_k = Q.shape[1]
    z = Q @ K.T / np.sqrt(d_k)
    for slips in (_softmax_slips(z), _score_slips(Q, K, V)):
        for wrong, why in slips:
            if tol.weights(weights, wrong):
                return why
    after = _scaled_after_softmax(weights, Q, K, V, tol)
    if after:
        return after
    scale = _fitted_scale(weights, Q @ K.T, tol)
    if scale is not None:
        return (f"your scores are divided by {scale:.4g}, where √d_k = √{d_k} = {np.sqrt(d_k):g} was expected: "
                "d_k is the size of each key, K.shape[-1]")
    if tol.sums_to_one(weights.T):
        return COLUMNS
    if not tol.sums_to_one(weights):
        return "your weights' rows do not sum to 1"
    return "the weights differ from softmax(Q Kᵀ / √d_k) taken along each row"


def _out_mistake(out: np.ndarray, weights: np.ndarray, V: np.ndarray, d_k: int, tol: Tolerance) -> str:
    """Why out is not weights @ V, for the right *weights*."""
    if tol.product(out, weights.T, V):
        return ("you multiplied by weights.T: row i of weights already holds query i's weights over the keys, "
                "so out = weights @ V")
    want = weights @ V
    c = float((out * want).sum() / (want * want).sum())
    if c != 0 and tol.product(out / c, weights, V):
        return (f"your out is weights @ V times {c:.4g}{_named_factor(c, len(weights), d_k, V.shape[-1])}: the weights already "
                "sum to 1, so out is weights @ V and nothing more")
    return "out should be weights @ V: each output row blends the rows of V"


def _crash_mistake(func) -> str | None:
    """What an attention that raised on (T, d_k) arrays does wrong, seen on square ones where it runs."""
    rng = np.random.default_rng(11)
    Q, K, V = (rng.standard_normal((SQUARE, SQUARE)) for _ in range(3))
    try:
        out, weights, dtype = out_and_weights(call(func, Q.copy(), K.copy(), V.copy()))
    except (CheckFailed, TypeError, ValueError):
        return None
    tol = Tolerance(Q, K, dtype)
    if tol.weights(weights, softmax(Q @ K / np.sqrt(SQUARE))):
        return ("Q @ K pairs each query with K's columns, not with the keys: transpose K, "
                "Q @ K.T (or K.swapaxes(-1, -2)), so that score[i, j] is query i against key j")
    if tol.weights(weights, softmax(Q.T @ K / np.sqrt(SQUARE))):
        return ("Q.T @ K multiplies over the positions, giving (d_k, d_k): the scores multiply over the features, "
                "Q @ K.T, (T, d_k) @ (d_k, T), one per query and key")
    right = softmax(Q @ K.T / np.sqrt(SQUARE))
    if tol.weights(weights, right) and tol.product(out, V, right):
        return ("out = V @ weights multiplies in the wrong order: out = weights @ V, (T, T) @ (T, d_v), "
                "so that each output row blends the rows of V")
    return None


# What goes wrong at large scores, by probe.
OVERFLOW = (f"overflow: with scores near {LARGE_SCORE:,.0f} np.exp returns inf (float64 overflows past 709, "
            "np.longdouble past about 11,356) and inf / inf is nan — subtract each row's max before np.exp "
            "(the softmax does not change)")
FLOAT16 = (f"float16 cannot hold scores near {LARGE_SCORE:,.0f}: its largest number is {{largest:,.0f}}, so the "
           "scores themselves are inf before any softmax. Your softmax may well be right; compute in float32 or "
           "float64, as the exercise asks")
ABS_MAX = ("underflow: you subtracted each row's largest absolute score (np.abs(z).max()), not its largest score: in "
           f"a row whose scores all lie near −{LARGE_SCORE:,.0f} that shifts them down by another "
           f"{LARGE_SCORE:,.0f}, np.exp gives 0 everywhere, and 0 / 0 is nan. The max itself may be negative: "
           "z - z.max(axis=-1, keepdims=True)")
UNDERFLOW = ("underflow: you subtracted the largest score of the whole array (z.max()), not each row's own: in a row "
             "whose scores all lie far below it np.exp gives 0 everywhere, and 0 / 0 is nan. Subtract each row's "
             "max: z - z.max(axis=-1, keepdims=True)")
ONE_SHIFT = (f"overflow: you shifted every row by the same number, a statistic of the whole array (its mean?). With "
             f"rows far apart (scores near +{LARGE_SCORE:,.0f} in the first row, −{LARGE_SCORE:,.0f} in the last) "
             "np.exp overflows in the rows above that number (inf / inf is nan) and gives 0 / 0 in those far below "
             "it. Subtract each row's own max: z - z.max(axis=-1, keepdims=True)")
ROW_STATISTIC = (f"overflow inside a row: you shifted each row by something other than its max (its mean, min, median "
                 f"or first entry?). When one query's scores lie ±{LARGE_SCORE:,.0f} apart, z minus that number "
                 f"still leaves exponents near +{LARGE_SCORE:,.0f}, and np.exp overflows (inf / inf is nan). Only the "
                 "row's max makes every exponent ≤ 0: z - z.max(axis=-1, keepdims=True)")


def _probes(T: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(what the scores look like, each row's factor, each key's factor): a probe adds
    row_i · key_j · LARGE_SCORE to the score of query i for key j.

    Every row near +LARGE_SCORE: a softmax without the max subtracted overflows, whatever float
    it uses. Rows far apart: one shift for the whole array overflows or underflows some rows.
    Keys far apart in one row: a shift by any row statistic but the max overflows.
    """
    ones = np.ones(T)
    return [(f"with scores near {LARGE_SCORE:,.0f}", ones, ones),
            (f"with rows far apart (near +{LARGE_SCORE:,.0f} in the first, −{LARGE_SCORE:,.0f} in the last)",
             np.linspace(1.0, -1.0, T), ones),
            (f"with one query's scores ±{LARGE_SCORE:,.0f} apart", ones, np.resize(KEY_OFFSETS, T))]


def _nan_mistake(probe: int, weights: np.ndarray, scores: np.ndarray, dtype: np.dtype) -> str:
    """Which mistake a nan in the weights of probe number *probe* of _probes (whose scaled scores are *scores*)
    shows, for an answer that computed ordinary scores in *dtype*."""
    if scores.max() > np.finfo(dtype).max:
        return FLOAT16.format(largest=float(np.finfo(dtype).max))
    if probe == 0:
        return OVERFLOW
    if probe == 1:  # the top row survived a shift that suited it alone
        with np.errstate(all="ignore"):
            shifted = np.exp(scores - np.abs(scores).max(axis=-1, keepdims=True))
            by_abs_max = shifted / shifted.sum(axis=-1, keepdims=True)
        if np.array_equal(np.isnan(weights).all(axis=-1), np.isnan(by_abs_max).all(axis=-1)):
            return ABS_MAX
        return UNDERFLOW if np.all(np.isfinite(weights[0])) else ONE_SHIFT
    return ROW_STATISTIC


def _finite_but_wrong(where: str, weights: np.ndarray, expected: np.ndarray, tol: Tolerance) -> str:
    """Why finite weights at large scores are wrong."""
    uniform = np.full(len(weights), 1 / len(weights))
    if any(tol.weights(w, uniform) and not tol.weights(e, uniform) for w, e in zip(weights, expected)):
        return (f"{where} rows of your weights came out uniform (every key 1/T): clipping the scores (np.clip) "
                "makes large scores equal and loses their differences. Subtract each row's max instead: "
                "softmax(z - max) is exactly softmax(z)")
    if not tol.sums_to_one(weights):
        return (f"{where} the rows of your weights no longer sum to 1: replacing inf or nan (np.nan_to_num) hides "
                "the overflow instead of avoiding it. Subtract each row's max before np.exp")
    return (f"{where} your weights are finite but wrong: only subtracting one number per row leaves the softmax "
            "unchanged, and only the row's max keeps every exponent ≤ 0; clipping or rescaling the scores changes it")


def _with_offsets(Q: np.ndarray, K: np.ndarray, rows: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q, K whose scaled scores are the usual ones (over d_k - 1 features) plus rows_i · keys_j · LARGE_SCORE."""
    Q, K = Q.copy(), K.copy()
    Q[:, -1] = rows * LARGE_SCORE * np.sqrt(Q.shape[1])
    K[:, -1] = keys
    return Q, K


def _large_scores_mistake(func, Q, K, V, dtype: np.dtype) -> str | None:
    """None if the reader's softmax survives every probe of _probes, else what goes wrong (*dtype*: the float
    the answer computed ordinary scores in)."""
    d_k = Q.shape[1]
    for probe, (where, rows, keys) in enumerate(_probes(Q.shape[0])):
        Qp, Kp = _with_offsets(Q, K, rows, keys)
        with np.errstate(all="ignore"):
            _, weights, returned_dtype = out_and_weights(
                call(func, Qp.copy(), Kp.copy(), V.copy(), shown=f"attention(Q, K, V) {where}"))
        scores = Qp @ Kp.T / np.sqrt(d_k)
        if not np.all(np.isfinite(weights)):
            return _nan_mistake(probe, weights, scores, dtype)
        tol = Tolerance(Qp, Kp, returned_dtype)
        expected = softmax(scores)
        if not tol.weights(weights, expected):
            return _finite_but_wrong(where, weights, expected, tol)
    return None


def attention(ns: dict) -> Iterator[dict]:
    """Exercise: scaled dot-product attention with a numerically stable softmax."""
    func = require_function(ns, "attention")
    rng = np.random.default_rng(7)
    # T ≠ d_k ≠ d_v ≠ STARTER_D_K, so every wrong scale gives different weights and every wrong product a wrong shape
    T, d_k, d_v = len(KEY_OFFSETS), 16, 3
    Q, K, V = rng.standard_normal((T, d_k)), rng.standard_normal((T, d_k)), rng.standard_normal((T, d_v))
    shown = "attention(Q, K, V)"
    try:
        got = call(func, Q.copy(), K.copy(), V.copy(), shown=shown)
    except CheckFailed as exc:
        mistake = _crash_mistake(func)
        raise CheckFailed(f"{exc}: {mistake}" if mistake else str(exc)) from None
    out, weights, dtype = returned(got, shown, T, d_k, d_v)
    yield ok(f"shapes: out {(T, d_v)}, weights {(T, T)}")

    tol = Tolerance(Q, K, dtype)
    if not tol.sums_to_one(weights):
        yield fail(_weights_mistake(weights, Q, K, V, tol))
        return
    yield ok("each row of weights sums to 1")

    expected = softmax(Q @ K.T / np.sqrt(d_k))
    if not tol.weights(weights, expected):
        yield fail(_weights_mistake(weights, Q, K, V, tol))
        return
    yield ok("the scores are scaled by √d_k")
    if tol.product(out, expected, V):
        yield ok("out is the weighted sum of the values, weights @ V")
    else:
        yield fail(_out_mistake(out, expected, V, d_k, tol))

    # Only a right softmax is worth probing with large scores: otherwise that message would be noise.
    mistake = _large_scores_mistake(func, Q, K, V, dtype)
    if mistake:
        yield fail(mistake)
    else:
        yield ok(f"stable with scores near ±{LARGE_SCORE:,.0f}, within a row and across rows "
                 "(no overflow or underflow in np.exp)")


# ---------------------------------------------------------------------------- d. the whole multi-head forward pass

#: (B, T, C, n_head) the forward pass is checked at: a batch of 2 first (T ≠ n_head, D ≠ C, so each named
#: mistake gives other values), then other sizes, each with its own head size D (a hard-coded D fails), a
#: batch of 3 and a single head, none causal.
MHA_SIZES = [(2, 5, 12, 3), (1, 4, 16, 2), (3, 6, 12, 4), (2, 3, 6, 1)]

# The usual mistakes of a forward pass, each as what to change (keyed by the slip _forward makes).
MHA_MISTAKES = {
    "no_proj": ("you forgot the output projection: after merging the heads, y = merged @ W_proj.T mixes what "
                "the heads found"),
    "proj_untransposed": ("W_proj is in nn.Linear layout (out, in): apply it as merged @ W_proj.T, not "
                          "merged @ W_proj"),
    "merge_straight": ("you merged the heads in the wrong order: reshaping (B, H, T, D) straight to (B, T, C) "
                       "mixes positions and heads; transpose to (B, T, H, D) first (.transpose(0, 2, 1, 3)), "
                       "then reshape"),
    "split_straight": ("you split into heads by reshape without the transpose: reshaping (B, T, C) straight to "
                       "(B, H, T, D) mixes positions and heads; reshape to (B, T, H, D), then "
                       ".transpose(0, 2, 1, 3)"),
    "split_and_merge_straight": ("you split and merged the heads by reshape without the transpose: reshaping "
                                 "(B, T, C) straight to (B, H, T, D) and back mixes positions and heads; split "
                                 "with .reshape(B, T, H, D).transpose(0, 2, 1, 3) and merge with the reverse"),
    "scale_C": ("you scaled the scores by √C instead of √D: each head's queries and keys are D = C // n_head "
                "wide, so divide by √D"),
    "no_scale": "you forgot to divide each head's scores by √D, D = C // n_head",
    "softmax_axis": ("you took the softmax over the wrong axis: each query's weights run over the keys, the last "
                     "axis of (B, H, T, T): softmax(..., axis=-1)"),
    "causal": ("you applied a causal mask: this exercise's attention has none, every query attends to every "
               "key"),
}


def _forward(x: np.ndarray, W_qkv: np.ndarray, W_proj: np.ndarray, H: int, slip: str | None = None):
    """(y, merged heads, weights) of the forward pass, or of the one with *slip* (a key of MHA_MISTAKES)."""
    B, T, C = x.shape
    D = C // H
    parts = np.split(x @ W_qkv.T, 3, axis=-1)  # q, k, v, each (B, T, C)
    if slip in ("split_straight", "split_and_merge_straight"):
        q, k, v = (p.reshape(B, H, T, D) for p in parts)
    else:
        q, k, v = (split_heads(p, H) for p in parts)  # (B, H, T, D)
    scale = {"scale_C": np.sqrt(C), "no_scale": 1.0}.get(slip, np.sqrt(D))
    scores = q @ k.swapaxes(-1, -2) / scale
    if slip == "causal":
        scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    weights = softmax(scores, axis=-2 if slip == "softmax_axis" else -1)
    heads = weights @ v
    if slip in ("merge_straight", "split_and_merge_straight"):
        merged = heads.reshape(B, T, C)
    else:
        merged = merge_heads(heads)
    if slip == "no_proj":
        return merged, merged, weights
    return merged @ (W_proj if slip == "proj_untransposed" else W_proj.T), merged, weights


def _forward_bound(x: np.ndarray, W_qkv: np.ndarray, W_proj: np.ndarray, H: int, dtype) -> np.ndarray:
    """How far a right forward pass computed in *dtype* may lie from the float64 one, entry by entry.

    Each head is one attention whose q, k and v are products of C multiply-adds (Tolerance's *projected*,
    with the sizes |x| @ |W|); its error, merged, goes through W_proj, whose own C multiply-adds round too."""
    B, T, C = x.shape
    _, merged, weights = _forward(x, W_qkv, W_proj, H)
    size_q, size_k, size_v = (split_heads(s, H) for s in np.split(np.abs(x) @ np.abs(W_qkv).T, 3, axis=-1))
    head_bound = np.empty_like(size_v)
    for b in range(B):
        for h in range(H):
            tol = Tolerance(size_q[b, h], size_k[b, h], dtype, projected=C)
            head_bound[b, h] = tol.product_rtol * (weights[b, h] @ size_v[b, h]) + tol.atol
    rounding = gamma(C + 2, unit_roundoff(dtype)) + gamma(C + 2, unit_roundoff(np.float64))
    return (merge_heads(head_bound) @ np.abs(W_proj).T + rounding * (np.abs(merged) @ np.abs(W_proj).T)
            + float(np.finfo(dtype).tiny))


def _mha_shape_mistake(shape, B: int, T: int, C: int, H: int) -> str:
    message = f"y has shape {shape} where {(B, T, C)} was expected"
    if shape == (B, H, T, C // H):
        return message + ": merge the heads back, (B, H, T, D) -> (B, T, H, D) -> (B, T, C), before W_proj"
    if shape == (B, T, 3 * C):
        return message + ": split x @ W_qkv.T into q, k and v along the last axis"
    return message


def _mha_crash_mistake(exc: CheckFailed) -> str:
    if "matmul" in str(exc) and "mismatch" in str(exc):
        return (f"{exc}: W_qkv (3C, C) and W_proj (C, C) are in nn.Linear layout (out, in): "
                "project with x @ W_qkv.T")
    return str(exc)


def multi_head_attention(ns: dict) -> Iterator[dict]:
    """Exercise: the whole multi-head forward pass, graded against the lesson's own module."""
    func = require_function(ns, "multi_head_attention")
    rng = np.random.default_rng(41)
    for B, T, C, H in MHA_SIZES:
        x = rng.standard_normal((B, T, C))
        W_qkv = rng.standard_normal((3 * C, C)) / np.sqrt(C)  # fan-in C: q, k, v entries of variance about 1
        W_proj = rng.standard_normal((C, C)) / np.sqrt(C)
        shown = f"multi_head_attention(x of shape {(B, T, C)}, W_qkv, W_proj, n_head={H})"
        try:
            got = call(func, x.copy(), W_qkv.copy(), W_proj.copy(), H, shown=shown)
        except CheckFailed as exc:
            raise CheckFailed(_mha_crash_mistake(exc)) from None
        if isinstance(got, (tuple, list)):
            yield fail(f"{shown} returned a {type(got).__name__}: return y alone, one array of shape {(B, T, C)}")
            return
        if shape_of(got) != (B, T, C):
            yield fail(f"{shown}: {_mha_shape_mistake(shape_of(got), B, T, C, H)}")
            return
        dtype = float_of(got)
        bound = _forward_bound(x, W_qkv, W_proj, H, dtype)
        y = np.asarray(got, dtype=float)
        if not within(y, reference_multi_head_attention(x, W_qkv, W_proj, H), bound):
            first = (B, T, C, H) == MHA_SIZES[0]
            mistake = next((why for slip, why in MHA_MISTAKES.items()
                            if within(y, _forward(x, W_qkv, W_proj, H, slip)[0], bound)),
                           "y differs from the lesson's multi_head_attention: split, attend per head with "
                           "softmax(q @ kᵀ / √D), merge, then project with W_proj.T"
                           + ("" if first else "; right at the first size, so is a size of that call hard-coded?"))
            yield fail(f"{shown}: {mistake}")
            return
        yield ok(f"{shown}: shape {(B, T, C)}, and the values of the lesson's multi_head_attention")
