"""The Python side of the lesson's interactive widgets (```widget fences).

The build calls each widget's ``prerender_*`` in CPython to put its first picture into the page (the widget's
spec, static/js/page/widgets/<name>/spec.yml, names it); once Python runs in the page, the widgets call
:func:`explore`, :func:`heads` and :func:`real_heads` through ``runtime.call`` (their specs' ``calls``). Each call
returns one payload: the arrays
(typed arrays in the reply, transferred) and the stats the page prints beside them, so the
numbers the page prints are the ones computed here. Python computes, JavaScript draws.

Payloads follow :func:`lessonpy.maths.show.show_attention`'s shape (``view``, ``title``, ``tokens``,
``arrays``, ``stats``).
"""

from __future__ import annotations

import math

import numpy as np

from ...maths import lookup
from ...maths.attention import (EXAMPLE_TOKENS, attention_param_count, example_inputs, multi_head_attention,
                                row_entropy, softmax, split_heads)
from ...maths.score_draws import unit_draws
from ...maths.show import build_payload
from ...models import ablation, realheads
from ...runtime.limits import WIDGET_LIMITS  # the page's limits: every room may read them (tests/unit/test_layers.py)
from . import cat_example, trained_head
from .hand_heads import HAND_HEADS, hand_heads

__all__ = ["attention_example", "explore", "heads", "real_heads", "real_head_example", "divisors", "head_counts",
           "SATURATED", "prerender_view", "prerender_explorer", "prerender_heads", "prerender_real_heads",
           "prerender_lookup", "real_heads_build_options", "check_view", "check_heads"]

#: A row whose largest weight is above this is "saturated": nearly one-hot.
SATURATED = 0.9

#: What each widget (and a call from the page) may ask for: lessonpy.runtime.limits, shared with the page.
VIEW, EXPLORER, HEADS = (WIDGET_LIMITS[name] for name in ("attention-view", "dk-explorer", "heads"))


def tokens_for(T):
    """T word labels from the example sentence (t16, t17, ... past its end)."""
    return [EXAMPLE_TOKENS[i] if i < len(EXAMPLE_TOKENS) else f"t{i}" for i in range(T)]


def _check_int(name, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)) or value != int(value):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, got {value}")
    return value


# -----------------------------------------------------------------------------
# attention-view and step-through: a small seeded self-attention problem


def attention_example(T=6, d_k=8, seed=0, tokens=None, title=None, target=None, causal=False):
    """The show_attention payload of a seeded (T, d_k) example: Q = x W_q, K = x W_k, V = x W_v.

    Exactly what a cell calling ``show_attention(Q=Q, K=K, V=V, tokens=...)`` on
    ``example_inputs(T, d_k, seed)`` would send (scores scaled by 1/sqrt(d_k)); with *causal*, what it sends
    given those scores with -inf above the diagonal (``scores=``), so each query weighs only itself and
    earlier keys.
    """
    T = _check_int("T", T, *VIEW["T"])
    d_k = _check_int("d_k", d_k, *VIEW["d_k"])
    ex = example_inputs(T, d_k, seed)
    x = ex["x"]  # (T, d_k)
    Q, K, V = x @ ex["W_q"], x @ ex["W_k"], x @ ex["W_v"]  # (T, d_k) each
    scores = None
    if causal:
        scores = np.where(np.tril(np.ones((T, T), dtype=bool)), Q @ K.T / math.sqrt(d_k), -np.inf)
    return build_payload(Q=Q, K=K, V=V, scores=scores, tokens=list(tokens) if tokens else ex["tokens"],
                          title=title, target=target)


# -----------------------------------------------------------------------------
# dk-explorer: how d_k, the 1/sqrt(d_k) scaling, temperature and a causal mask shape softmax


def explore(d_k=64, scale=True, temperature=1.0, causal=False, T=8, seed=0, target=None):
    """The dk-explorer's call: the example's scores and weights, and the numbers printed beside them.

    q and k have unit-variance entries (see tests/support/sweep_reference.py), one draw per seed,
    so moving a slider changes only what the slider controls.
    """
    d_k = _check_int("d_k", d_k, *EXPLORER["d_k"])
    T = _check_int("T", T, *EXPLORER["T"])
    temperature = float(temperature)
    lo, hi = EXPLORER["temperature"]
    if not lo <= temperature <= hi:
        raise ValueError(f"temperature must be between {lo} and {hi}, got {temperature}")
    # the same unit-variance q, k as the reference sweep in tests/support/sweep_reference.py (cached: a slider move costs
    # one (n, T, T) softmax, not a fresh draw)
    n_trials = max(1, -(-256 // T))  # ceil(256 / T): 256 softmax rows in all
    scores = unit_draws(seed, n_trials, T).raw_scores(d_k)  # (n, T, T), q @ k.T
    if scale:
        scores = scores / math.sqrt(d_k)  # unit variance again
    scores = scores / temperature
    if causal:
        allowed = np.tril(np.ones((T, T), dtype=bool))  # query i sees keys 0..i
        scores = np.where(allowed, scores, -np.inf)
    p = softmax(scores, axis=-1)  # (n, T, T), each row sums to 1 over the keys it may see

    s0, p0 = scores[0], p[0]  # the example drawn on the page: the first sequence
    finite0 = s0[np.isfinite(s0)]
    finite = scores[np.isfinite(scores)]
    entropy0 = row_entropy(p0)  # (T,)
    max0 = p0.max(axis=-1)  # (T,)
    visible = np.arange(1, T + 1) if causal else np.full(T, T)  # keys each query may see
    stats = {
        "d_k": d_k, "scale": bool(scale), "temperature": temperature, "causal": bool(causal),
        "T": T, "seed": seed, "n_trials": n_trials, "log_T": math.log(T),
        # the example on the page
        "score_min": float(finite0.min()), "score_max": float(finite0.max()),
        "score_std": float(finite0.std()),
        "row_entropy": [float(e) for e in entropy0],
        "row_max_entropy": [math.log(v) for v in visible],  # log of the keys it may see
        "max_weight": [float(m) for m in max0],
        "argmax": [int(j) for j in p0.argmax(axis=-1)],
        "row_sums": [float(s) for s in p0.sum(axis=-1)],
        "saturated_rows": int((max0 > SATURATED).sum()),
        "max_max_weight": float(max0.max()),
        # over all n_trials sequences (the same numbers as the reference sweep in tests/support/sweep_reference.py)
        "all_score_std": float(finite.std()),
        "mean_entropy": float(row_entropy(p).mean()),
        "mean_max_weight": float(p.max(axis=-1).mean()),
        "frac_saturated": float((p.max(axis=-1) > SATURATED).mean()),
    }
    how = "scores / √d_k" if scale else "unscaled scores"
    title = (f"d_k = {d_k}, {how}" + (f", temperature {temperature:g}" if temperature != 1 else "")
             + (", causal mask" if causal else ""))
    return {
        "view": "attention", "widget": "dk-explorer", "target": target,
        "title": title, "tokens": tokens_for(T),
        "arrays": {"scores": s0.astype(np.float32), "weights": p0.astype(np.float32)},
        "stats": stats,
    }


# -----------------------------------------------------------------------------
# heads: one input, H attention patterns, the same 4 C^2 parameters


def divisors(n):
    """The head counts C splits into evenly: every H with C % H == 0."""
    return [h for h in range(1, n + 1) if n % h == 0]


def head_counts(C):
    """The head counts the widget offers for width C: the divisors of C up to its most heads."""
    return [h for h in divisors(C) if h <= HEADS["H"][1]]


def _heads_weights(C, T, seed):
    """x (1, T, C) and the projections in the lesson's `heads` cell's layout, x @ W: W_qkv (C, 3C), W_o (C, C),
    seeded."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, T, C))
    # entries ~ N(0, 1/C) so q, k, v entries have variance ~1 (a sum of C unit products / C)
    W_qkv = rng.standard_normal((C, 3 * C)) / math.sqrt(C)
    W_o = rng.standard_normal((C, C)) / math.sqrt(C)
    return x, W_qkv, W_o


def heads(n_head=4, C=48, T=8, seed=0, target=None):
    """The heads widget's call: the H random heads' patterns (H, T, T) and the two hand-built heads'
    (2, T, T), with the split's shapes and counts, named as in the lesson's `heads` cell (W_qkv, W_o)."""
    C = _check_int("C", C, *HEADS["C"])
    T = _check_int("T", T, *HEADS["T"])
    H = _check_int("n_head", n_head, *HEADS["H"])
    if C % H:
        raise ValueError(f"C={C} does not split into {H} heads; choose one of {head_counts(C)}")
    x, W_qkv, W_o = _heads_weights(C, T, seed)
    # multi_head_attention takes nn.Linear's (out, in) layout: the transposes of the cell's x @ W ones
    y, weights = multi_head_attention(x, W_qkv.T, W_o.T, H, return_weights=True)  # (1,T,C), (1,H,T,T)
    q = x @ W_qkv[:, :C]  # (1, T, C): the queries before the split
    q_heads = split_heads(q, H)  # (1, H, T, D)
    w = weights[0]  # (H, T, T)
    tokens = tokens_for(T)
    hand = hand_heads(tokens)  # (2, T, T): built by hand, for contrast with the random heads
    counted = int(W_qkv.size + W_o.size)
    stats = {
        "B": 1, "T": T, "C": C, "H": H, "D": C // H,
        "x_shape": list(x.shape), "heads_shape": list(q_heads.shape),
        "weights_shape": list(weights.shape), "y_shape": list(y.shape),
        "param_count": attention_param_count(C),  # 4 C^2, from the formula
        "counted": counted,  # W_qkv.size + W_o.size, from the arrays themselves
        "param_shapes": {"W_qkv": list(W_qkv.shape), "W_o": list(W_o.shape)},
        "divisors": head_counts(C),
        "head_entropy": [float(e) for e in row_entropy(w).mean(axis=-1)],  # mean over queries
        "log_T": math.log(T),
        "tokens": tokens,
        # the hand-built heads do not depend on H: the same two patterns for every choice
        "hand_heads": [{"name": name, "description": about, "entropy": float(row_entropy(p).mean())}
                       for (name, about), p in zip(HAND_HEADS.items(), hand)],
    }
    return {
        "view": "heads", "widget": "heads", "target": target,
        "title": f"{H} head{'s' if H > 1 else ''} of size D = {C // H}", "tokens": tokens,
        "arrays": {"weights": w.astype(np.float32),  # (H, T, T): one pattern per random head
                   "hand_weights": hand.astype(np.float32)},  # (2, T, T): the hand-built heads
        "stats": stats,
    }


# -----------------------------------------------------------------------------
# real-heads: every head of a trained model on one sentence, from the shipped data


def real_heads(model="minilm", sentence=0, target=None):
    """The real-heads widget's call: :func:`lessonpy.models.realheads.grid_payload` (weights (L, H, T, T) as
    stored, featured heads with their jobs and scores) plus the model's sentences for the picker."""
    heads = realheads.load(model)  # unknown model: HeadsError, whose message names the models
    s = _check_int("sentence", sentence, 0, len(heads.sentences) - 1)
    return {**realheads.grid_payload(heads, s, target), "widget": "real-heads",
            "sentences": [x["text"] for x in heads.sentences]}


def real_head_example(cell, title=None, target=None):
    """The picture an attention-view shows before the "your attention on a real head" cell *cell* runs (a key
    of realheads.CELL_HEADS): what the cell draws, its softmax of the featured head's scores from the stored Q
    and K (masked for a causal model, :func:`lessonpy.models.realheads.reader_attention`), beside those scores, on the cell's
    sentence. Not V and the output: (T, D) twice as JSON would add about 10 KB (gzipped) to every page view;
    the cell draws them."""
    model, job, s = realheads.CELL_HEADS[cell]
    heads = realheads.load(model)
    f = heads.featured_head(job)
    scores, mine = realheads.reader_attention(heads, s, job)  # the scores computed once, for both pictures
    return build_payload(scores=scores, weights=mine, tokens=heads.tokens(s),
                         target=target, title=title or f"{heads.meta['title']}: layer {f['layer']}, head {f['head']} (from 0)")


def real_heads_prerender(model="minilm", sentence=0, job=None, target=None, ablation_view=True):
    """The real-heads widget's picture before Python loads, computed at build time from the committed data:
    the sentence and the featured head *job* (default: the model's first) as stored, and what it writes
    (:meth:`lessonpy.models.realheads.Heads.written`), without the whole grid
    (L x H x T x T numbers would weigh on every page view; the page asks Python for them), and, when the widget
    shows it (*ablation_view*), the whole of its ablation view (:func:`lessonpy.models.ablation.payload`: fixed data,
    2 KB gzipped), drawn with the widget, so it never arrives later to push the page down under the reader."""
    heads = realheads.load(model)
    s = _check_int("sentence", sentence, 0, len(heads.sentences) - 1)
    f = heads.featured_head(job or heads.featured[0]["job"])
    grid = realheads.grid_payload(heads, s, target)
    del grid["arrays"]
    return {**grid, "widget": "real-heads", "sentences": [x["text"] for x in heads.sentences],
            "models": [{"name": name, "title": realheads.load(name).meta["title"]} for name in realheads.MODELS],
            "open": {"layer": f["layer"], "head": f["head"], "job": f["job"],
                     "weights": heads.pattern(s, f["layer"], f["head"]),
                     "written": heads.written(s)[f["layer"], f["head"]]},
            **({"ablation": ablation.payload(target=target)} if ablation_view else {})}


# -----------------------------------------------------------------------------
# the build's side: each widget's spec (static/js/page/widgets/<name>/spec.yml) names its prerender, which the build
# calls with the fence's validated options for the picture drawn before Python loads, and its check, which says
# what two options together get wrong: [(option, message)], filling in what follows (T from the tokens)


def prerender_view(o, target=None):
    """attention-view's and step-through's first picture: the seeded example, or the one *o*["example"] names."""
    if o.get("example") == "cat":  # the lesson's hand-built "the cat sat because it was warm"
        return cat_example.payload(title=o.get("title"), target=target)
    if o.get("example") == "trained-head":  # the head the "train-head" cell trains
        return trained_head.payload(title=o.get("title"), target=target)
    if o.get("example") in realheads.CELL_HEADS:  # a trained head, before its cell runs
        return real_head_example(o["example"], title=o.get("title"), target=target)
    return attention_example(T=o.get("T", 6), d_k=o.get("d_k", 8), seed=o.get("seed", 0),
                             tokens=o.get("tokens"), title=o.get("title"), target=target,
                             causal=o.get("causal", False))


def prerender_explorer(o, target=None):
    return explore(d_k=o.get("d_k", 64), scale=o.get("scale", True), temperature=o.get("temperature", 1.0),
                   causal=o.get("causal", False), T=o.get("T", 8), seed=o.get("seed", 0), target=target)


def prerender_heads(o, target=None):
    return heads(n_head=o.get("heads", 4), C=o.get("C", 48), T=o.get("T", 8), seed=o.get("seed", 0), target=target)


def prerender_real_heads(o, target=None):
    return real_heads_prerender(model=o.get("model", "minilm"), sentence=o.get("sentence", 0), job=o.get("head"),
                                target=target, ablation_view=o.get("ablation", True))


def prerender_lookup(o, target=None):
    """The lesson's keys, values and query (its "lookup" cell), at every temperature."""
    return lookup.build_lookup_payload(**lookup.EXAMPLE, title=o.get("title"), target=target)


def real_heads_build_options(site):
    """What the build adds to a real-heads widget's options from the *site* it builds (build.py): the live files'
    sizes and sha256 (None: left out) and their folder, from the page; the sentence the lesson's numbers about
    changed heads were computed on (lessonpy.models.sentence_changes); MiniLM's layers and heads, for the live
    panel's head choices (lessonpy.models.minilm's, one definition)."""
    from ...models import live, minilm  # the build's: the page imports them only for the live panel
    return {"live_files": site.get("live_files"), "live_url": site.get("live_url"), "live_sentence": live.SENTENCE,
            "live_shape": [minilm.LAYERS, minilm.HEADS]}


def check_view(o, given):
    """attention-view's and step-through's options together (*given*: the keys the fence set); sets T."""
    problems = []
    if o.get("tokens") is not None:
        if "T" in given and len(o["tokens"]) != o["T"]:
            problems.append(("tokens", f"tokens has {len(o['tokens'])} words but T is {o['T']}"))
        lo, hi = VIEW["T"]
        if not lo <= len(o["tokens"]) <= hi:
            problems.append(("tokens", f"tokens needs {lo} to {hi} words, got {len(o['tokens'])}"))
        o["T"] = len(o["tokens"])
    example = o.get("example", "seeded")
    if example != "seeded" and (o.get("tokens") is not None or "T" in given):
        what = "a real head's" if example in realheads.CELL_HEADS else f"the {example}"
        problems.append(("example", f"{what} example brings its own tokens; drop tokens and T"))
    if example == "cat":
        o["T"] = len(cat_example.SENTENCE)
    elif example == "trained-head":
        o["T"] = trained_head.T
    if o.get("causal") and example != "seeded":
        problems.append(("causal", f"causal masks the seeded example; the {example} example brings its own pattern"))
    if o.get("row") is not None and o["row"] >= o["T"]:
        problems.append(("row", f"row {o['row']} is past the last position ({o['T'] - 1})"))
    return problems


def check_heads(o, given):
    """The heads widget's options together: C must split into the heads."""
    if o["C"] % o["heads"]:
        return [("heads", f"C={o['C']} does not split into {o['heads']} heads; choose one of {head_counts(o['C'])}")]
    return []
