"""SmolLM2-135M (a Llama-style causal decoder) in plain NumPy, from its 4-bit GGUF file. Build time only:
dequantised to float32 it needs about 540 MB, far too much for a page.

Per layer: RMSNorm, then 9 query heads that share 3 key/value heads (grouped-query attention), with
rotary position embeddings (RoPE) on Q and K and a causal mask; RMSNorm, then a SwiGLU MLP. Shapes: T
tokens, C = 576, H = 9 query heads, G = 3 key/value heads, D = 64. The output layer shares the token
embedding matrix (tied embeddings).

GGUF stores each head's Q and K rows permuted for llama.cpp's interleaved RoPE; :func:`load` undoes that,
so Q and K are in the Hugging Face layout and RoPE rotates the pairs (i, i + D/2).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from lessonpy.maths.attention import softmax


class Model:
    """Dequantised float32 weights (PyTorch layout: (out, in)) and the hyper-parameters the file states."""

    def __init__(self, path: Path):
        import gguf  # build-time dependency (requirements-dev.txt)

        reader = gguf.GGUFReader(str(path))
        meta = {name: field.contents() for name, field in reader.fields.items()
                if name.startswith("llama.")}
        self.layers = int(meta["llama.block_count"])
        self.heads = int(meta["llama.attention.head_count"])
        self.kv_heads = int(meta["llama.attention.head_count_kv"])
        self.width = int(meta["llama.embedding_length"])
        self.theta = float(meta["llama.rope.freq_base"])
        self.eps = float(meta["llama.attention.layer_norm_rms_epsilon"])
        self.head_dim = self.width // self.heads
        self.W = {}
        for t in reader.tensors:
            array = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
            self.W[t.name] = array.reshape([int(n) for n in reversed(t.shape)]) if array.ndim > 1 else array
        for layer in range(self.layers):
            for name, n in (("attn_q", self.heads), ("attn_k", self.kv_heads)):
                key = f"blk.{layer}.{name}.weight"
                self.W[key] = unpermute(self.W[key], n)


@functools.lru_cache(maxsize=1)
def cached(path: Path) -> Model:
    """The model of *path*, dequantised once per process (about 10 s and 540 MB)."""
    return Model(path)


def unpermute(w, n_heads):
    """Undo llama.cpp's row order: within a head, GGUF has rows (0, D/2, 1, D/2+1, ...)."""
    out_dim, in_dim = w.shape
    return w.reshape(n_heads, out_dim // n_heads // 2, 2, in_dim).swapaxes(1, 2).reshape(out_dim, in_dim)


def rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def rope(x, theta):
    """Rotary embedding of x (..., T, D): rotate the pair (i, i + D/2) at position t by t * theta^(-2i/D)."""
    T, D = x.shape[-2:]
    freq = theta ** (-np.arange(0, D, 2, dtype=np.float64) / D)  # (D/2,)
    angle = np.arange(T)[:, None] * freq[None, :]  # (T, D/2)
    cos, sin = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
    a, b = x[..., : D // 2], x[..., D // 2:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


def split_heads(a, n):
    """(..., T, n * D) -> (..., n, T, D)."""
    return a.reshape(*a.shape[:-1], n, a.shape[-1] // n).swapaxes(-2, -3)


def block(m: Model, layer, x, knock=None):
    """Layer *layer* on the residual stream x (..., T, C). Returns the new x and the layer's ``weights``
    (..., H, T, T), ``q`` (..., H, T, D), ``k``, ``v`` (..., G, T, D) and ``z`` (..., H, T, D), each head's output
    before the output projection. *knock*, if given, is called as knock(layer, z) and returns the z to use
    instead: how :mod:`sitebuild.realheads.ablate` knocks a head out."""
    W, H, G, D = m.W, m.heads, m.kv_heads, m.head_dim
    T = x.shape[-2]
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    p = f"blk.{layer}."
    h = rms_norm(x, W[p + "attn_norm.weight"], m.eps)
    q = rope(split_heads(h @ W[p + "attn_q.weight"].T, H), m.theta)
    k = rope(split_heads(h @ W[p + "attn_k.weight"].T, G), m.theta)
    v = split_heads(h @ W[p + "attn_v.weight"].T, G)
    k_h, v_h = np.repeat(k, H // G, axis=-3), np.repeat(v, H // G, axis=-3)  # query head i uses kv head i // 3
    scores = q @ k_h.swapaxes(-1, -2) / np.sqrt(D)
    weights = softmax(np.where(future, -np.inf, scores))
    z = weights @ v_h
    if knock is not None:
        z = knock(layer, z)
    x = x + z.swapaxes(-2, -3).reshape(*x.shape) @ W[p + "attn_output.weight"].T
    h = rms_norm(x, W[p + "ffn_norm.weight"], m.eps)
    gate, up = h @ W[p + "ffn_gate.weight"].T, h @ W[p + "ffn_up.weight"].T
    x = x + (gate / (1.0 + np.exp(-gate)) * up) @ W[p + "ffn_down.weight"].T  # SwiGLU: silu(gate) * up
    return x, {"weights": weights, "q": q, "k": k, "v": v, "z": z}


def unembed(m: Model, x):
    """Logits (..., vocab) of the final residual stream x (..., C)."""
    W = m.W
    return rms_norm(x, W["output_norm.weight"], m.eps) @ W.get("output.weight", W["token_embd.weight"]).T


def forward(m: Model, ids, knock=None, keep=("weights", "q", "k", "v")):
    """Run the decoder on token ids (T,), or a batch (B, T). Returns float32 arrays, with a leading B for a
    batch: ``weights`` (L, H, T, T), zero above the diagonal; ``q`` (L, H, T, D) and ``k``, ``v`` (L, G, T, D),
    with RoPE already applied to q and k; whichever else of :func:`block`'s arrays *keep* names, and ``resid``
    (L, T, C), each layer's input, if it names that; ``logits`` (T, vocab). *knock*: see :func:`block`."""
    x = m.W["token_embd.weight"][np.asarray(ids)]
    saved = {name: [] for name in keep}
    for layer in range(m.layers):
        if "resid" in saved:
            saved["resid"].append(x)
        x, arrays = block(m, layer, x, knock)
        for name in saved.keys() - {"resid"}:
            saved[name].append(arrays[name])
    out = {name: np.stack(values, axis=x.ndim - 2).astype(np.float32) for name, values in saved.items()}
    out["logits"] = unembed(m, x)
    return out
