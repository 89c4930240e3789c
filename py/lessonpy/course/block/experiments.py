"""The experiments Lesson 6 quotes, on stacks of random blocks at GPT-2's initialisation, as functions returning
numbers (seeded: the same arguments give the same numbers).

- :func:`first_layer_gradient`: the gradient of a loss with respect to the first layer's input, through a deep
  stack, with and without the residual connection (exact backpropagation, written out: NumPy has no autograd).
- :func:`stream_scale`: the root mean square of the residual stream after each of a stack of random blocks,
  post-LN against pre-LN.

GPT-2's initialisation (Radford et al., 2019; nanoGPT's ``_init_weights``): every weight ~ N(0, 0.02^2), and the
matrices that write to the stream (attention's output projection, the MLP's second matrix) ~ N(0, (0.02 /
sqrt(2 L))^2), L the number of blocks, so the stream's growth over 2L writes does not depend on the depth; norms
with gain 1 and bias 0. Shapes: T positions, C channels, F = 4C.
"""

from __future__ import annotations

import math

import numpy as np

from lessonpy.maths.attention import multi_head_attention

from .parts import gelu, layer_norm, mlp, post_ln_block, pre_ln_block

#: GPT-2's standard deviation for a weight at initialisation
INIT_STD = 0.02
#: the norms' epsilon (GPT-2's, and torch.nn.LayerNorm's default)
EPS = 1e-5


def gpt2_init(rng, n_layer, n_embd, std=INIT_STD):
    """One dict of weights per block, drawn as GPT-2 initialises them (see the module's docstring): ``W_qkv``
    (3C, C), ``W_o`` (C, C), ``W_fc`` (4C, C), ``W_proj`` (C, 4C), in nn.Linear's (out, in) layout. *std*
    None draws every matrix with std 1 / sqrt(its fan-in) instead (LeCun's), so each write is about as large
    as what it reads."""
    C = n_embd

    def draw(shape, writes):
        if std is None:
            return rng.normal(0, 1 / math.sqrt(shape[1]), shape)
        return rng.normal(0, std / math.sqrt(2 * n_layer) if writes else std, shape)

    return [{"W_qkv": draw((3 * C, C), False), "W_o": draw((C, C), True),
             "W_fc": draw((4 * C, C), False), "W_proj": draw((C, 4 * C), True)} for _ in range(n_layer)]


# ---------------------------------------------------------------------------- the gradient through a deep stack


def gelu_grad(x):
    """d gelu(x) / dx for :func:`.parts.gelu`, GPT-2's tanh form (product and chain rules)."""
    k = math.sqrt(2.0 / math.pi)
    t = np.tanh(k * (x + 0.044715 * x ** 3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * x * x)


def layer_norm_grad(y, s, dy):
    """Backpropagate dy (..., C) through y = (x - mean) / s, a LayerNorm with gain 1 and bias 0 whose output was
    y and whose divisor was s (..., 1): the two means come from the mean and the variance depending on every x."""
    return (dy - dy.mean(-1, keepdims=True) - y * (dy * y).mean(-1, keepdims=True)) / s


def first_layer_gradient(n_layer=24, n_embd=64, T=8, residual=True, norm=True, std=INIT_STD, seed=0):
    """The norm of the gradient reaching the first layer's input, over the norm of the gradient at the top.

    A stack of *n_layer* MLP halves of a block, x -> x + mlp(LN(x)) (*residual*) or x -> mlp(LN(x)) (not); without
    the LayerNorm when not *norm*; weights as :func:`gpt2_init` draws them with *std* (None: fan-in scaled), on
    x ~ N(0, 1) of shape (T, C). The loss is sum(x_L * g) for a random g ~ N(0, 1), so the gradient at the top is
    g; it is carried down by hand. Without the residual the gradient is a product of the layers' Jacobians J_l;
    with it, of (I + J_l): the identity is a path from the loss to every layer that no layer can shrink. The
    attention half adds the same identity; it is left out to keep the backward pass short. Returns {"ratio":
    ||dL/dx_0|| / ||g||, "per_layer": the same ratio at the input of every layer, top first (n_layer values)}.

    What the numbers depend on (measured, 24 layers, C = 64): without norms the plain stack's gradient shrinks
    by a roughly constant factor per layer (fan-in weights: 1.4e-7 at the first layer; GPT-2's small weights:
    6e-59, the signal itself dying as fast), the residual stack's does not (fan-in: it grows, to 170, as
    the stream does; GPT-2's: 1.0). With a LayerNorm in every plain block the picture changes: the norm
    rescales what each layer reads, and with it the gradient, so the plain stack's gradient does not shrink
    layer after layer at initialisation (the small ratio at x_0 with GPT-2's weights, 0.0035, is the one layer
    whose input is not a small output of the layer before). Do not present that case as vanishing gradients."""
    rng = np.random.default_rng(seed)
    blocks = gpt2_init(rng, n_layer, n_embd, std)
    x = rng.standard_normal((T, n_embd))
    saved = []
    for w in blocks:  # forward, keeping what the backward pass needs
        if norm:
            mu = x.mean(-1, keepdims=True)
            s = np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + EPS)  # (T, 1)
            y = (x - mu) / s  # (T, C): LayerNorm, gain 1, bias 0
        else:
            y, s = x, None
        h = y @ w["W_fc"].T  # (T, 4C)
        out = gelu(h) @ w["W_proj"].T  # (T, C)
        saved.append((y, s, h))
        x = x + out if residual else out
    g = rng.standard_normal(x.shape)  # dL/dx_L
    top, per_layer = np.linalg.norm(g), []
    for w, (y, s, h) in zip(reversed(blocks), reversed(saved)):
        d_h = (g @ w["W_proj"]) * gelu_grad(h)  # (T, 4C)
        d_y = d_h @ w["W_fc"]  # (T, C): through the MLP
        d_x = layer_norm_grad(y, s, d_y) if norm else d_y
        g = g + d_x if residual else d_x
        per_layer.append(float(np.linalg.norm(g) / top))
    return {"ratio": per_layer[-1], "per_layer": per_layer}


# ---------------------------------------------------------------------------- the stream's scale


def stream_scale(n_layer=24, n_embd=64, n_head=4, T=8, arrangement="pre", std=INIT_STD, seed=0):
    """The residual stream through *n_layer* random blocks (attention without a mask: the scale does not need
    one; norms with gain 1 and bias 0), from x ~ N(0, 1) of shape (T, C). Returns {"rms": the root mean square
    of the stream at the input and after each block (n_layer + 1 floats), "change": ||x_after - x_before|| /
    ||x_before|| for each block (n_layer floats)}. *std*: as :func:`gpt2_init` (None: fan-in scaled weights).

    *arrangement* "post" puts the stream itself through LayerNorm after each write
    (:func:`.parts.post_ln_block`): its RMS is 1 after every block, whatever the writes. "pre" normalises only
    the copies the sublayers read (:func:`.parts.pre_ln_block`): the stream is the input plus every write so
    far, so it grows when the writes are not small, and each block changes it by a smaller fraction."""
    if arrangement not in ("pre", "post"):
        raise ValueError(f"arrangement is 'pre' or 'post', not {arrangement!r}")
    rng = np.random.default_rng(seed)
    blocks = gpt2_init(rng, n_layer, n_embd, std)
    x = rng.standard_normal((T, n_embd))
    ones, zeros = np.ones(n_embd), np.zeros(n_embd)

    def norm(v):
        return layer_norm(v, ones, zeros, EPS)

    arrange = pre_ln_block if arrangement == "pre" else post_ln_block
    rms, change = [float(np.sqrt((x * x).mean()))], []
    for w in blocks:
        def attn(v, w=w):
            return multi_head_attention(v, w["W_qkv"], w["W_o"], n_head)

        def ff(v, w=w):
            return mlp(v, w["W_fc"], w["W_proj"])

        new = arrange(x, attn, ff, norm, norm)
        change.append(float(np.linalg.norm(new - x) / np.linalg.norm(x)))
        x = new
        rms.append(float(np.sqrt((x * x).mean())))
    return {"rms": rms, "change": change}
