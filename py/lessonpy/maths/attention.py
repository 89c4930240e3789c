"""Attention in plain NumPy: the functions the lesson builds and the page runs.

Everything here runs unchanged in CPython (numpy 2.x) and in the browser
(Pyodide 0.27.7, numpy 2.0.2). Shapes use the lesson's letters:

    B  batch size          T  sequence length (positions, tokens)
    C  embedding size      H  number of heads (n_head)
    D  head size, C // H   d_k, d_v  key/query and value sizes of one head

Two weight layouts appear, on purpose:
- the from-scratch steps write ``Q = x @ W_q`` with ``W_q`` of shape (C, D), the
  way the maths is usually written;
- :func:`multi_head_attention` takes weights in PyTorch's ``nn.Linear`` layout
  (out_features, in_features), so ``y = x @ W.T``. That lets it reuse the exact
  tensors of the PyTorch module and check that both give the same numbers.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "row_entropy",
    "attention_param_count",
    "example_inputs",
    "EXAMPLE_TOKENS",
]


# -----------------------------------------------------------------------------
# the pieces of one attention head


def softmax(x, axis=-1):
    """Turn scores into probabilities along ``axis``; any shape in, same shape out.

    Numerically stable: softmax(x) == softmax(x - c) for any constant c, so we
    subtract each row's max before exponentiating. The largest exponent is then
    exp(0) = 1, so nothing overflows (np.exp(710.0) is already inf in float64,
    and inf / inf = NaN), and at least one term of each sum is 1, so we never
    divide by 0. Masked entries of -inf come out as exactly 0.
    """
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    # a row that is entirely -inf (everything masked) has no finite max: use 0 so
    # the row becomes 0/0 = NaN visibly, instead of -inf - -inf warnings
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, scale=True, temperature=1.0, mask=None):
    """Attention of every query over every key: softmax(Q K^T / sqrt(d_k) / temperature) V.

    Q: (..., T_q, d_k)   K: (..., T_k, d_k)   V: (..., T_k, d_v)
    scale: divide the scores by sqrt(d_k) (True), by nothing (False), or by the
        number you pass (e.g. ``scale=8.0``).
    temperature: further divides the scores; > 1 flattens the weights, < 1 sharpens.
    mask: optional boolean array broadcastable to (..., T_q, T_k); True means
        "may attend", as in torch.nn.functional.scaled_dot_product_attention.
        Masked scores become -inf, so their weights are exactly 0.
    Returns (out, weights): out (..., T_q, d_v), weights (..., T_q, T_k), each
    row of weights summing to 1.
    """
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2)  # (..., T_q, d_k) @ (..., d_k, T_k) -> (..., T_q, T_k)
    if scale is True:
        # q.k sums d_k products: with unit-variance entries its variance is d_k,
        # so dividing by sqrt(d_k) brings the scores back to unit variance
        scores = scores / math.sqrt(d_k)
    elif scale is not False and scale is not None:
        scores = scores / float(scale)
    if temperature != 1.0:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        scores = scores / temperature
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    weights = softmax(scores, axis=-1)  # (..., T_q, T_k), rows sum to 1
    out = weights @ V  # (..., T_q, T_k) @ (..., T_k, d_v) -> (..., T_q, d_v)
    return out, weights


# -----------------------------------------------------------------------------
# many heads at once


def split_heads(x, n_head):
    """Cut the channels into heads: (B, T, C) -> (B, H, T, D), with D = C // H.

    Also works without the batch dimension: (T, C) -> (H, T, D).
    Head h gets channels h*D .. (h+1)*D - 1, exactly like
    ``x.view(B, T, H, D).transpose(1, 2)`` in PyTorch.
    """
    x = np.asarray(x)
    *lead, T, C = x.shape
    if C % n_head != 0:
        raise ValueError(f"C={C} channels do not split evenly into n_head={n_head} heads")
    D = C // n_head
    x = x.reshape(*lead, T, n_head, D)  # (..., T, H, D)
    return np.swapaxes(x, -3, -2)  # (..., H, T, D)


def merge_heads(x):
    """Undo :func:`split_heads`: (B, H, T, D) -> (B, T, C) with C = H * D.

    Also works without the batch dimension: (H, T, D) -> (T, C).
    """
    x = np.asarray(x)
    *lead, H, T, D = x.shape
    x = np.swapaxes(x, -3, -2)  # (..., T, H, D)
    # reshape copies here because the swapped array is not contiguous: the heads
    # of one position end up side by side again, like .contiguous().view() in torch
    return x.reshape(*lead, T, H * D)  # (..., T, C)


def multi_head_attention(x, W_qkv, W_proj, n_head, return_weights=False):
    """NumPy twin of the PyTorch ``MultiHeadAttention`` module (no mask, no dropout).

    x:      (B, T, C) or (T, C)
    W_qkv:  (3C, C), the fused query/key/value projection in nn.Linear layout
            (out, in): rows 0..C-1 make q, rows C..2C-1 make k, the rest make v
    W_proj: (C, C), the output projection, also (out, in)
    Returns y with the shape of x, and also the attention weights
    (B, H, T, T) (or (H, T, T)) when ``return_weights`` is true.
    """
    x = np.asarray(x)
    W_qkv, W_proj = np.asarray(W_qkv), np.asarray(W_proj)
    C = x.shape[-1]
    if W_qkv.shape != (3 * C, C):
        raise ValueError(f"W_qkv should have shape (3C, C) = {(3 * C, C)}, got {W_qkv.shape}")
    if W_proj.shape != (C, C):
        raise ValueError(f"W_proj should have shape (C, C) = {(C, C)}, got {W_proj.shape}")

    qkv = x @ W_qkv.T  # (B, T, C) @ (C, 3C) -> (B, T, 3C)
    q, k, v = np.split(qkv, 3, axis=-1)  # 3 x (B, T, C)
    q = split_heads(q, n_head)  # (B, H, T, D)
    k = split_heads(k, n_head)  # (B, H, T, D)
    v = split_heads(v, n_head)  # (B, H, T, D)
    y, weights = scaled_dot_product_attention(q, k, v)  # (B, H, T, D), (B, H, T, T)
    y = merge_heads(y)  # (B, T, C): the heads' outputs side by side
    y = y @ W_proj.T  # (B, T, C) @ (C, C) -> (B, T, C): mix what the heads found
    return (y, weights) if return_weights else y


# -----------------------------------------------------------------------------
# measuring


def row_entropy(weights):
    """Entropy in nats of each row of attention weights: (..., T_q, T_k) -> (..., T_q).

    0 means all the weight sits on one key (a hard argmax); log(T_k) means the
    weight is spread evenly over all keys. 0 * log(0) counts as 0.
    """
    p = np.asarray(weights, dtype=np.float64)
    # np.where evaluates both branches, so feed log a harmless 1 where p is 0
    plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -np.sum(plogp, axis=-1)


def attention_param_count(n_embd, bias=False):
    """Parameters of one attention block: 4 * C^2 (q, k, v and output projections).

    The count does not depend on n_head: the heads slice the same C x C matrices.
    With ``bias=True`` each of the four projections adds C biases.
    """
    C = int(n_embd)
    return 4 * C * C + (4 * C if bias else 0)


# -----------------------------------------------------------------------------
# seeded example inputs

#: Labels for the example positions; positions past the end are called t16, t17, ...
EXAMPLE_TOKENS = (
    "the", "cat", "sat", "on", "the", "mat", "because", "it",
    "was", "warm", "and", "the", "dog", "was", "not", ".",
)


def example_inputs(T=4, D=8, seed=0):
    """A small, reproducible self-attention problem to play with.

    Returns a dict:
      "tokens": list of T labels
      "x":      (T, D) token vectors, entries ~ N(0, 1)
      "W_q", "W_k", "W_v": (D, D) projections for ``Q = x @ W_q`` (in, out layout),
                entries ~ N(0, 1/fan_in) with fan_in = D (x is D wide), so that
                Q, K, V entries have variance ~1, the regime where dividing
                scores by sqrt(D) gives unit variance
    The same (T, D, seed) always gives the same arrays.
    """
    if T < 1 or D < 1:
        raise ValueError(f"T and D must be at least 1, got T={T}, D={D}")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, D))
    # 1/sqrt(D) keeps each projected entry at variance ~1 (a sum of D terms)
    W_q, W_k, W_v = rng.standard_normal((3, D, D)) / math.sqrt(D)
    tokens = [EXAMPLE_TOKENS[i] if i < len(EXAMPLE_TOKENS) else f"t{i}" for i in range(T)]
    return {"tokens": tokens, "x": x, "W_q": W_q, "W_k": W_k, "W_v": W_v}
