"""Two attention heads built by hand, so the heads widget can show specialisation, not claim it.

The heads widget's other heads use random, untrained projections: their patterns show how the
channels are split, not what trained heads learn. These two are real attention heads,
softmax(Q Kᵀ / √d_k), whose W_q and W_k are written by hand over one-hot features:

- previous token: reads *positions* only. The query of position i says "I am at i"; the key of
  position j says "I sit just before j + 1". They match when j = i - 1.
- same token: reads *words* only. Query and key both say "I am word w"; they match wherever the
  same word appears, the position itself included.

Each features matrix has one block per kind of one-hot ([word | position]), the way lesson 3's
input is a token embedding plus a position embedding.
"""

from __future__ import annotations

import math

import numpy as np

from ...maths.attention import scaled_dot_product_attention

__all__ = ["HAND_HEADS", "MATCH_SCORE", "hand_head", "hand_heads"]

#: The scaled score of a match (every other score is 0). With T = 8 keys a match then takes
#: e^8 / (e^8 + 7) ≈ 0.998 of its row: sharp enough to read, still a softmax.
MATCH_SCORE = 8.0

#: name -> one-line description, in the order the widget shows them.
HAND_HEADS = {
    "previous token": "each position looks at the one before it (it reads positions only)",
    "same token": "each position looks at every copy of its own word (it reads words only)",
}


def _features(tokens):
    """x (T, V + T): the one-hot of each position's word, then the one-hot of its position."""
    vocab = sorted(set(tokens))
    T, V = len(tokens), len(vocab)
    x = np.zeros((T, V + T))
    x[np.arange(T), [vocab.index(t) for t in tokens]] = 1.0  # word block
    x[np.arange(T), V + np.arange(T)] = 1.0  # position block
    return x, V


def _projections(name, V, T):
    """Hand-written W_q, W_k of shape (V + T, d_k) for head *name*; d_k = T or V."""
    if name == "previous token":
        W_q = np.zeros((V + T, T))
        W_k = np.zeros((V + T, T))
        W_q[V:, :] = np.eye(T)  # position i asks for slot i
        W_k[V:-1, 1:] = np.eye(T - 1)  # position j answers in slot j + 1: "I come just before j + 1"
    elif name == "same token":
        W_q = np.zeros((V + T, V))
        W_q[:V, :] = np.eye(V)  # word w asks for slot w
        W_k = W_q.copy()  # and answers in slot w
    else:
        raise ValueError(f"unknown hand-built head {name!r}; known: {', '.join(HAND_HEADS)}")
    # a match gives q.k = a^2; scaled by 1/sqrt(d_k) it should be MATCH_SCORE
    d_k = W_q.shape[1]
    a = math.sqrt(MATCH_SCORE * math.sqrt(d_k))
    return a * W_q, a * W_k


def hand_head(name, tokens):
    """The (T, T) attention weights of hand-built head *name* over *tokens*."""
    x, V = _features(tokens)
    W_q, W_k = _projections(name, V, len(tokens))
    Q, K = x @ W_q, x @ W_k  # (T, d_k) each
    _, weights = scaled_dot_product_attention(Q, K, x)  # values do not matter for the pattern
    return weights


def hand_heads(tokens):
    """(len(HAND_HEADS), T, T): every hand-built head's weights over *tokens*, in HAND_HEADS order."""
    return np.stack([hand_head(name, tokens) for name in HAND_HEADS])
