"""py/scaffold/block.py: Lesson 6's PyTorch Block, against the lesson's NumPy block (lessonpy.course.block) with
the same weights, and the laptop script check_block.py.

Needs CPU torch: `pip install torch==2.13.0` (that exact spec; others download GBs of CUDA builds). Skipped when
torch is missing.
"""

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch not installed; `pip install torch==2.13.0` (CPU build) to run these")

from scaffold_folder import laptop_run  # noqa: E402

from block import MLP, Block  # noqa: E402
from config import GPTConfig  # noqa: E402

from lessonpy.course.block import parts  # noqa: E402

SMALL = GPTConfig(block_size=8, n_embd=32, n_head=4)


def numpy_weights(module):
    return {name: p.detach().double().numpy() for name, p in module.named_parameters()}


@pytest.fixture
def block():
    torch.manual_seed(0)
    return Block(GPTConfig()).eval()


def test_shape_and_parameter_count(block, x):
    with torch.no_grad():
        assert block(x).shape == x.shape == (2, 8, 768)
    C = 768
    assert sum(p.numel() for p in block.parameters()) == 12 * C * C + 2 * C == parts.block_param_count(C)
    assert sum(p.numel() for p in block.mlp.parameters()) == 8 * C * C == parts.mlp_param_count(C)
    with_biases = Block(GPTConfig(bias=True))
    assert sum(p.numel() for p in with_biases.parameters()) == parts.block_param_count(C, bias=True)


@pytest.mark.parametrize("bias", [False, True])
def test_the_numpy_block_matches_the_module_on_the_same_weights(bias):
    torch.manual_seed(1)
    config = GPTConfig(block_size=8, n_embd=32, n_head=4, bias=bias)
    module = Block(config).eval()
    if bias:  # the attention has no biases to copy in NumPy's bias-free attention: refused, in one line
        with pytest.raises(ValueError, match="bias-free"):
            parts.gpt2_block(np.zeros((4, 32)), numpy_weights(module), 4)
        return
    for p in module.parameters():  # not the initial ones and zeros: every weight takes part
        torch.nn.init.normal_(p, std=0.3)
    x = torch.randn(2, 6, 32, dtype=torch.float64)
    with torch.no_grad():
        want = module.double()(x).numpy()
    got = parts.gpt2_block(x.numpy(), numpy_weights(module), 4)
    assert np.abs(got - want).max() < 1e-10
    # the exact GELU instead of GPT-2's is a different block: the comparison can tell them apart
    W = numpy_weights(module)
    exact = parts.pre_ln_block(
        x.numpy(), lambda v: parts.causal_self_attention(v, W["attn.in_proj.weight"], W["attn.out_proj.weight"], 4),
        lambda v: parts.mlp(v, W["mlp.fc.weight"], W["mlp.proj.weight"], act=parts.gelu_exact),
        *(lambda v, n=n: parts.layer_norm(v, W[n + ".weight"], 0.0, 1e-5) for n in ("ln_1", "ln_2")))
    assert np.abs(exact - want).max() > 1e-6


def test_the_block_is_causal_and_adds_two_writes_to_its_input():
    torch.manual_seed(2)
    module = Block(SMALL).eval()
    x = torch.randn(1, 8, 32)
    later = x.clone()
    later[:, -1] += 1.0
    with torch.no_grad():
        assert torch.allclose(module(later)[:, :-1], module(x)[:, :-1])  # the future does not leak back
        a = module.attn(module.ln_1(x))
        m = module.mlp(module.ln_2(x + a))
        torch.testing.assert_close(module(x), x + a + m)


def test_mlp_works_on_each_position_alone_with_the_tanh_gelu():
    torch.manual_seed(3)
    mlp = MLP(SMALL).eval()
    x = torch.randn(1, 5, 32)
    moved = x.clone()
    moved[:, 2] += 1.0
    with torch.no_grad():
        changed = (mlp(moved) - mlp(x)).abs().amax(-1)[0]
        assert changed[2] > 0 and (changed[[0, 1, 3, 4]] == 0).all()
        W = numpy_weights(mlp)
        got = parts.mlp(x.double().numpy(), W["fc.weight"], W["proj.weight"])
        assert np.abs(got - mlp.double()(x.double()).numpy()).max() < 1e-12


def test_dropout_is_active_only_in_training():
    torch.manual_seed(4)
    module = Block(GPTConfig(block_size=8, n_embd=32, n_head=4, dropout=0.5))
    x = torch.randn(1, 5, 32)
    with torch.no_grad():
        assert not torch.equal(module.train()(x), module.train()(x))
        assert torch.equal(module.eval()(x), module.eval()(x))


LAPTOP = ("config.py", "attention.py", "causal_attention.py", "block.py")


@pytest.mark.slow  # a fresh Python that imports torch: tens of seconds on a busy machine
def test_the_laptop_script_prints_what_the_lesson_promises(tmp_path):
    assert laptop_run(tmp_path, "check_block.py", LAPTOP, lessonpy=True) == [
        "output shape: (2, 8, 768)",
        "parameters: 7,079,424 = 12 * 768**2 + 2 * 768: True",
        "same as PyTorch's functions: True",
        "same as the lesson's NumPy block: True",
        "with nothing written, out = x: True",
    ]


@pytest.mark.slow
def test_the_laptop_script_without_the_wheel_says_so(tmp_path):
    assert "same as the lesson's NumPy block: skipped (install the lessonpy wheel)" in laptop_run(
        tmp_path, "check_block.py", LAPTOP)
