"""What a head writes, not only where it looks: each key's weight times the size of what that key passes on
through the head (Kobayashi et al., 2020, "Attention is not only a weight").

Head h of a layer adds to query i's position ``sum_j a_ij f_h(x_j)``, with ``f_h(x_j) = v_j W_O^h``: v_j the
head's value vector at key j (for MiniLM it includes the value projection's bias, which is per head), W_O^h
the head's D columns of the output projection (PyTorch's (out, in) layout: input channels hD ... hD + D - 1
are head h's). The output projection's bias is added once per position whatever the heads do: it belongs to
no head and is left out. A key that takes much weight but whose ``f_h(x_j)`` is short adds little, so
``a_ij * ||f_h(x_j)||`` is a better picture of what the head passes on than ``a_ij`` alone.

Where the size is measured: SmolLM2 is pre-norm, so ``sum_j a_ij f_h(x_j)`` is what the head adds to the
residual stream. MiniLM is post-norm: the heads' sum, plus the bias and the residual, then goes through
LayerNorm, which rescales each position as a whole; the norms here are taken before it, as Kobayashi et al.'s
first measure is.

The data (``n<s>`` in ``<model>.npz``, :meth:`lessonpy.models.realheads.Heads.norms`): ``||f_h(x_j)||`` for
every layer, head and key of sentence s, float16 (L, H, T). :func:`written` turns it into the picture.
"""

from __future__ import annotations

import numpy as np


def value_norms(v, w_o, heads):
    """||v_j W_O^h|| for every layer, head and key: float32 (L, H, T).

    *v*: (L, G, T, D) value vectors per key/value head (G = heads for MiniLM; SmolLM2's G = 3 are shared by
    groups of heads // G query heads, as its attention shares them). *w_o*: (L, C, heads * D), each layer's
    output projection in PyTorch's (out, in) layout. Computed in float64 (the sums of 576 products), returned
    as float32."""
    v = np.asarray(v, dtype=np.float64)
    L, G, T, D = v.shape
    w_o = np.asarray(w_o, dtype=np.float64)
    if w_o.shape[0] != L or w_o.shape[2] != heads * D or heads % G:
        raise ValueError(f"v {v.shape} and W_O {w_o.shape} do not fit {heads} heads of {D}")
    out = np.empty((L, heads, T))
    for layer in range(L):
        for h in range(heads):
            f = v[layer, h // (heads // G)] @ w_o[layer, :, h * D:(h + 1) * D].T  # (T, C): what each key passes on
            out[layer, h] = np.linalg.norm(f, axis=-1)
    return out.astype(np.float32)


def written(weights, norms):
    """The weighted patterns: ``a_ij * ||f_h(x_j)||`` divided by the head's largest ``||f_h(x_j)||`` on the
    sentence, float32 (..., T, T) from *weights* (..., T, T) and *norms* (..., T).

    Not divided per row: a row rescaled to sum to 1 would show a query that parks all its weight on a key that
    passes on almost nothing (SmolLM2's first-token head) exactly like one that copies a full vector, which is
    what this view is there to tell apart. One constant per head keeps every cell in 0 ... 1 (so it is drawn on
    the plain pattern's colour scale) and rows comparable: 1 is all the weight on the key that writes most, and a
    dark row is a query to which the head adds little. Each row sums to at most 1; its sum bounds the size of
    what the head adds there, as a fraction of the longest ``||f_h(x_j)||``."""
    norms = np.asarray(norms, dtype=np.float32)
    top = norms.max(-1, keepdims=True)
    scale = np.divide(norms, top, out=np.zeros_like(norms), where=top > 0)
    return (np.asarray(weights, dtype=np.float32) * scale[..., None, :]).astype(np.float32)
