"""The transformer block's parts in NumPy: the two norms, GELU, the two MLPs, and the block in its two
arrangements (post-LN and pre-LN), with the parameter counts.

Shapes: T positions, C channels (the residual stream's width), F the MLP's hidden width (4C for GPT-2).
Weights are in PyTorch's nn.Linear layout (out, in), so ``y = x @ W.T``, as in
:func:`lessonpy.maths.attention.multi_head_attention`: the same tensors as a PyTorch module, compared one to one.

One definition of each thing: LayerNorm and the exact GELU are MiniLM's (:mod:`lessonpy.models.minilm`), RMSNorm,
SiLU and SwiGLU are SmolLM2's (:mod:`lessonpy.models.smollm2`); the models' forward passes run these very
functions. What is new here: GPT-2's tanh GELU, the GELU MLP, and the block as two writes to a residual stream.
"""

from __future__ import annotations

import math

import numpy as np

from lessonpy.maths.attention import (attention_param_count, merge_heads, scaled_dot_product_attention,
                                      split_heads)
from lessonpy.models.minilm import gelu as gelu_exact
from lessonpy.models.minilm import layer_norm
from lessonpy.models.smollm2 import rms_norm, silu
from lessonpy.models.smollm2 import swiglu as swiglu_mlp

__all__ = ["layer_norm", "rms_norm", "gelu", "gelu_exact", "silu", "mlp", "swiglu_mlp", "post_ln_block",
           "pre_ln_block", "causal_self_attention", "gpt2_block", "mlp_param_count", "block_param_count", "gpt2_param_count", "GPT2_SMALL"]

# layer_norm(x, gain, bias, eps): (..., C) -> (..., C), each row to mean 0 and variance 1, then x * gain + bias;
#   eps is added to the variance inside the square root, as torch.nn.LayerNorm does.
# rms_norm(x, gain, eps): (..., C) -> (..., C), each row divided by its root mean square, then times gain; no mean
#   is taken away and there is no bias (Zhang & Sennrich, 2019): SmolLM2's, and Llama's.
# gelu_exact(x): x * Phi(x), Phi the standard normal's CDF (erf form: BERT, MiniLM, torch's approximate="none").
# swiglu_mlp(h, gate, up, down): (..., C) -> (..., C), silu(h @ gate.T) * (h @ up.T) @ down.T: SmolLM2's MLP.


def gelu(x):
    """GELU as GPT-2 computes it (its "gelu_new", torch's ``approximate="tanh"``):
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

    A tanh fit of the exact x * Phi(x) (:func:`gelu_exact`, erf form), chosen in 2016 because tanh was cheaper
    than erf; the two differ by less than 5e-4 anywhere (:func:`gelu_forms_gap`), small but not rounding: a
    model must be run with the form it was trained with to reproduce it exactly. GPT-2 used this one, BERT and
    MiniLM the exact one."""
    x = np.asarray(x)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_forms_gap(lo=-10.0, hi=10.0, n=200_001):
    """The largest |gelu(x) - gelu_exact(x)| on a fine grid of [lo, hi], and where it is: (gap, x)."""
    x = np.linspace(lo, hi, n)
    gap = np.abs(gelu(x) - gelu_exact(x))
    return float(gap.max()), float(x[gap.argmax()])


def mlp(x, W_fc, W_proj, b_fc=None, b_proj=None, act=gelu):
    """GPT-2's MLP, on each position alone: (..., C) -> (..., F) -> (..., C), F = 4C in GPT-2.

    W_fc: (F, C), W_proj: (C, F) in nn.Linear's (out, in) layout; biases optional (GPT-2 has them, the course's
    bias-free configuration does not); *act* the nonlinearity (GPT-2's tanh GELU; MiniLM needs
    :func:`gelu_exact`)."""
    h = x @ W_fc.T  # (..., C) @ (C, F) -> (..., F): widen
    if b_fc is not None:
        h = h + b_fc
    h = act(h)  # (..., F): the only nonlinearity of the block outside the softmax
    y = h @ W_proj.T  # (..., F) @ (F, C) -> (..., C): back to the stream's width
    return y if b_proj is None else y + b_proj


def post_ln_block(x, attn, ff, ln_1, ln_2):
    """The original Transformer's arrangement (BERT, MiniLM): add, then normalise.
    x (T, C) -> (T, C); *attn* (T, C) -> (T, C) mixes positions, *ff* (T, C) -> (T, C) works on each position
    alone, *ln_1*, *ln_2* (T, C) -> (T, C) the norms, each with its own weights. The stream itself goes through
    both norms: every layer rescales what came before it."""
    x = ln_1(x + attn(x))  # (T, C)
    return ln_2(x + ff(x))  # (T, C)


def pre_ln_block(x, attn, ff, ln_1, ln_2, writes=None):
    """GPT-2's and SmolLM2's arrangement: normalise a copy, compute, add. x (T, C) -> (T, C), arguments as
    :func:`post_ln_block`. Two writes to the residual stream: attention's, then the MLP's, each added to x; the
    stream itself is never normalised, so anything a layer writes reaches every later layer unchanged.
    *writes*: a dict to which the two writes (T, C) are put, as "attn" and "mlp", to measure them."""
    a = attn(ln_1(x))  # (T, C): what attention writes
    x = x + a
    m = ff(ln_2(x))  # (T, C): what the MLP writes, having read attention's write
    if writes is not None:
        writes["attn"], writes["mlp"] = a, m
    return x + m


def causal_self_attention(x, W_qkv, W_proj, n_head):
    """Lesson 5's causal multi-head attention, bias-free, (..., T, C) -> (..., T, C): W_qkv (3C, C) makes q, k
    and v (rows in that order), W_proj (C, C) mixes the heads' outputs; position t reads positions 0 ... t."""
    q, k, v = (split_heads(t, n_head) for t in np.split(x @ W_qkv.T, 3, axis=-1))  # 3 x (..., H, T, D)
    T = x.shape[-2]
    heads, _ = scaled_dot_product_attention(q, k, v, mask=np.tril(np.ones((T, T), dtype=bool)))  # (..., H, T, D)
    return merge_heads(heads) @ W_proj.T  # (..., T, C)


def gpt2_block(x, W, n_head, eps=1e-5):
    """The course's GPT block (py/scaffold/block.py) in NumPy: :func:`pre_ln_block` of LayerNorm, causal
    attention, LayerNorm and the GELU MLP, from *W*, the module's ``state_dict()`` as NumPy arrays (names
    ``ln_1.weight``, ``attn.in_proj.weight``, ``attn.out_proj.weight``, ``ln_2.weight``, ``mlp.fc.weight``,
    ``mlp.proj.weight``; the biases when the configuration has them). x (..., T, C) -> (..., T, C)."""
    def bias(name):
        return W.get(name + ".bias")

    def norm(name):
        gain = W[name + ".weight"]
        return lambda v: layer_norm(v, gain, 0.0 if bias(name) is None else bias(name), eps)

    def attn(v):
        if bias("attn.in_proj") is not None:
            raise ValueError("gpt2_block's attention has no biases: use the course's bias-free configuration")
        return causal_self_attention(v, W["attn.in_proj.weight"], W["attn.out_proj.weight"], n_head)

    def ff(v):
        return mlp(v, W["mlp.fc.weight"], W["mlp.proj.weight"], bias("mlp.fc"), bias("mlp.proj"))

    return pre_ln_block(x, attn, ff, norm("ln_1"), norm("ln_2"))


# ---------------------------------------------------------------------------- what it costs


def mlp_param_count(n_embd, hidden=None, bias=False):
    """Parameters of the GELU MLP: two matrices C x F (F = 4C unless given): 8C^2 for GPT-2, with F + C biases."""
    C = int(n_embd)
    F = 4 * C if hidden is None else int(hidden)
    return 2 * C * F + ((F + C) if bias else 0)


def block_param_count(n_embd, bias=False):
    """Parameters of one GPT-2 block: attention's 4C^2, the MLP's 8C^2, and two LayerNorms of C gains (and C
    biases each when *bias*): 12C^2 + 2C without biases, 12C^2 + 13C with them (4C in attention, 5C in the MLP,
    4C in the norms)."""
    C = int(n_embd)
    norms = 2 * (2 * C if bias else C)
    return attention_param_count(C, bias=bias) + mlp_param_count(C, bias=bias) + norms


#: GPT-2 small's sizes (transformers' GPT2Config defaults, and the course's GPTConfig in py/scaffold/config.py)
GPT2_SMALL = {"vocab_size": 50257, "block_size": 1024, "n_layer": 12, "n_embd": 768}


def gpt2_param_count(vocab_size=50257, block_size=1024, n_layer=12, n_embd=768, bias=True):
    """Where GPT-2's parameters go, as a dict: ``token_embedding`` (V x C), ``position_embedding``
    (block_size x C), ``blocks`` (n_layer of :func:`block_param_count`), ``final_norm`` (C gains, and C biases),
    ``output`` (0: the output layer is the token embedding, tied), and ``total``. GPT-2 small as released (with
    biases): 124,439,808."""
    C = int(n_embd)
    parts = {"token_embedding": int(vocab_size) * C, "position_embedding": int(block_size) * C,
             "blocks": int(n_layer) * block_param_count(C, bias=bias), "final_norm": 2 * C if bias else C,
             "output": 0}
    parts["total"] = sum(parts.values())
    return parts
