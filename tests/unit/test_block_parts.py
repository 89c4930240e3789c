"""Lesson 6's NumPy (lessonpy.course.block): the norms, GELU, the MLPs, the two block arrangements, the parameter
counts, the hand-written backward pass of the gradient experiment, and the blocks assembled from these parts
against the models' own forward passes on random weights (the real weights: tests/build/test_block_real_layers.py)."""

import math

import numpy as np
import pytest
from minilm_random import random_weights as minilm_random_weights
from smollm2_random import random_weights as smollm2_random_weights

from lessonpy.course.block import experiments, parts, real_layers
from lessonpy.course.block.parts import (gelu, gelu_exact, layer_norm, mlp, post_ln_block, pre_ln_block,
                                         rms_norm, swiglu_mlp)
from lessonpy.models import minilm, smollm2


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# ---------------------------------------------------------------------------- the parts

def test_layer_norm_makes_rows_of_mean_0_and_variance_1_then_applies_gain_and_bias(rng):
    x = rng.normal(3.0, 5.0, (4, 16))
    y = layer_norm(x, np.ones(16), np.zeros(16), 1e-5)
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(-1), 25 / (25 + 1e-5), rtol=0.05)  # each row's variance is ~25
    gain, bias = rng.standard_normal(16), rng.standard_normal(16)
    np.testing.assert_allclose(layer_norm(x, gain, bias, 1e-5), y * gain + bias)


def test_layer_norm_adds_eps_inside_the_square_root(rng):
    """PyTorch's nn.LayerNorm: (x - mean) / sqrt(var + eps). A row of variance v comes out with standard deviation
    sqrt(v / (v + eps)), which tells the two places of eps apart when v is near eps; a constant row gives 0, not
    NaN."""
    x = rng.standard_normal((3, 32)) * 1e-3  # variance ~1e-6
    eps = 1e-6
    var = x.var(-1, keepdims=True)
    y = layer_norm(x, np.ones(32), np.zeros(32), eps)
    np.testing.assert_allclose(y, (x - x.mean(-1, keepdims=True)) / np.sqrt(var + eps))
    outside = (x - x.mean(-1, keepdims=True)) / (np.sqrt(var) + eps)
    assert np.abs(y - outside).max() > 0.1
    assert np.array_equal(layer_norm(np.full((2, 8), 7.0), np.ones(8), np.zeros(8), 1e-5), np.zeros((2, 8)))


def test_rms_norm_divides_by_the_root_mean_square_without_centring(rng):
    x = rng.normal(2.0, 1.0, (5, 24))
    y = rms_norm(x, np.ones(24), 0.0)
    np.testing.assert_allclose(np.sqrt((y * y).mean(-1)), 1.0)
    assert (y.mean(-1) > 0.5).all()  # the mean stays (2 / sqrt(5) here): RMSNorm does not take it away
    np.testing.assert_allclose(y, x / np.sqrt((x * x).mean(-1, keepdims=True)))
    np.testing.assert_allclose(rms_norm(x, np.full(24, 2.0), 0.0), 2 * y)


def test_gelu_is_gpt2s_tanh_form_close_to_but_not_the_exact_one():
    x = np.linspace(-6, 6, 10001)
    k = math.sqrt(2 / math.pi)
    np.testing.assert_allclose(gelu(x), 0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x ** 3))))
    gap, where = parts.gelu_forms_gap()
    assert 1e-4 < gap < 5e-4 and 2 < abs(where) < 3.5  # close, but not rounding: the forms are not the same
    assert np.abs(gelu(x) - gelu_exact(x)).max() <= gap
    assert gelu(0.0) == 0.0 and abs(gelu(10.0) - 10.0) < 1e-12 and abs(gelu(-10.0)) < 1e-12


def test_mlp_widens_applies_the_nonlinearity_and_narrows(rng):
    C, F = 8, 32
    x = rng.standard_normal((3, C))
    W_fc, W_proj, b_fc, b_proj = rng.standard_normal((F, C)), rng.standard_normal((C, F)), rng.standard_normal(F), \
        rng.standard_normal(C)
    y = mlp(x, W_fc, W_proj, b_fc, b_proj)
    assert y.shape == (3, C)
    np.testing.assert_allclose(y, gelu(x @ W_fc.T + b_fc) @ W_proj.T + b_proj)
    np.testing.assert_allclose(mlp(x, W_fc, W_proj, act=gelu_exact), gelu_exact(x @ W_fc.T) @ W_proj.T)
    # position by position: changing one row of x changes only that row of the output
    x2 = x.copy()
    x2[0] += 1
    moved = np.abs(mlp(x2, W_fc, W_proj) - mlp(x, W_fc, W_proj)).max(-1)
    assert moved[0] > 0 and (moved[1:] == 0).all()


def test_swiglu_gates_one_projection_by_the_silu_of_the_other(rng):
    C, F = 8, 20
    h = rng.standard_normal((4, C))
    gate, up, down = rng.standard_normal((F, C)), rng.standard_normal((F, C)), rng.standard_normal((C, F))
    g = h @ gate.T
    np.testing.assert_allclose(swiglu_mlp(h, gate, up, down), (g / (1 + np.exp(-g)) * (h @ up.T)) @ down.T)


def test_pre_ln_block_adds_two_writes_and_post_ln_normalises_the_stream(rng):
    x = rng.normal(1.0, 3.0, (5, 16))
    attn = lambda v: 2 * v[::-1]  # noqa: E731 - mixes positions
    ff = lambda v: v ** 2  # noqa: E731 - per position
    ln = lambda v: layer_norm(v, np.ones(16), np.zeros(16), 1e-5)  # noqa: E731
    writes = {}
    y = pre_ln_block(x, attn, ff, ln, ln, writes)
    a = attn(ln(x))
    np.testing.assert_allclose(writes["attn"], a)
    np.testing.assert_allclose(writes["mlp"], ff(ln(x + a)))
    np.testing.assert_allclose(y, x + writes["attn"] + writes["mlp"])
    zero = lambda v: np.zeros_like(v)  # noqa: E731
    assert np.array_equal(pre_ln_block(x, zero, zero, ln, ln), x)  # nothing written: the stream passes as it is
    np.testing.assert_allclose(post_ln_block(x, zero, zero, ln, ln), ln(ln(x)))  # the stream itself is normalised
    z = ln(x + attn(x))
    np.testing.assert_allclose(post_ln_block(x, attn, ff, ln, ln), ln(z + ff(z)))


def test_parameter_counts():
    C = 768
    assert parts.mlp_param_count(C) == 8 * C * C
    assert parts.block_param_count(C) == 12 * C * C + 2 * C
    # GPT-2 small as released (with biases, output tied to the token embedding)
    counts = parts.gpt2_param_count()
    assert counts["total"] == 124_439_808 and counts["output"] == 0
    assert counts["token_embedding"] == 50257 * 768 and counts["blocks"] == 12 * (12 * C * C + 13 * C)
    # counted from arrays: a block's weights as experiments draws them, plus two norms' gains (and biases)
    arrays = experiments.gpt2_init(np.random.default_rng(0), 1, 32)[0]
    assert sum(a.size for a in arrays.values()) + 2 * 32 == parts.block_param_count(32)
    with_biases = sum(a.size for a in arrays.values()) + (3 + 1 + 4 + 1) * 32 + 4 * 32
    assert with_biases == parts.block_param_count(32, bias=True)


# ---------------------------------------------------------------------------- the experiments' backward pass

def numeric_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def test_gelu_and_layer_norm_gradients_match_finite_differences(rng):
    x = rng.standard_normal(50) * 3
    np.testing.assert_allclose(experiments.gelu_grad(x), numeric_grad(lambda v: gelu(v).sum(), x), atol=1e-7)
    x, dy = rng.standard_normal((2, 6)), rng.standard_normal((2, 6))
    s = np.sqrt(x.var(-1, keepdims=True) + experiments.EPS)
    y = (x - x.mean(-1, keepdims=True)) / s
    want = numeric_grad(lambda v: (layer_norm(v, np.ones(6), np.zeros(6), experiments.EPS) * dy).sum(), x)
    np.testing.assert_allclose(experiments.layer_norm_grad(y, s, dy), want, atol=1e-7)


@pytest.mark.parametrize("residual, norm, std", [(True, True, 0.02), (False, True, None), (False, False, None)])
def test_first_layer_gradient_is_the_true_gradient(residual, norm, std):
    """The hand-carried gradient equals finite differences of the same stack's loss, built from the lesson's
    parts (so the experiment's forward pass is the lesson's block too)."""
    L, C, T = 3, 6, 2
    rng = np.random.default_rng(0)
    blocks = experiments.gpt2_init(rng, L, C, std)
    x0 = rng.standard_normal((T, C))
    g = rng.standard_normal((T, C))

    def loss(x):
        for w in blocks:
            y = layer_norm(x, np.ones(C), np.zeros(C), experiments.EPS) if norm else x
            out = mlp(y, w["W_fc"], w["W_proj"])
            x = x + out if residual else out
        return (x * g).sum()

    got = experiments.first_layer_gradient(L, C, T, residual, norm, std, seed=0)
    want = np.linalg.norm(numeric_grad(loss, x0)) / np.linalg.norm(g)
    assert got["ratio"] == pytest.approx(want, rel=1e-5)
    assert len(got["per_layer"]) == L


def test_the_residual_keeps_the_gradient_a_plain_stack_loses():
    plain = experiments.first_layer_gradient(residual=False, norm=False, std=None)
    res = experiments.first_layer_gradient(residual=True, norm=False, std=None)
    assert plain["ratio"] < 1e-5 < 1 < res["ratio"]
    assert experiments.first_layer_gradient()["ratio"] == pytest.approx(1, abs=0.01)  # pre-LN at GPT-2's init


def test_stream_scale_post_ln_stays_at_1_and_pre_ln_grows():
    post = experiments.stream_scale(arrangement="post", std=None)
    pre = experiments.stream_scale(arrangement="pre", std=None)
    np.testing.assert_allclose(post["rms"][1:], 1.0, atol=1e-4)
    assert pre["rms"][-1] > 3 * pre["rms"][0] and pre["change"][-1] < pre["change"][0] / 2
    with pytest.raises(ValueError, match="'pre' or 'post'"):
        experiments.stream_scale(arrangement="middle")


# ---------------------------------------------------------------------------- the blocks against the models

def test_minilm_blocks_from_the_parts_reproduce_the_models_forward_pass():
    W = minilm_random_weights(30, seed=1)
    ids = np.array([2, 7, 11, 5, 3])
    want = minilm.forward(W, ids)["hidden"]
    assert np.abs(real_layers.minilm_hidden(W, ids) - want).max() < 1e-5


def test_smollm2_blocks_from_the_parts_reproduce_the_models_forward_pass():
    m = smollm2_random_weights(seed=2)
    ids = np.array([1, 5, 9, 2, 30, 7])
    want = smollm2.forward(m, ids, keep=("resid",))
    got = real_layers.smollm2_stream(m, ids)
    assert got["stream"].shape == (m.layers + 1, 6, m.width) and got["attn"].shape == (m.layers, 6)
    assert np.abs(got["stream"][:-1] - want["resid"]).max() < 1e-5
    assert np.abs(smollm2.unembed(m, got["stream"][-1]) - want["logits"]).max() < 1e-4
    lens = real_layers.logit_lens(m, got["stream"][:, -1], top=3)
    assert lens["final"] == int(want["logits"][-1].argmax()) and lens["rank"][-1] == 0
    assert lens["top"].shape == (m.layers + 1, 3) and np.allclose(lens["probs"].sum(-1), 1)


def test_causal_self_attention_is_lesson_4s_attention_blind_to_the_future(rng):
    from lessonpy.maths.attention import multi_head_attention

    C, H, T = 16, 4, 6
    x, W_qkv, W_proj = rng.standard_normal((T, C)), rng.standard_normal((3 * C, C)) / 4, rng.standard_normal((C, C))
    y = parts.causal_self_attention(x, W_qkv, W_proj, H)
    later = x.copy()
    later[-1] += 1
    np.testing.assert_allclose(parts.causal_self_attention(later, W_qkv, W_proj, H)[:-1], y[:-1])
    # the last position sees every key, as Lesson 4's unmasked attention does; the first sees only itself
    np.testing.assert_allclose(y[-1], multi_head_attention(x, W_qkv, W_proj, H)[-1])
    np.testing.assert_allclose(y[0], multi_head_attention(x[:1], W_qkv, W_proj, H)[0])
    # the course's block from a state_dict's names: the pre-LN composition of these parts
    W = {"ln_1.weight": rng.standard_normal(C), "ln_2.weight": rng.standard_normal(C), "attn.in_proj.weight": W_qkv,
         "attn.out_proj.weight": W_proj, "mlp.fc.weight": rng.standard_normal((4 * C, C)),
         "mlp.proj.weight": rng.standard_normal((C, 4 * C))}
    h = layer_norm(x, W["ln_1.weight"], 0.0, 1e-5)
    a = x + parts.causal_self_attention(h, W_qkv, W_proj, H)
    want = a + mlp(layer_norm(a, W["ln_2.weight"], 0.0, 1e-5), W["mlp.fc.weight"], W["mlp.proj.weight"])
    np.testing.assert_allclose(parts.gpt2_block(x, W, H), want)
