"""py/scaffold: Lesson 5's CausalSelfAttention, Lesson 4's module grown by the causal mask.

Needs CPU torch, as tests/unit/test_scaffold_torch.py does; skipped when torch is missing.
"""

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch not installed; `pip install torch==2.13.0` (CPU build) to run these")
F = torch.nn.functional

# py/scaffold on sys.path (the modules import each other by bare name, as in the reader's folder); the input x
# is unit/conftest.py's fixture: (2, 8, 768), as in Lesson 4's tests
from scaffold_folder import laptop_run  # noqa: E402

from attention import MultiHeadAttention  # noqa: E402
from causal_attention import CausalSelfAttention  # noqa: E402
from config import GPTConfig  # noqa: E402

SMALL = GPTConfig(block_size=6, n_embd=32, n_head=4)


@pytest.fixture
def causal():
    torch.manual_seed(0)
    return CausalSelfAttention(GPTConfig()).eval()  # the weights of Lesson 4's attn fixture


def fused(attn, x, is_causal):
    """PyTorch's fused attention on the module's own q, k, v and weights: (B, T, C) -> (B, T, C)."""
    q, k, v = (attn.split_heads(t) for t in attn.in_proj(x).chunk(3, dim=-1))
    return attn.out_proj(attn.merge_heads(F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)))


def test_lesson_4s_mask_scores_is_the_identity():
    attn = MultiHeadAttention(SMALL)
    scores = torch.randn(2, 4, 5, 5)
    assert attn.mask_scores(scores) is scores


def test_matches_scaled_dot_product_attention_with_is_causal(causal, x):
    with torch.no_grad():
        got = causal(x)
        torch.testing.assert_close(got, fused(causal, x, is_causal=True), rtol=1e-5, atol=1e-5)
        # and far from the unmasked attention, so the comparison can fail
        assert (got - fused(causal, x, is_causal=False)).abs().max() > 1e-3


def test_the_future_never_moves_earlier_outputs(causal, x):
    noise = torch.Generator().manual_seed(2)
    with torch.no_grad():
        y = causal(x)
        for t in range(8):
            later = x.clone()
            later[:, t + 1:] += torch.randn(later[:, t + 1:].shape, generator=noise)
            torch.testing.assert_close(causal(later)[:, :t + 1], y[:, :t + 1], rtol=0, atol=1e-6)
            # while a change at t itself reaches t and everything after it
            here = x.clone()
            here[:, t] += 1.0
            moved = (causal(here) - y).abs().amax(dim=(0, 2))  # (T,): how far each position moved
            assert (moved[t:] > 1e-4).all(), (t, moved)


def test_one_pass_equals_passes_over_growing_prefixes(causal, x):
    with torch.no_grad():
        y = causal(x)
        for t in range(8):
            torch.testing.assert_close(causal(x[:, :t + 1])[:, -1], y[:, t], rtol=1e-5, atol=1e-5)


def test_the_mask_is_a_buffer_not_a_parameter(causal):
    n = sum(p.numel() for p in causal.parameters())
    assert n == 4 * 768**2 == 2_359_296
    assert "future" in dict(causal.named_buffers()) and "future" not in causal.state_dict()
    # so Lesson 4's weights load into Lesson 5's module as they are
    assert causal.state_dict().keys() == MultiHeadAttention(GPTConfig()).state_dict().keys()


def test_the_mask_hides_exactly_the_keys_after_each_query():
    attn = CausalSelfAttention(SMALL)
    assert attn.future.dtype == torch.bool and attn.future.shape == (6, 6)
    i, j = torch.meshgrid(torch.arange(6), torch.arange(6), indexing="ij")
    assert torch.equal(attn.future, j > i)
    # for T = 5 < block_size: -inf (weight exactly 0) above the diagonal, the rest untouched
    later = (j > i)[:5, :5]  # (5, 5)
    scores = torch.randn(2, 4, 5, 5)
    masked = attn.mask_scores(scores)
    assert torch.equal(masked.isneginf(), later.expand(2, 4, 5, 5))
    assert torch.equal(masked[..., ~later], scores[..., ~later])


def test_longer_than_block_size_is_refused():
    attn = CausalSelfAttention(SMALL)
    with pytest.raises(ValueError, match=r"\b7\b.*block_size=6"):
        attn(torch.randn(1, 7, 32))


def test_one_position_reads_only_itself():
    torch.manual_seed(0)
    attn = CausalSelfAttention(SMALL).eval()
    x = torch.randn(3, 1, 32)
    with torch.no_grad():
        v = attn.in_proj(x).chunk(3, dim=-1)[2]  # (B, 1, C): all its weight is on its own value
        torch.testing.assert_close(attn(x), attn.out_proj(v), rtol=1e-5, atol=1e-6)


def test_a_full_block_is_masked_like_pytorch_masks_it():
    torch.manual_seed(0)
    attn = CausalSelfAttention(SMALL).eval()
    x = torch.randn(2, SMALL.block_size, 32)
    with torch.no_grad():
        torch.testing.assert_close(attn(x), fused(attn, x, is_causal=True), rtol=1e-5, atol=1e-5)


def test_dropout_only_in_training_and_the_mask_holds_there_too():
    torch.manual_seed(0)
    attn = CausalSelfAttention(GPTConfig(block_size=8, n_embd=64, n_head=4, dropout=0.5))
    x = torch.randn(1, 5, 64)
    later = x.clone()
    later[:, 3:] += 1.0
    with torch.no_grad():
        assert torch.equal(attn.eval()(x), attn.eval()(x))
        assert not torch.equal(attn.train()(x), attn.train()(x))
        # the same dropout draws for both inputs: positions 0..2 still cannot see 3 and 4
        torch.manual_seed(1)
        y = attn(x)
        torch.manual_seed(1)
        torch.testing.assert_close(attn(later)[:, :3], y[:, :3], rtol=0, atol=1e-6)


def test_a_loss_on_position_t_sends_no_gradient_to_later_inputs():
    torch.manual_seed(0)
    attn = CausalSelfAttention(SMALL).eval()
    for t in range(6):
        x = torch.randn(2, 6, 32, requires_grad=True)
        attn(x)[:, t].square().sum().backward()
        assert torch.equal(x.grad[:, t + 1:], torch.zeros_like(x.grad[:, t + 1:])), t
        assert (x.grad[:, :t + 1].abs().amax(dim=(0, 2)) > 0).all(), t


@pytest.mark.slow  # a fresh Python that imports torch: tens of seconds on a busy machine
def test_the_laptop_script_prints_what_the_lesson_promises(tmp_path):
    """The reader runs check_causal.py next to the three modules: do exactly that."""
    assert laptop_run(tmp_path, "check_causal.py", ("config.py", "attention.py", "causal_attention.py")) == [
        "output shape: (2, 8, 768)",
        "same as F.scaled_dot_product_attention(is_causal=True): True",
        "position 0 reads position 7, its future: False",
        "one pass = 8 passes over growing prefixes: True",
    ]


def test_is_causal_aligns_its_triangle_top_left_so_a_cached_query_must_not_use_it():
    """Lesson 5 warns: with one new query against t + 1 cached keys, is_causal=True lets it read the first key
    only (the triangle starts at the top-left corner); without is_causal it reads every cached key, as it should."""
    g = torch.Generator().manual_seed(3)
    q, k, v = torch.randn(1, 1, 1, 8, generator=g), torch.randn(1, 1, 4, 8, generator=g), torch.randn(1, 1, 4, 8, generator=g)
    torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v, is_causal=True), v[:, :, :1])
    weights = (q @ k.mT / 8 ** 0.5).softmax(-1)
    torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v), weights @ v)
    assert (weights > 0.01).all()  # every cached key has weight: the two calls differ


def test_minus_infinity_works_in_float16_where_a_large_negative_constant_is_refused():
    """causal_attention.py's docstring: -1e9 does not fit in float16 (masked_fill refuses it); -inf does."""
    scores = torch.zeros(3, 3, dtype=torch.float16)
    mask = torch.ones(3, 3, dtype=torch.bool).triu(1)
    with pytest.raises(RuntimeError, match="overflow"):
        scores.masked_fill(mask, -1e9)
    weights = scores.masked_fill(mask, float("-inf")).softmax(-1)
    assert weights[0].tolist() == [1.0, 0.0, 0.0] and not weights.isnan().any()
