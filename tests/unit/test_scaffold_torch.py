"""py/scaffold: the PyTorch MultiHeadAttention the reader runs on a laptop.

Needs CPU torch: `pip install torch==2.13.0` (that exact spec; others download
GBs of CUDA builds). Skipped when torch is missing.
"""

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch not installed; `pip install torch==2.13.0` (CPU build) to run these")

# the scaffold imports `from config import GPTConfig`, as in the reader's folder: scaffold_folder puts it on sys.path
from scaffold_folder import laptop_run  # noqa: E402

from attention import MultiHeadAttention  # noqa: E402
from config import GPTConfig  # noqa: E402

from lessonpy.maths.attention import attention_param_count, multi_head_attention  # noqa: E402


@pytest.fixture
def attn():
    torch.manual_seed(0)
    return MultiHeadAttention(GPTConfig()).eval()


def test_config_defaults_are_gpt2_small():
    c = GPTConfig()
    assert (c.block_size, c.vocab_size, c.n_layer, c.n_head, c.n_embd) == (1024, 50257, 12, 12, 768)
    assert (c.dropout, c.bias) == (0.0, False)
    assert c.head_size == 64
    assert GPTConfig(n_embd=128, n_head=4).head_size == 32


def test_config_rejects_uneven_heads():
    with pytest.raises(ValueError, match="divisible"):
        GPTConfig(n_embd=768, n_head=10)
    with pytest.raises(ValueError):
        GPTConfig(n_head=0)
    with pytest.raises(ValueError, match="dropout"):
        GPTConfig(dropout=1.0)


def test_output_shape(attn, x):
    with torch.no_grad():
        assert attn(x).shape == (2, 8, 768)


def test_parameter_count_is_4_c_squared(attn):
    n = sum(p.numel() for p in attn.parameters())
    assert n == 4 * 768**2 == 2_359_296 == attention_param_count(768)
    # the same for any number of heads: they slice the same matrices
    assert sum(p.numel() for p in MultiHeadAttention(GPTConfig(n_head=1)).parameters()) == n


def test_deterministic_in_eval_mode(attn, x):
    with torch.no_grad():
        assert torch.equal(attn(x), attn(x))


def test_dropout_is_active_only_in_training():
    torch.manual_seed(0)
    attn = MultiHeadAttention(GPTConfig(n_embd=64, n_head=4, dropout=0.5))
    x = torch.randn(1, 5, 64)
    with torch.no_grad():
        assert not torch.equal(attn.train()(x), attn.train()(x))
        assert torch.equal(attn.eval()(x), attn.eval()(x))


def test_no_mask_yet_so_position_5_sees_position_0(attn, x):
    x2 = x.clone()
    x2[:, 0, :] += 1.0
    with torch.no_grad():
        y, y2 = attn(x), attn(x2)
    assert not torch.allclose(y[:, 5], y2[:, 5])
    # and the future: position 0 sees position 7, which Lesson 5's mask will stop
    x3 = x.clone()
    x3[:, 7, :] += 1.0
    with torch.no_grad():
        assert not torch.allclose(y[:, 0], attn(x3)[:, 0])


def test_numpy_version_matches_torch(attn, x):
    attn = attn.double()
    with torch.no_grad():
        y = attn(x.double()).numpy()
    y_np = multi_head_attention(
        x.double().numpy(),
        attn.in_proj.weight.detach().numpy(),  # (3C, C), nn.Linear's (out, in)
        attn.out_proj.weight.detach().numpy(),  # (C, C)
        n_head=attn.n_head,
    )
    np.testing.assert_allclose(y_np, y, rtol=1e-5, atol=1e-5)
    assert np.abs(y_np - y).max() < 1e-10  # in float64 they agree to rounding


def test_numpy_version_matches_torch_float32(attn, x):
    with torch.no_grad():
        y = attn(x).numpy()
    y_np = multi_head_attention(x.numpy(), attn.in_proj.weight.detach().numpy(),
                                attn.out_proj.weight.detach().numpy(), n_head=12)
    np.testing.assert_allclose(y_np, y, rtol=1e-4, atol=1e-5)


def test_heads_get_consecutive_channels_and_merge_undoes_the_split(attn):
    # channel c of position t holds 1000 t + c: head h must hold channels h*D .. h*D + D-1 of every position
    x = (1000 * torch.arange(3.0)[:, None] + torch.arange(768.0)).expand(2, 3, 768)
    heads = attn.split_heads(x)
    assert heads.shape == (2, 12, 3, 64)
    assert torch.equal(heads[1, 5, 2], 2000 + torch.arange(5 * 64, 6 * 64.0))
    assert torch.equal(attn.merge_heads(heads), x)


def test_module_matches_torch_scaled_dot_product_attention(attn, x):
    """The scores, softmax and blend equal PyTorch's fused kernel on the same q, k, v."""
    F = torch.nn.functional
    with torch.no_grad():
        q, k, v = (attn.split_heads(t) for t in attn.in_proj(x).chunk(3, dim=-1))
        expected = attn.out_proj(attn.merge_heads(F.scaled_dot_product_attention(q, k, v)))
        got = attn(x)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    # and a wrong scale (no division by sqrt(D)) is far from it, so the comparison can fail
    with torch.no_grad():
        unscaled = attn.out_proj(attn.merge_heads(F.scaled_dot_product_attention(q, k, v, scale=1.0)))
    assert (unscaled - got).abs().max() > 1e-3


def test_module_matches_torch_multihead_attention_with_the_same_weights(attn, x):
    ref = torch.nn.MultiheadAttention(768, 12, bias=False, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(attn.in_proj.weight)
        ref.out_proj.weight.copy_(attn.out_proj.weight)
        expected, weights = ref(x, x, x, average_attn_weights=False)
        got = attn(x)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    assert weights.shape == (2, 12, 8, 8)


def test_biases_when_the_config_asks_for_them():
    attn = MultiHeadAttention(GPTConfig(bias=True))
    n = sum(p.numel() for p in attn.parameters())
    assert n == attention_param_count(768, bias=True) == 4 * 768**2 + 4 * 768


@pytest.mark.slow  # a fresh Python that imports torch: tens of seconds on a busy machine
def test_the_laptop_script_prints_what_the_lesson_promises(tmp_path):
    """The lesson tells the reader to run check_attention.py next to the two modules: do exactly that."""
    assert laptop_run(tmp_path, "check_attention.py", ("config.py", "attention.py")) == [
        "output shape: (2, 8, 768)",
        "parameters: 2,359,296 = 4 * 768**2: True",
        "same as torch.nn.MultiheadAttention: True",
        "position 0 reads position 7, its future: True",
    ]
