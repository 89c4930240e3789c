"""Every number the causal-mask lesson (``lessons/causal-mask.md``) states, computed here rather than typed in.

The lesson names this module in its front matter (``numbers: causal_mask_numbers``; the build finds it next to
the lesson). Each function below repeats one of the lesson's cells, draw for draw (same seeds, same shapes, same
order of random draws), and :data:`CELL_PRINTS` says which cell prints which number: the tests run the cells and
check that each number appears in its cell's output, so a cell changed without this file fails a test.
"""

from __future__ import annotations

import numpy as np

from lessonpy.models import realheads
from lessonpy.maths.attention import softmax

CHEAT_SEED, CHEAT_VOCAB, CHEAT_T = 5, 50, 12  # cell "cheat"
SEED, T, D = 0, 6, 8  # cell "mask": lesson 4's seeded example, which the causal view pre-renders
LAYER1_SEED = 1  # cell "two-layers"
GQA = {"H": 6, "kv_heads": 2, "d": 4}  # cell "gqa"
COST = {"C": 768, "d": 64, "T": 1024}  # cell "decode-cost": one head of GPT-2 small at its full context
SENTENCE = 3  # SmolLM2's data: the sentence written twice
CACHE_T = 2048  # cell "smollm2-gqa": the cache of one sequence this long

#: cell id -> the names of numbers() that cell prints
CELL_PRINTS = {
    "cheat": ["cheat_right", "cheat_uniform"],
    "mask": ["mask_row1_first", "mask_row1_second"],
    "other-ways": ["after_rowsum_first"],
    "prefix": ["prefix_open_gap"],
    "decode-cost": ["decode_recomputed", "decode_cached", "decode_ratio"],
    "two-layers": ["layer1_moved"],
    "gqa": ["gqa_cached", "gqa_full"],
    "smollm2-gqa": ["smol_heads", "smol_kv_heads", "smol_layer", "smol_head_a", "smol_head_b", "smol_kv_head",
                    "smol_decode_diff", "smol_cache_bytes", "smol_cache_mib"],
}


def masked(scores: np.ndarray) -> np.ndarray:
    """Scores with -inf where the key comes after the query."""
    n = scores.shape[-1]
    return np.where(np.triu(np.ones((n, n), dtype=bool), k=1), -np.inf, scores)


def cheat() -> dict:
    """Cell "cheat": a head wired to read position t + 1 'predicts' every next token but the last."""
    ids = np.random.default_rng(CHEAT_SEED).integers(0, CHEAT_VOCAB, size=CHEAT_T)
    w = softmax(10 * np.eye(CHEAT_T) @ np.eye(CHEAT_T, k=-1).T)
    guess = (w @ np.eye(CHEAT_VOCAB)[ids]).argmax(axis=1)
    return {"cheat_right": int((guess[:-1] == ids[1:]).sum()), "cheat_total": CHEAT_T - 1,
            "cheat_T": CHEAT_T, "cheat_uniform": f"{w[-1].max():.3f}"}


def example() -> dict:
    """Cell "mask": lesson 4's seeded head (lessonpy.maths.attention.example_inputs draws the same)."""
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((T, D))
    W_q, W_k, W_v = rng.standard_normal((3, D, D)) / np.sqrt(D)
    Q, K, V = x @ W_q, x @ W_k, x @ W_v
    return {"x": x, "W": (W_q, W_k, W_v), "Q": Q, "K": K, "V": V, "scores": Q @ K.T / np.sqrt(D)}


def layer(h: np.ndarray, Ws, mask: bool) -> np.ndarray:
    """Cell "two-layers"'s ``layer``: one attention layer added to its input."""
    Wq, Wk, Wv = Ws
    s = (h @ Wq) @ (h @ Wk).T / np.sqrt(h.shape[-1])
    return h + softmax(masked(s) if mask else s) @ (h @ Wv)


def numbers() -> dict:
    ex = example()
    weights = softmax(masked(ex["scores"]))
    after = softmax(ex["scores"]) * np.tril(np.ones((T, T)))
    open_out = softmax(ex["scores"]) @ ex["V"]
    Ws1 = np.random.default_rng(LAYER1_SEED).standard_normal((3, D, D)) / np.sqrt(D)
    moved = np.abs(layer(ex["x"], Ws1, False)[:5] - layer(ex["x"][:5], Ws1, False)).max()
    C, d, T_g = COST["C"], COST["d"], COST["T"]
    recomputed = sum((t + 1) * 2 * C * d for t in range(T_g))
    cached = T_g * 2 * C * d
    out = cheat() | {
        "mask_row1_first": f"{weights[1, 0]:.3f}", "mask_row1_second": f"{weights[1, 1]:.3f}",
        "after_rowsum_first": f"{after[0].sum():.3f}",
        "prefix_open_gap": f"{np.abs(open_out[0] - ex['V'][0]).max():.2f}",
        "decode_recomputed": recomputed, "decode_cached": cached, "decode_ratio": f"{recomputed / cached:.1f}",
        "decode_T": T_g,
        "layer1_moved": f"{moved:.3f}",
        "gqa_heads": GQA["H"], "gqa_kv_heads": GQA["kv_heads"], "gqa_group": GQA["H"] // GQA["kv_heads"],
        "gqa_cached": 2 * GQA["kv_heads"] * GQA["d"], "gqa_full": 2 * GQA["H"] * GQA["d"],
    }
    return out | smollm2()


#: What SmolLM2-135M's config.json adds to the shipped data's shapes (layers, heads, key/value heads, head size):
#: its vocabulary and its MLP's width. Its token embeddings are tied to the output layer.
SMOLLM2_VOCAB, SMOLLM2_MLP = 49152, 1536


def smollm2_params(layers: int, heads: int, kv_heads: int, D: int) -> int:
    """SmolLM2-135M's parameters with *kv_heads* key/value heads: the tied token embeddings, and per layer W_Q
    and W_O (C x C), W_K and W_V (C x kv_heads * D), a SwiGLU MLP (three C x SMOLLM2_MLP matrices), two RMSNorm
    gains; a final RMSNorm. No biases."""
    C = heads * D
    layer = 2 * C * C + 2 * C * kv_heads * D + 3 * C * SMOLLM2_MLP + 2 * C
    return SMOLLM2_VOCAB * C + layers * layer + C


def smollm2() -> dict:
    """Cell "smollm2-gqa": two of SmolLM2's query heads that share one key/value head, decoded with a cache."""
    smol = realheads.Heads.load("smollm2")
    a, b = smol.featured_head("induction"), smol.featured_head("first")
    group = smol.heads // smol.meta["kv_heads"]
    assert a["layer"] == b["layer"] and a["head"] // group == b["head"] // group, "the lesson's pair must share a group"
    Qa, Ka, _ = smol.qkv(SENTENCE, "induction")
    n = len(Qa)
    w_loop = np.zeros((n, n), dtype=np.float32)
    for t in range(n):
        w_loop[t, :t + 1] = softmax(Qa[t] @ Ka[:t + 1].T / np.sqrt(Ka.shape[-1]))
    stored = smol.pattern(SENTENCE, a["layer"], a["head"])
    per_token = 2 * smol.layers * smol.meta["kv_heads"] * smol.head_dim * 2  # bytes, 16-bit numbers
    return {"smol_heads": smol.heads, "smol_kv_heads": smol.meta["kv_heads"], "smol_layers": smol.layers,
            "smol_group": group, "smol_layer": str(a["layer"]), "smol_head_a": str(a["head"]),
            "smol_head_b": str(b["head"]), "smol_kv_head": str(a["head"] // group),
            "smol_decode_diff": f"{np.abs(w_loop - stored).max():.4f}",
            "smol_bound": f"{realheads.WEIGHT_ERROR + realheads.QK_ERROR:.3f}",
            "smol_cache_bytes": per_token, "smol_cache_T": CACHE_T,
            "smol_cache_mib": f"{per_token * CACHE_T / 2**20:.0f}",
            "smol_cache_mib_all": f"{per_token * CACHE_T / 2**20 * group:.0f}"} | gqa_saving(smol)


def gqa_saving(smol) -> dict:
    """What grouped-query attention saves of SmolLM2's parameters: W_K and W_V for its key/value heads instead of
    one per query head."""
    shape = (smol.layers, smol.heads, smol.meta["kv_heads"], smol.head_dim)
    params, full = smollm2_params(*shape), smollm2_params(smol.layers, smol.heads, smol.heads, smol.head_dim)
    return {"smollm2_params": params, "gqa_params_saved": full - params,
            "gqa_params_saved_pct": f"{(full - params) / params:.1%}"}
