"""Every number the attention lesson's text states, computed here rather than typed in.

``lessons/attention.md`` names this module in its front matter (``numbers:``); the build
calls :func:`numbers` and fills each ``{{ num.NAME }}`` of the text with the value.
The experiments below repeat, draw for draw, what the lesson's code cells run (same
seeds, same shapes, same order of random draws), so the text and the cells agree.
:data:`CELL_PRINTS` says which numbers each cell prints; the tests run the cells
(in CPython, and in the browser with Pyodide) and check each one appears in the
cell's output, so changing a cell without changing this file fails a test.

Pure NumPy, seeded with ``np.random.default_rng`` (PCG64 streams are the same in
CPython's numpy 2.x and Pyodide's numpy 2.0.2).
"""

from __future__ import annotations

import math

import numpy as np

from lessonpy.course.attention import cat_example as cat
from lessonpy.course.attention import first_token_writes, trained_head, trained_it
from lessonpy.maths.attention import row_entropy as entropy  # the lesson's cells write these two out; same results
from lessonpy.maths.attention import softmax
from lessonpy.models import ablation, head_tests, live, realheads, sentence_changes

# the lesson's settings, shared by the cells and this module
DRAFT_SEED = 6  # Step 2, the draft's experiment
DRAFT_T, DRAFT_DK = 4, 64
FIXED_SEEDS = 200  # the fixed experiment's row entropies: 200 seeds x 4 rows
LOOKUP = {"keys": ((1.0, 0.0), (0.0, 1.0), (0.7, 0.7)), "values": (10.0, 20.0, 30.0), "query": (1.0, 0.2),
          "spreads": (1, 4, 16, 64)}
INIT_SEED, INIT_C, INIT_D, INIT_T, INIT_DRAWS = 1, 768, 64, 16, 20
GPT2_INIT_STD = 0.02  # GPT-2's weights ~ N(0, 0.02^2) (transformers' GPT2Config.initializer_range)
GPT2_DROPOUT = 0.1  # GPT-2's attn/resid/embd dropout (GPT2Config.*_pdrop)
SWEEP_SEED, SWEEP_T, SWEEP_ROWS = 0, 8, 256
SWEEP_DKS = (4, 16, 64, 256, 1024)
GPT2 = {"n_embd": 768, "n_head": 12, "n_layer": 12, "vocab_size": 50257, "block_size": 1024}
BIG_SCORES = (1000.0, 999.0, 998.0)

#: cell id -> the numbers (keys of :func:`numbers`) that cell prints
CELL_PRINTS = {
    "lookup": ["lookup_spread_last", "lookup_answer_first", "lookup_answer_last", "lookup_jac_first",
               "lookup_jac_last"],
    "draft": ["draft_min", "draft_max", "draft_nan_rows"],
    "draft-scaled": ["draft_scaled_std", "draft_scaled_maxw_mean", "draft_scaled_entropy_mean", "draft_log_T"],
    "draft-why": ["draft_q_var"],
    "draft-fixed": ["fixed_q_var", "fixed_std", "fixed_rows", "fixed_entropy_mean", "fixed_entropy_std"],
    "init-rules": ["init_log_T", "init_d_qvar", "init_d_std", "init_d_top", "init_c_qvar", "init_c_std",
                   "init_gpt2_qvar", "init_gpt2_std", "init_gpt2_entropy",
                   "init_torch_qvar", "init_torch_std", "init_torch_entropy"],
    "sweep": ["sweep_log_T", "sweep_raw_std_first", "sweep_raw_std_last", "sweep_scaled_std_last",
              "sweep_raw_entropy_first", "sweep_raw_entropy_last", "sweep_scaled_entropy_last",
              "sweep_raw_maxw_last", "sweep_scaled_maxw_last",
              "sweep_raw_jac_first", "sweep_raw_jac_256", "sweep_raw_jac_last", "sweep_scaled_jac_last"],
    "overflow": ["exp_limit", "stable_big0"],
    "params": ["attn_params", "attn_params_12", "attn_weights_h12", "attn_weights_h1"],
    # averaging, the cat example, order, cost
    "average": ["avg_uniform_w"],
    "cat": ["cat_score", "cat_weight", "cat_flat", "cat_out_noun", "cat_it_pronoun"],
    "cat-break": ["cat_flat", "cat_sat_cat", "cat_sat_sat"],
    "permute": ["cat_weight"],
    "cost": ["cost_mib_first", "cost_mib_last", "cost_gpt2_share", "cost_gpt2_mib"],
}
CELL_PRINTS.update(realheads.CELL_PRINTS)  # the "Real heads" section's cells
CELL_PRINTS.update(trained_it.CELL_PRINTS)  # the hand-built "it -> cat" asked of the trained models
CELL_PRINTS.update(trained_head.CELL_PRINTS)  # Step 3's "A head learns its job"



def make_qk(w_std, seed=DRAFT_SEED, T=DRAFT_T, d_k=DRAFT_DK):
    """The cell "draft"'s ``make_qk``: q and k of T random tokens, projection entries ~ N(0, w_std**2)."""
    rng = np.random.default_rng(seed)
    W_q = rng.standard_normal((d_k, d_k)) * w_std
    W_k = rng.standard_normal((d_k, d_k)) * w_std
    x = rng.standard_normal((T, d_k))
    return x @ W_q, x @ W_k


def draft_experiment(seed=DRAFT_SEED, T=DRAFT_T, d_k=DRAFT_DK, n_seeds=FIXED_SEEDS):
    """Step 2's experiment: projections with N(0, 1) entries, then N(0, 1/fan_in) (fan_in = d_k here)."""
    q, k = make_qk(1.0, seed, T, d_k)
    s = q @ k.T
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True)
    s_scaled = s / np.sqrt(d_k)
    w = softmax(s_scaled)
    qf, kf = make_qk(1 / np.sqrt(d_k), seed, T, d_k)
    sf = qf @ kf.T / np.sqrt(d_k)
    rows = np.concatenate([entropy(softmax(a @ b.T / np.sqrt(d_k)))
                           for a, b in (make_qk(1 / np.sqrt(d_k), s_, T, d_k) for s_ in range(n_seeds))])
    return {
        "min": float(s.min()), "max": float(s.max()), "nan_rows": int(np.isnan(naive).any(axis=-1).sum()),
        "scaled_std": float(s_scaled.std()), "scaled_maxw_mean": float(w.max(axis=-1).mean()),
        "scaled_entropy_mean": float(entropy(w).mean()), "log_T": math.log(T), "q_var": float(q.var()),
        "fixed_q_var": float(qf.var()), "fixed_std": float(sf.std()),
        "fixed_rows": rows,
    }


def sweep(seed=SWEEP_SEED, T=SWEEP_T, n=SWEEP_ROWS, d_ks=SWEEP_DKS):
    """Step 2's "sweep" cell: unit-variance q and k, raw vs scaled scores, for each d_k."""
    rng = np.random.default_rng(seed)
    rows = []
    for d_k in d_ks:
        q = rng.standard_normal((n, T, d_k))
        k = rng.standard_normal((n, T, d_k))
        s = q @ k.transpose(0, 2, 1)
        row = {"d_k": d_k}
        for name, z in (("raw", s), ("scaled", s / np.sqrt(d_k))):
            p = softmax(z)
            size = jacobian_size(p)
            row[f"{name}_std"] = float(z.std())
            row[f"{name}_entropy"] = float(entropy(p).mean())
            row[f"{name}_maxw"] = float(p.max(axis=-1).mean())
            row[f"{name}_jac"] = float(np.median(size))
            row[f"{name}_jac_max"] = float(size.max())
            row[f"{name}_jac_tiny"] = float((size < 1e-3).mean())  # share of rows passing almost nothing
        rows.append(row)
    return rows


def jacobian_size(p):
    """Frobenius norm of each row's softmax Jacobian diag(p) - p p^T, as the "sweep" cell has it: (..., T) -> (...)."""
    J = p[..., :, None] * (np.eye(p.shape[-1]) - p[..., None, :])
    return np.sqrt((J ** 2).sum(axis=(-2, -1)))


def lookup():
    """The "lookup" cell: one query against three keys, the scores spread by growing factors."""
    keys, values, query = (np.array(LOOKUP[k]) for k in ("keys", "values", "query"))
    rows = []
    for spread in LOOKUP["spreads"]:
        p = softmax(spread * (keys @ query))
        J = np.diag(p) - np.outer(p, p)
        rows.append({"spread": spread, "weights": p, "answer": float(p @ values), "jac": float(np.linalg.norm(J))})
    return rows


def init_rules(seed=INIT_SEED, C=INIT_C, D=INIT_D, T=INIT_T, n=INIT_DRAWS):
    """The "init-rules" cell, draw for draw: four ways to initialise W_q and W_k at GPT-2's sizes."""
    rng = np.random.default_rng(seed)
    bound = 1 / np.sqrt(C)
    draw = {
        "d": lambda: rng.normal(0, 1 / np.sqrt(D), (C, D)),
        "c": lambda: rng.normal(0, 1 / np.sqrt(C), (C, D)),
        "gpt2": lambda: rng.normal(0, GPT2_INIT_STD, (C, D)),
        "torch": lambda: rng.uniform(-bound, bound, (C, D)),
    }
    out = {}
    for name, make in draw.items():
        stats = []
        for _ in range(n):
            x = rng.standard_normal((T, C))
            q, k = x @ make(), x @ make()
            s = q @ k.T / np.sqrt(D)
            p = softmax(s)
            stats.append((q.var(), s.std(), p.max(axis=-1).mean(), entropy(p).mean()))
        out[name] = dict(zip(("qvar", "std", "top", "entropy"), map(float, np.mean(stats, axis=0))))
    return out


def gpt2_small_params(n_embd=768, n_head=12, n_layer=12, vocab_size=50257, block_size=1024):
    """Parameters of GPT-2 small as this course builds it (no biases, tied input/output embedding).

    token + position embeddings, then per block: attention 4C^2, MLP 8C^2 (C -> 4C -> C),
    two LayerNorm weights 2C; then a final LayerNorm. (GPT-2 itself also had biases: +102,144.)
    """
    C = n_embd
    block = 4 * C * C + 8 * C * C + 2 * C
    return vocab_size * C + block_size * C + n_layer * block + C


# ----------------------------------------------------------------------------- worked examples and cost
# Attention as averaging, "the cat sat because it was warm" by hand
# (its arrays live in lessonpy.course.attention.cat_example), permutation equivariance, and the T^2 cost.

#: the warm-up's value rows: (4, 2)
AVG_VALUES = np.array([[1.0, 0.0], [3.0, 2.0], [5.0, 1.0], [7.0, 5.0]])

COST_TS = (128, 256, 512, 1024, 2048)
COST_D = 64


def averaging():
    """The warm-up: uniform weights and the running mean (lower triangle), as W @ V."""
    n = len(AVG_VALUES)
    uniform = np.full((n, n), 1 / n)
    running = np.tril(np.ones((n, n)))
    running /= running.sum(axis=1, keepdims=True)
    return {"uniform": uniform, "running": running,
            "uniform_out": uniform @ AVG_VALUES, "running_out": running @ AVG_VALUES}


def cat_example():
    """The hand-built example (cell "cat"), its two breaks ("cat-break") and its shuffle ("permute")."""
    X, W_q, W_k, W_v = cat.X, cat.W_Q, cat.W_K, cat.W_V
    it, cat_at, sat = (cat.SENTENCE.index(w) for w in ("it", "cat", "sat"))
    scores, weights, out = cat.attend(X, W_q, W_k, W_v)
    silent = W_q.copy()
    silent[2] = 0  # the pronoun asks nothing
    _, w_silent, _ = cat.attend(X, silent, W_k, W_v)
    rival = X.copy()
    rival[sat, 0] = 1  # "sat" tagged as a noun
    _, w_rival, _ = cat.attend(rival, W_q, W_k, W_v)
    _, w_perm, out_perm = cat.attend(X[cat.PERM], W_q, W_k, W_v)
    return {
        "scores": scores, "weights": weights, "out": out, "it": it, "cat": cat_at, "sat": sat,
        "w_silent": w_silent, "w_rival": w_rival,
        "w_perm": w_perm, "out_perm": out_perm, "shuffled": [cat.SENTENCE[i] for i in cat.PERM],
    }


def weights_mib(T, itemsize):
    """Size of one (T, T) weights matrix in MiB."""
    return T * T * itemsize / 2**20


def numbers():
    """Every number the lesson's text states, formatted the way the text shows it."""
    d = draft_experiment()
    look = lookup()
    jac_ratio = look[0]["jac"] / look[-1]["jac"]
    init = init_rules()
    rows = sweep()
    first, last = rows[0], rows[-1]
    C, L, H = GPT2["n_embd"], GPT2["n_layer"], GPT2["n_head"]
    attn = 4 * C * C
    total = gpt2_small_params(**GPT2)
    big = np.array(BIG_SCORES)
    return (realheads.numbers() | head_tests.numbers() | ablation.numbers() | sentence_changes.numbers()
            | first_token_writes.numbers()
            | trained_it.numbers() | trained_head.numbers() | {
        "live_others": str(len(live.OTHERS)),  # the fixed sentences the change-heads panel compares with
        # Step 2: the draft's experiment (cells "draft", "draft-scaled", "draft-why", "draft-fixed")
        "draft_seed": str(DRAFT_SEED),
        "draft_min": f"{d['min']:.0f}", "draft_max": f"{d['max']:.0f}",
        "draft_nan_rows": str(d["nan_rows"]),
        "draft_scaled_std": f"{d['scaled_std']:.1f}",
        "draft_log_T": f"{d['log_T']:.3f}",
        "draft_q_var": f"{d['q_var']:.1f}",
        "fixed_q_var": f"{d['fixed_q_var']:.2f}",
        "fixed_std": f"{d['fixed_std']:.2f}",
        "draft_expected_raw_std": f"{DRAFT_DK ** 1.5:.0f}",  # d_k^(3/2)
        "draft_expected_scaled_std": str(DRAFT_DK),  # d_k^(3/2) / sqrt(d_k)
        # Step 2: the honest experiment (cell "sweep")
        "sweep_T": str(SWEEP_T), "sweep_rows": str(SWEEP_ROWS),
        "sweep_log_T": f"{math.log(SWEEP_T):.3f}",
        "sweep_dk_first": str(first["d_k"]), "sweep_dk_last": str(last["d_k"]),
        "sweep_sqrt_dk_last": f"{math.sqrt(last['d_k']):.0f}",
        "sweep_raw_std_first": f"{first['raw_std']:.2f}", "sweep_raw_std_last": f"{last['raw_std']:.2f}",
        "sweep_scaled_std_last": f"{last['scaled_std']:.2f}",
        "sweep_raw_entropy_first": f"{first['raw_entropy']:.3f}",
        "sweep_raw_entropy_last": f"{last['raw_entropy']:.3f}",
        "sweep_scaled_entropy_last": f"{last['scaled_entropy']:.3f}",
        "sweep_raw_maxw_last": f"{last['raw_maxw']:.3f}",
        "sweep_scaled_maxw_last": f"{last['scaled_maxw']:.3f}",
        "sweep_raw_maxw_pct": f"{100 * last['raw_maxw']:.0f}%",
        # Step 2: overflow (cell "overflow")
        "exp_limit": f"{math.log(np.finfo(np.float64).max):.2f}",
        "stable_big0": f"{softmax(big)[0]:.3f}",
        # Step 3 and the maths: the parameter budget (cell "params")
        "head_size": str(C // H),
        "attn_params": attn,
        "attn_params_12": L * attn,
        "attn_params_12_m": f"{L * attn / 1e6:.1f}",
        "gpt2_params": total,
        "gpt2_params_m": f"{total / 1e6:.1f}",
        "attn_share_pct": f"{100 * L * attn / total:.0f}%",
        "qkv_params": 3 * C * C,
        "proj_params": C * C,
        **worked_example_numbers(),
        **cost_numbers(),
        # soft lookup, representative means, init rules, Jacobian, heads' cost
        # cell "lookup"
        "lookup_answer_first": f"{look[0]['answer']:.2f}", "lookup_answer_last": f"{look[-1]['answer']:.2f}",
        "lookup_spread_last": str(look[-1]["spread"]),
        "lookup_jac_first": f"{look[0]['jac']:.5f}", "lookup_jac_last": f"{look[-1]['jac']:.5f}",
        "lookup_jac_ratio": f"{float(f'{jac_ratio:.2g}'):,.0f}",  # to 2 figures: "about 6,500"
        # cells "draft-scaled" and "draft-fixed": means over rows (and seeds) instead of row 0
        "draft_scaled_maxw_mean": f"{d['scaled_maxw_mean']:.3f}",
        "draft_scaled_entropy_mean": f"{d['scaled_entropy_mean']:.3f}",
        "fixed_rows": str(d["fixed_rows"].size),
        "fixed_seeds": str(FIXED_SEEDS),
        "fixed_entropy_mean": f"{d['fixed_rows'].mean():.3f}", "fixed_entropy_std": f"{d['fixed_rows'].std():.3f}",
        # cell "init-rules": 1/D vs 1/C (fan-in) at GPT-2's sizes, and what GPT-2 and nn.Linear do
        "init_log_T": f"{math.log(INIT_T):.3f}",
        **{f"init_{rule}_{stat}": f"{init[rule][stat]:.{places}f}"
           for rule in init for stat, places in (("qvar", 2), ("std", 2), ("top", 3), ("entropy", 3))},
        "gpt2_init_std": f"{GPT2_INIT_STD}", "gpt2_dropout": f"{GPT2_DROPOUT}",
        # cell "sweep": the median row's softmax Jacobian
        "sweep_raw_jac_first": f"{first['raw_jac']:.4f}", "sweep_raw_jac_last": f"{last['raw_jac']:.4f}",
        "sweep_raw_jac_256": f"{rows[-2]['raw_jac']:.4f}", "sweep_scaled_jac_last": f"{last['scaled_jac']:.4f}",
        # cell "params": what heads do cost, H * T^2 attention weights per sequence and layer
        "gpt2_block_size": GPT2["block_size"],
        "attn_weights_h12": H * GPT2["block_size"] ** 2, "attn_weights_h1": GPT2["block_size"] ** 2,
    })


def worked_example_numbers():
    """Numbers of the hand-made examples: the averaging warm-up, the cat (and its breaks and shuffle),
    and the heads widget's two hand-built heads."""
    from lessonpy.course.attention.hand_heads import MATCH_SCORE, hand_heads
    from lessonpy.course.attention.widget_payloads import tokens_for

    avg = averaging()
    c = cat_example()
    it, cat_at, sat = c["it"], c["cat"], c["sat"]
    hand = hand_heads(tokens_for(8))  # the heads widget's default T = 8
    return {
        # warm-up (cell "average")
        "avg_n": str(len(AVG_VALUES)),
        "avg_uniform_w": f"{avg['uniform'][0, 0]:.2f}",
        # the cat (cells "cat", "cat-break", "permute")
        "cat_T": str(len(cat.SENTENCE)),
        "cat_score": f"{c['scores'][it, cat_at]:.2f}",
        "cat_weight": f"{c['weights'][it, cat_at]:.3f}",
        "cat_flat": f"{1 / len(cat.SENTENCE):.3f}",
        "cat_out_noun": f"{c['out'][it, 0]:.2f}",
        # what "it" carries on: its own vector plus the head's output (W_O = identity)
        "cat_it_pronoun": f"{cat.X[it, 2] + c['out'][it, 2]:.2f}",
        "cat_sat_cat": f"{c['w_rival'][it, cat_at]:.3f}",
        "cat_sat_sat": f"{c['w_rival'][it, sat]:.3f}",
        # the heads widget's hand-built heads (T = 8)
        "hand_match_weight": f"{hand[0, 1, 0]:.3f}",
        "hand_match_score": f"{MATCH_SCORE:.0f}",
    }


def cost_numbers():
    """Cell "cost": memory and multiply-adds, counted (timings would measure the machine too)."""
    L, H, C = GPT2["n_layer"], GPT2["n_head"], GPT2["n_embd"]
    gpt2_T = GPT2["block_size"]
    t2 = 2 * gpt2_T**2 * C  # every head's scores and blend in one layer (H * D = C)
    rest = 12 * gpt2_T * C**2  # per token: W_q, W_k, W_v, W_o (4C^2) and the MLP (8C^2)
    return {
        "cost_T_first": str(COST_TS[0]), "cost_T_last": str(COST_TS[-1]), "cost_d": str(COST_D),
        "cost_mib_first": f"{weights_mib(COST_TS[0], 4):.2f}",
        "cost_mib_last": f"{weights_mib(COST_TS[-1], 4):.2f}",
        "cost_cross_T": 3 * C // 2,  # one head: 2 T^2 D = 3 T C D
        "cost_half_T": 6 * C,  # a layer: 2 T^2 C = 12 T C^2
        "cost_gpt2_share": f"{t2 / (t2 + rest):.0%}",
        "cost_gpt2_T": str(gpt2_T),
        "cost_gpt2_heads": str(L * H),
        "cost_gpt2_mib": f"{L * H * weights_mib(gpt2_T, 4):.0f}",
    }
