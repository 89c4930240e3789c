"""Reference experiments behind the lesson's "why divide by sqrt(d_k)?" step (tests only; not in the wheel).

Two questions, kept apart because they have different answers:

1. What does the draft's Step 2 code really do?  :func:`draft_step2` runs it
   (W_q, W_k, x all ~ N(0, 1), D = 64, T = 4) for one seed and reports the
   numbers; :func:`draft_step2_many` summarises many seeds. With W ~ N(0, 1) each
   entry of q = x @ W_q is a sum of D unit-variance products, so it has variance
   ~D, not 1, and q.k has variance ~D * D * D = D^3. Dividing by sqrt(D) leaves a
   standard deviation of ~D = 64: still saturated. The plain np.exp also overflows.

2. What does sqrt(d_k) scaling actually fix?  :func:`scaling_sweep` takes q and
   k with unit-variance entries (what a projection with variance 1/fan_in gives),
   sweeps d_k, and measures the spread of the scores and how peaked the softmax
   rows are, with and without the scaling.

Every function returns plain dicts of Python numbers and lists. The d_k explorer widget
(``lessonpy.course.attention.widget_payloads.explore``) computes the same numbers from the same draws
(``lessonpy.maths.score_draws``); the tests hold the two together.
"""

from __future__ import annotations

import math

import numpy as np

from lessonpy.maths.attention import row_entropy, softmax
from lessonpy.maths.score_draws import unit_draws

__all__ = [
    "DEFAULT_D_KS",
    "INITS",
    "expected_score_std",
    "scaling_sweep",
    "draft_step2",
    "draft_step2_many",
]

#: The head sizes the sweep visits by default: 4, 8, ..., 512 (GPT-2 small uses 64).
DEFAULT_D_KS = (4, 8, 16, 32, 64, 128, 256, 512)

#: How q and k are made in :func:`scaling_sweep`:
#:   "unit":      q, k entries ~ N(0, 1) directly (the textbook assumption)
#:   "projected": q = x @ W_q with x ~ N(0, 1) and W ~ N(0, 1/d_k): variance 1/fan_in,
#:                since x is d_k wide here; entries come out with variance ~1
#:   "draft":     q = x @ W_q with W ~ N(0, 1), the draft's Step 2; variance ~d_k
INITS = ("unit", "projected", "draft")


def expected_score_std(d_k, init="unit", scale=True):
    """The standard deviation theory predicts for one score q.k (before softmax).

    q.k sums d_k products q_c * k_c. If each factor has variance v, each product
    has variance v^2 and the sum d_k * v^2. "unit" and "projected" have v = 1,
    "draft" has v = d_k (a sum of d_k unit products per entry).
    """
    v = float(d_k) if init == "draft" else 1.0
    std = math.sqrt(d_k) * v
    return std / math.sqrt(d_k) if scale else std


def _raw_scores_fn(init, n_trials, T, d_max, seed):
    """Return ``raw(d)``: the unscaled scores q @ k.T, (n_trials, T, T), for head size d.

    All d_k share one draw (prefixes of the channels for "unit", the top-left
    corner of the projections for the others), so the sweep is cheap and its
    curves are smooth rather than re-rolled at every point.
    """
    if init == "unit":
        return unit_draws(seed, n_trials, T).raw_scores
    # one x per trial (self-attention: q and k come from the same tokens), one
    # pair of projections shared by all trials: drawing a pair of 512 x 512
    # matrices per trial would dominate the run time. Much slower than "unit"
    # (the projections cost d_k^2 per position; about half a second for the
    # default sweep in the browser): for the explanation, not for a slider.
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_trials, T, d_max))
    W_q = rng.standard_normal((d_max, d_max))
    W_k = rng.standard_normal((d_max, d_max))

    def raw(d):
        w = 1.0 if init == "draft" else 1.0 / math.sqrt(d)  # N(0, 1) vs N(0, 1/d)
        xd = x[..., :d]  # (n, T, d)
        q, k = xd @ (W_q[:d, :d] * w), xd @ (W_k[:d, :d] * w)  # (n, T, d) each
        return q @ np.swapaxes(k, -1, -2)  # (n, T, T)

    return raw


def scaling_sweep(d_ks=DEFAULT_D_KS, T=8, scale=True, temperature=1.0, seed=0,
                  n_trials=None, init="unit"):
    """Measure softmax saturation across head sizes d_k.

    For each d_k: draw ``n_trials`` independent (T, d_k) pairs of q and k (see
    :data:`INITS`), form scores = q @ k.T (divided by sqrt(d_k) when ``scale``,
    then by ``temperature``), softmax each row, and average over all rows.
    ``n_trials=None`` picks enough trials for 256 softmax rows (T * n_trials >=
    256), i.e. 256 * T scores per d_k: from one seed to the next the score std
    moves by about 3% and the scaled mean entropy by about 1%. Per d_k:

      score_std        spread of the scores fed to softmax
      mean_entropy     row entropy in nats; log(T) = evenly spread, 0 = one-hot
      mean_max_weight  weight of each row's winner; 1/T = even, 1 = hard argmax
      mean_softmax_grad  1 - sum(p^2), the trace of softmax's Jacobian
                       diag(p) - p p^T: how much gradient can flow back through
                       the row; 0 when the row is saturated
    Returns a dict of plain numbers and lists (one entry per d_k), plus the
    settings and ``expected_score_std`` from theory. Fixed inputs give fixed output.
    """
    d_ks = [int(d) for d in d_ks]
    if not d_ks or min(d_ks) < 1:
        raise ValueError(f"d_ks must be positive integers, got {d_ks}")
    if T < 2:
        raise ValueError(f"T must be at least 2 for softmax to have a choice, got {T}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    T = int(T)
    n_trials = max(1, -(-256 // T)) if n_trials is None else int(n_trials)  # ceil(256 / T)
    if n_trials < 1:
        raise ValueError(f"n_trials must be at least 1, got {n_trials}")
    raw_scores = _raw_scores_fn(init, n_trials, T, max(d_ks), seed)

    rows = {"score_std": [], "mean_entropy": [], "mean_max_weight": [],
            "mean_softmax_grad": [], "expected_score_std": []}
    for d in d_ks:
        scores = raw_scores(d)  # (n, T, T)
        if scale:
            scores = scores / math.sqrt(d)
        scores = scores / temperature
        p = softmax(scores, axis=-1)  # (n, T, T)
        rows["score_std"].append(float(scores.std()))
        rows["mean_entropy"].append(float(row_entropy(p).mean()))
        rows["mean_max_weight"].append(float(p.max(axis=-1).mean()))
        rows["mean_softmax_grad"].append(float((1.0 - (p * p).sum(axis=-1)).mean()))
        rows["expected_score_std"].append(expected_score_std(d, init, scale) / temperature)
    return {"d_k": d_ks, "T": T, "log_T": math.log(T), "scale": bool(scale),
            "temperature": float(temperature), "seed": seed, "n_trials": n_trials,
            "init": init, **rows}


# -----------------------------------------------------------------------------
# the draft's Step 2, as written


def draft_step2(seed=0, T=4, D=64):
    """Run the draft's Step 2 for one seed and report what happens.

    Reproduces it draw for draw: ``np.random.seed(seed)`` then
    ``W_q = randn(D, D); W_k = randn(D, D); x = randn(T, D)`` (a private
    RandomState, so the global NumPy state is left alone). Reports:

      score_min/max/std        of Q @ K.T (unscaled)
      q_var                    variance of Q's entries (~D, not 1)
      naive_nan_rows           rows the draft's np.exp(s) / sum(np.exp(s)) turns
                               into NaN (exp overflows to inf above ~709.8)
      naive_entropy_row0       the draft's printed entropy (its 1e-10 fudge, NaN included)
      entropy_row0_unscaled / _scaled   with a stable softmax, scores / 1 or / sqrt(D)
      max_weight_scaled        mean winner weight per row after / sqrt(D)
      scaled_score_std         std after / sqrt(D) (~D, still far from 1)
      fixed_*                  the same x with W ~ N(0, 1/D) (1/fan_in, as x is D wide): entropy and max weight
                               after / sqrt(D), the regime the scaling was made for
    """
    r = np.random.RandomState(seed)
    W_q = r.randn(D, D)
    W_k = r.randn(D, D)
    x = r.randn(T, D)
    Q, K = x @ W_q, x @ W_k  # (T, D) each
    scores = Q @ K.T  # (T, T)

    # the draft's softmax, exactly: no max subtraction, so exp can overflow
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(scores)
        naive = e / e.sum(axis=-1, keepdims=True)
        naive_entropy_row0 = float(-(naive[0] * np.log(naive[0] + 1e-10)).sum())

    scaled = scores / math.sqrt(D)
    p_unscaled, p_scaled = softmax(scores), softmax(scaled)
    # the same tokens through projections of variance 1/fan_in (x is D wide, so 1/D)
    Q_fixed, K_fixed = x @ (W_q / math.sqrt(D)), x @ (W_k / math.sqrt(D))
    p_fixed = softmax(Q_fixed @ K_fixed.T / math.sqrt(D))
    return {
        "seed": seed, "T": T, "D": D, "log_T": math.log(T),
        "score_min": float(scores.min()), "score_max": float(scores.max()),
        "score_std": float(scores.std()), "q_var": float(Q.var()),
        "expected_score_std": expected_score_std(D, "draft", scale=False),
        "naive_nan_rows": int(np.isnan(naive).any(axis=-1).sum()),
        "naive_entropy_row0": naive_entropy_row0,
        "entropy_row0_unscaled": float(row_entropy(p_unscaled[0])),
        "entropy_row0_scaled": float(row_entropy(p_scaled[0])),
        "max_weight_scaled": float(p_scaled.max(axis=-1).mean()),
        "scaled_score_std": float(scaled.std()),
        "fixed_entropy_row0_scaled": float(row_entropy(p_fixed[0])),
        "fixed_mean_entropy_scaled": float(row_entropy(p_fixed).mean()),
        "fixed_max_weight_scaled": float(p_fixed.max(axis=-1).mean()),
    }


def draft_step2_many(seeds=range(200), T=4, D=64):
    """Summarise :func:`draft_step2` over many seeds: means, and how often it overflows."""
    runs = [draft_step2(s, T, D) for s in seeds]
    if not runs:
        raise ValueError("seeds is empty")

    def mean(key):
        return float(np.mean([r[key] for r in runs]))

    return {
        "n_seeds": len(runs), "T": T, "D": D, "log_T": math.log(T),
        "score_std": mean("score_std"), "score_min": mean("score_min"),
        "score_max": mean("score_max"), "q_var": mean("q_var"),
        "expected_score_std": expected_score_std(D, "draft", scale=False),
        "frac_row0_nan": float(np.mean([math.isnan(r["naive_entropy_row0"]) for r in runs])),
        "frac_any_nan": float(np.mean([r["naive_nan_rows"] > 0 for r in runs])),
        "entropy_row0_unscaled": mean("entropy_row0_unscaled"),
        "entropy_row0_scaled": mean("entropy_row0_scaled"),
        "max_entropy_row0_scaled": float(max(r["entropy_row0_scaled"] for r in runs)),
        "max_weight_scaled": mean("max_weight_scaled"),
        "scaled_score_std": mean("scaled_score_std"),
        "fixed_entropy_row0_scaled": mean("fixed_entropy_row0_scaled"),
        "fixed_mean_entropy_scaled": mean("fixed_mean_entropy_scaled"),
        "fixed_max_weight_scaled": mean("fixed_max_weight_scaled"),
    }
