"""MiniLM-L6 (all-MiniLM-L6-v2), a trained BERT-style encoder, in plain NumPy.

6 layers, each: 12 heads of self-attention (width 384, head size 32, no mask:
every token sees every token), then a 2-layer MLP with GELU; LayerNorm after
each, as BERT does ("post-norm"). forward(W, ids) returns every layer's and
head's attention weights, and the Q, K, V they came from; forward(W, ids, knock)
runs it with some heads changed, to measure what the model needs them for.
W is a dict name -> float32 array (PyTorch's names and shapes); ids are token
ids. Shapes: T tokens, C = 384 channels, H = 12 heads, D = C // H = 32.
"""

import numpy as np

LAYERS, HEADS, WIDTH, EPS = 6, 12, 384, 1e-12


def erf(x):
    """Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): NumPy has no erf."""
    s, x = np.sign(x), np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (
        1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return s * (1.0 - poly * np.exp(-x * x))


def gelu(x):
    """Exact GELU, x * Phi(x), Phi the standard normal's CDF (BERT's "gelu")."""
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def layer_norm(x, w, b, eps=EPS):
    """Each row of x (..., C) to mean 0 and variance 1, then scale by w (C,),
    shift by b (C,). eps goes inside the square root, as in nn.LayerNorm."""
    mu = x.mean(-1, keepdims=True)  # (..., 1)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)  # (..., 1): divided by C
    return (x - mu) / np.sqrt(var + eps) * w + b


def linear(x, W, name):
    """x @ W.T + b, with W[name + '.weight'] of shape (out, in) as PyTorch has it."""
    return x @ W[name + ".weight"].T + W[name + ".bias"]


def per_head(x):
    """(T, C) -> (H, T, D): head h owns channels h*D ... (h+1)*D - 1."""
    T = x.shape[0]
    return x.reshape(T, HEADS, WIDTH // HEADS).transpose(1, 0, 2)


def embeddings(W, ids):
    """The first layer's input (T, C) for token ids (T,): the token, position
    and segment-0 embeddings added, then LayerNorm."""
    ids = np.asarray(ids)
    T, positions = len(ids), len(W["embeddings.position_embeddings.weight"])
    if not 1 <= T <= positions:
        raise ValueError(f"MiniLM reads 1 to {positions} tokens at a time, got {T}")
    x = (W["embeddings.word_embeddings.weight"][ids]
         + W["embeddings.position_embeddings.weight"][:T]
         + W["embeddings.token_type_embeddings.weight"][0])
    return layer_norm(x, W["embeddings.LayerNorm.weight"],
                      W["embeddings.LayerNorm.bias"])


def forward(W, ids, knock=None):
    """Run the encoder on token ids (T,). Returns float32 arrays: "weights"
    (L, H, T, T), rows summing to 1; "q", "k", "v" (L, H, T, D); "hidden" (T, C).

    knock changes heads on the way: {(layer, head): change}. "off" knocks the
    head out: its output is zeros, so the layer's output projection gets
    nothing from it (as head_mask did for BERT in transformers 4.x; version 5
    removed it). A number multiplies the
    head's scores before the softmax: 0 gives every key the same weight, 2 a
    sharper pattern; "weights" then holds the changed pattern."""
    x = embeddings(W, ids)
    T = len(x)
    saved = {"weights": [], "q": [], "k": [], "v": []}
    for layer in range(LAYERS):
        changes = {h: c for (l, h), c in (knock or {}).items() if l == layer}
        p = f"encoder.layer.{layer}."
        q = per_head(linear(x, W, p + "attention.self.query"))
        k = per_head(linear(x, W, p + "attention.self.key"))
        v = per_head(linear(x, W, p + "attention.self.value"))
        # (H, T, T), no mask; then a stable softmax over each row
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
        for h, change in changes.items():
            if change != "off":
                scores[h] = scores[h] * change
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights = weights / weights.sum(-1, keepdims=True)
        heads = weights @ v  # (H, T, D)
        for h, change in changes.items():
            if change == "off":
                heads[h] = 0
        merged = heads.transpose(1, 0, 2).reshape(T, WIDTH)
        norm = p + "attention.output.LayerNorm"
        x = layer_norm(x + linear(merged, W, p + "attention.output.dense"),
                       W[norm + ".weight"], W[norm + ".bias"])
        hidden = gelu(linear(x, W, p + "intermediate.dense"))
        norm = p + "output.LayerNorm"
        x = layer_norm(x + linear(hidden, W, p + "output.dense"),
                       W[norm + ".weight"], W[norm + ".bias"])
        for name, value in zip(saved, (weights, q, k, v)):
            saved[name].append(value)
    out = {name: np.stack(vals).astype(np.float32) for name, vals in saved.items()}
    out["hidden"] = x.astype(np.float32)
    return out


def embed(hidden):
    """The sentence's embedding, as all-MiniLM-L6-v2 makes it from forward()'s
    "hidden" (T, C): the mean over the tokens, scaled to length 1. The model
    was trained so that sentences of like meaning point the same way: compare
    two by the dot product of their embeddings (the cosine of their angle)."""
    mean = np.asarray(hidden, dtype=np.float64).mean(0)
    return mean / np.linalg.norm(mean)
