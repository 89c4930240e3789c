"""Real trained layers assembled from the lesson's parts (:mod:`.parts`) and Lesson 4-5's attention
(:mod:`lessonpy.maths.attention`): MiniLM's (post-LN, LayerNorm, GELU MLP, biases) and SmolLM2's (pre-LN,
RMSNorm, causal grouped-query attention with RoPE, SwiGLU MLP, no biases); then SmolLM2's residual stream on a
text: what each layer's attention and MLP write, and the logit lens.

The weights: MiniLM's dict name -> float32 array (:func:`lessonpy.models.safetensors.read_safetensors`, PyTorch's
names), SmolLM2's any object with the methods of :class:`lessonpy.models.smollm2.LiveWeights` (the page's 4-bit
file, or the build's ``sitebuild.realheads.smollm2.Model``). Shapes: T tokens, C channels, H heads, G key/value
heads, D = C // H, V the vocabulary.
"""

from __future__ import annotations

import numpy as np

from lessonpy.maths.attention import merge_heads, scaled_dot_product_attention, split_heads
from lessonpy.models import minilm, smollm2

from .parts import gelu_exact, layer_norm, mlp, post_ln_block, pre_ln_block, rms_norm, swiglu_mlp

# ---------------------------------------------------------------------------- MiniLM: post-LN


def minilm_attention(W, layer):
    """MiniLM's attention in layer *layer* as a function (T, C) -> (T, C): Lesson 4's multi-head attention with
    the biases BERT has on all four projections, no mask."""
    p = f"encoder.layer.{layer}.attention."

    def linear(x, name):  # (T, C) -> (T, C), nn.Linear with its bias
        return x @ W[p + name + ".weight"].T + W[p + name + ".bias"]

    def attn(x):  # (T, C)
        q, k, v = (split_heads(linear(x, "self." + n), minilm.HEADS) for n in ("query", "key", "value"))  # (H, T, D)
        heads, _ = scaled_dot_product_attention(q, k, v)  # (H, T, D): softmax(q k^T / sqrt(D)) v
        return linear(merge_heads(heads), "output.dense")  # (T, C)

    return attn


def minilm_block(W, layer):
    """MiniLM's layer *layer* as a function (T, C) -> (T, C): :func:`.parts.post_ln_block` of its attention, its
    MLP (C -> 4C -> C with the exact GELU, and biases) and its two LayerNorms (eps 1e-12, BERT's)."""
    p = f"encoder.layer.{layer}."

    def norm(name):
        return lambda x: layer_norm(x, W[p + name + ".weight"], W[p + name + ".bias"], minilm.EPS)

    def ff(x):
        return mlp(x, W[p + "intermediate.dense.weight"], W[p + "output.dense.weight"],
                   W[p + "intermediate.dense.bias"], W[p + "output.dense.bias"], act=gelu_exact)

    attn = minilm_attention(W, layer)
    return lambda x: post_ln_block(x, attn, ff, norm("attention.output.LayerNorm"), norm("output.LayerNorm"))


def minilm_hidden(W, ids):
    """MiniLM's last hidden state (T, C) float32 for token ids (T,), through six :func:`minilm_block`."""
    x = minilm.embeddings(W, ids)
    for layer in range(minilm.LAYERS):
        x = minilm_block(W, layer)(x)
    return x.astype(np.float32)


# ---------------------------------------------------------------------------- SmolLM2: pre-LN


def smollm2_attention(m, W):
    """SmolLM2's attention with one layer's weights *W* (``m.layer(i)``) as a function (T, C) -> (T, C): Lesson 5's
    causal attention, with RoPE turning q and k and each group of H // G query heads sharing one key/value head."""
    H, G = m.heads, m.kv_heads

    def attn(h):  # (T, C), already normalised
        T = len(h)
        q = smollm2.rope(split_heads(h @ W["attn_q"].T, H), m.theta)  # (H, T, D)
        k = smollm2.rope(split_heads(h @ W["attn_k"].T, G), m.theta)  # (G, T, D)
        v = split_heads(h @ W["attn_v"].T, G)  # (G, T, D)
        k, v = np.repeat(k, H // G, axis=0), np.repeat(v, H // G, axis=0)  # (H, T, D): query head i reads i // (H/G)
        sees = np.tril(np.ones((T, T), dtype=bool))  # (T, T): a query sees itself and earlier keys
        heads, _ = scaled_dot_product_attention(q, k, v, mask=sees)  # (H, T, D)
        return merge_heads(heads) @ W["attn_output"].T  # (T, C)

    return attn


def smollm2_block(m, layer, writes=None):
    """SmolLM2's layer *layer* as a function (T, C) -> (T, C): :func:`.parts.pre_ln_block` of RMSNorm, its
    attention, RMSNorm and its SwiGLU MLP. *writes*: passed on to :func:`.parts.pre_ln_block`."""
    W = m.layer(layer)

    def norm(name):
        return lambda x: rms_norm(x, W[name], m.eps)

    def ff(h):
        return swiglu_mlp(h, W["ffn_gate"], W["ffn_up"], W["ffn_down"])

    attn = smollm2_attention(m, W)
    return lambda x: pre_ln_block(x, attn, ff, norm("attn_norm"), norm("ffn_norm"), writes)


def smollm2_stream(m, ids):
    """SmolLM2 on token ids (T,), layer by layer through :func:`smollm2_block`, keeping the residual stream.
    Returns float32 arrays: ``stream`` (L + 1, T, C), the embedding then the stream after each layer; ``attn``
    and ``mlp`` (L, T), the length (L2 norm) of what each layer's attention and MLP wrote at each position."""
    x = m.embed(np.asarray(ids))  # (T, C)
    stream, writes = [x], []
    for layer in range(m.layers):
        writes.append({})
        x = smollm2_block(m, layer, writes[-1])(x)
        stream.append(x)
    return {"stream": np.stack(stream).astype(np.float32), **write_lengths(writes)}


def write_lengths(writes):
    """The lengths (L2 norms) of what each layer wrote at each position, float32: ``attn`` and ``mlp`` (L, T),
    from *writes*, one ``{"attn": (T, C), "mlp": (T, C)}`` per layer (what :func:`.parts.pre_ln_block` fills)."""
    return {name: np.stack([np.linalg.norm(w[name], axis=-1) for w in writes]).astype(np.float32)
            for name in ("attn", "mlp")}


def logit_lens(m, stream, top=1):
    """The "logit lens" (nostalgebraist, 2020): what the stream would predict if the model stopped there. Each
    row of *stream* (N, C) (one position's stream after each layer) goes through the final RMSNorm and the
    tied embedding, as the last layer's output does (:func:`lessonpy.models.smollm2.unembed`).

    Returns ``probs`` (N, V), the softmax of each row's logits; ``top`` (N, top), the most likely token ids
    per row; and, for the last row's top token (the model's actual prediction), ``rank`` (N,) (0: it is the
    row's top token) and ``p`` (N,) its probability at each row.

    Caveats: only the last layer was trained to be read this way. The earlier layers' streams are in no way
    obliged to be in the output's basis, so a lens read there says what the final norm and embedding make of
    them, not what the model "thinks" at that depth; the lens is known to be unreliable in early layers and in
    some models altogether. A probe trained per layer (the tuned lens, Belrose et al., 2023) reads earlier
    layers better. Ranks and probabilities here are of a 49,152-way softmax."""
    logits = smollm2.unembed(m, np.asarray(stream, dtype=np.float32)).astype(np.float64)  # (N, V)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    final = int(logits[-1].argmax())
    rank = (logits > logits[:, [final]]).sum(-1)  # (N,): tokens scored above the final prediction
    return {"probs": probs, "top": np.argsort(-logits, axis=-1)[:, :top], "final": final, "rank": rank,
            "p": probs[:, final]}
