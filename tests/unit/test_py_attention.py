"""lessonpy.maths.attention: the NumPy attention the lesson builds."""

import math

import numpy as np
import pytest

from lessonpy.maths.attention import (
    attention_param_count,
    example_inputs,
    merge_heads,
    multi_head_attention,
    row_entropy,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)


def naive_softmax(x):
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


# -----------------------------------------------------------------------------
# softmax


def test_one_softmax_and_one_entropy_serve_the_numbers_and_the_graders():
    # The text's numbers and the exercise checks compute with the lesson's own functions, not copies.
    import attention_numbers as lesson_numbers
    from lessonpy.course.attention import exercises
    from lessonpy.course.causal_mask import exercises as causal_exercises

    assert lesson_numbers.softmax is softmax and exercises.softmax is softmax and causal_exercises.softmax is softmax
    assert lesson_numbers.entropy is row_entropy


def test_softmax_matches_naive_formula_on_small_inputs():
    x = np.random.default_rng(0).standard_normal((5, 7))
    np.testing.assert_allclose(softmax(x), naive_softmax(x), rtol=1e-12)


def test_softmax_rows_sum_to_one():
    x = np.random.default_rng(1).standard_normal((3, 4, 9)) * 10
    np.testing.assert_allclose(softmax(x).sum(axis=-1), 1.0, rtol=1e-12)


def test_softmax_is_stable_with_huge_inputs():
    x = np.array([[1000.0, 999.0, 0.0], [-1000.0, -1001.0, -1002.0]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # no overflow, no 0/0
        p = softmax(x)
    assert np.isfinite(p).all()
    # shifting a row does not change its softmax
    np.testing.assert_allclose(p[0], naive_softmax(np.array([1.0, 0.0, -999.0])), rtol=1e-12)
    np.testing.assert_allclose(p[1], naive_softmax(np.array([0.0, -1.0, -2.0])), rtol=1e-12)
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(naive_softmax(x)[0]).any()  # the unstable version breaks here


def test_softmax_other_axis_and_masked_entries():
    x = np.random.default_rng(2).standard_normal((4, 6))
    np.testing.assert_allclose(softmax(x, axis=0), softmax(x.T).T)
    x[:, 0] = -np.inf
    p = softmax(x)
    assert (p[:, 0] == 0).all()
    np.testing.assert_allclose(p.sum(-1), 1.0)


def test_softmax_keeps_float32_and_accepts_ints():
    assert softmax(np.zeros((2, 3), dtype=np.float32)).dtype == np.float32
    np.testing.assert_allclose(softmax([[0, 0, 0, 0]]), 0.25)


# -----------------------------------------------------------------------------
# one head


def test_sdpa_shapes_and_formula():
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((5, 8)), rng.standard_normal((6, 8)), rng.standard_normal((6, 3))
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (5, 3) and w.shape == (5, 6)
    expected_w = naive_softmax(Q @ K.T / math.sqrt(8))
    np.testing.assert_allclose(w, expected_w, rtol=1e-12)
    np.testing.assert_allclose(out, expected_w @ V, rtol=1e-12)


def test_sdpa_scale_temperature_and_mask():
    rng = np.random.default_rng(4)
    Q, K, V = (rng.standard_normal((2, 4, 8)) for _ in range(3))  # batched
    _, w_raw = scaled_dot_product_attention(Q, K, V, scale=False)
    np.testing.assert_allclose(w_raw, naive_softmax(Q @ K.swapaxes(-1, -2)), rtol=1e-12)
    _, w_hot = scaled_dot_product_attention(Q, K, V, scale=2.0, temperature=4.0)
    np.testing.assert_allclose(w_hot, naive_softmax(Q @ K.swapaxes(-1, -2) / 8.0), rtol=1e-12)
    causal = np.tril(np.ones((4, 4), dtype=bool))
    out, w = scaled_dot_product_attention(Q, K, V, mask=causal)
    assert (w[..., ~causal] == 0).all()
    np.testing.assert_allclose(w.sum(-1), 1.0)
    np.testing.assert_allclose(out[:, 0], V[:, 0])  # the first position sees only itself
    with pytest.raises(ValueError, match="temperature"):
        scaled_dot_product_attention(Q, K, V, temperature=0)


# -----------------------------------------------------------------------------
# heads


def test_split_heads_shape_and_channel_order():
    x = np.arange(2 * 3 * 12).reshape(2, 3, 12)  # (B, T, C)
    h = split_heads(x, 4)
    assert h.shape == (2, 4, 3, 3)  # (B, H, T, D)
    np.testing.assert_array_equal(h[1, 2, 0], x[1, 0, 6:9])  # head 2 = channels 6..8


def test_split_merge_round_trip():
    x = np.random.default_rng(5).standard_normal((2, 5, 24))
    for n_head in (1, 2, 3, 4, 6, 24):
        np.testing.assert_array_equal(merge_heads(split_heads(x, n_head)), x)
    y = np.random.default_rng(6).standard_normal((5, 24))  # unbatched (T, C)
    assert split_heads(y, 4).shape == (4, 5, 6)
    np.testing.assert_array_equal(merge_heads(split_heads(y, 4)), y)


def test_split_heads_rejects_uneven_split():
    with pytest.raises(ValueError, match="split evenly"):
        split_heads(np.zeros((1, 2, 10)), 3)


def test_multi_head_attention_shapes_and_heads():
    rng = np.random.default_rng(7)
    B, T, C, H = 2, 5, 12, 3
    x = rng.standard_normal((B, T, C))
    W_qkv, W_proj = rng.standard_normal((3 * C, C)) / 4, rng.standard_normal((C, C)) / 4
    y, w = multi_head_attention(x, W_qkv, W_proj, H, return_weights=True)
    assert y.shape == (B, T, C) and w.shape == (B, H, T, T)
    np.testing.assert_allclose(w.sum(-1), 1.0)
    # head by head, by hand: head h uses rows h*D..(h+1)*D of each of W_q, W_k, W_v
    D = C // H
    W_q, W_k, W_v = W_qkv[:C], W_qkv[C:2 * C], W_qkv[2 * C:]
    heads = []
    for h in range(H):
        rows = slice(h * D, (h + 1) * D)
        out, _ = scaled_dot_product_attention(x @ W_q[rows].T, x @ W_k[rows].T, x @ W_v[rows].T)
        heads.append(out)
    np.testing.assert_allclose(y, np.concatenate(heads, axis=-1) @ W_proj.T, rtol=1e-10)
    # unbatched input works too
    np.testing.assert_allclose(multi_head_attention(x[0], W_qkv, W_proj, H), y[0], rtol=1e-12)


def test_multi_head_attention_checks_weight_shapes():
    x = np.zeros((1, 2, 4))
    with pytest.raises(ValueError, match="W_qkv"):
        multi_head_attention(x, np.zeros((4, 12)), np.zeros((4, 4)), 2)  # (in, out) by mistake
    with pytest.raises(ValueError, match="W_proj"):
        multi_head_attention(x, np.zeros((12, 4)), np.zeros((4, 5)), 2)


# -----------------------------------------------------------------------------
# measuring and examples


def test_attention_param_count():
    assert attention_param_count(768) == 4 * 768**2 == 2_359_296
    assert attention_param_count(768, bias=True) == 2_359_296 + 4 * 768
    assert attention_param_count(8) == 256


def test_row_entropy_bounds():
    T = 6
    assert row_entropy(np.full((T,), 1 / T)) == pytest.approx(math.log(T))
    assert row_entropy(np.eye(T)).tolist() == [0.0] * T  # one-hot rows, 0 log 0 = 0
    w = softmax(np.random.default_rng(8).standard_normal((50, T)) * 3)
    e = row_entropy(w)
    assert e.shape == (50,)
    assert (e >= 0).all() and (e <= math.log(T) + 1e-12).all()


def test_example_inputs_are_seeded_and_unit_variance():
    a, b = example_inputs(4, 8, seed=1), example_inputs(4, 8, seed=1)
    for key in ("x", "W_q", "W_k", "W_v"):
        np.testing.assert_array_equal(a[key], b[key])
    assert a["x"].shape == (4, 8) and a["W_q"].shape == (8, 8)
    assert a["tokens"] == ["the", "cat", "sat", "on"]
    assert not np.array_equal(example_inputs(4, 8, seed=2)["x"], a["x"])
    assert example_inputs(18, 4)["tokens"][16:] == ["t16", "t17"]
    # projected entries have variance ~1, the regime sqrt(d_k) scaling assumes
    big = example_inputs(64, 256, seed=0)
    assert (big["x"] @ big["W_q"]).var() == pytest.approx(1.0, abs=0.1)
