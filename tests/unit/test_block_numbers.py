"""Lesson 6's numbers (lessons/block_numbers.py) held to their sources: the parameter counts to GPT-2 as
transformers builds it (when installed) and to counting by hand, the experiments' numbers to what the lesson will
say of them (the residual keeps the gradient a plain stack loses; post-LN holds the stream at RMS 1, pre-LN lets it
grow). The real models' numbers are held by tests/build/test_block_real_layers.py."""

from __future__ import annotations

import pytest
from lessonpy.course.block import experiments

import block_numbers  # beside the lessons (lessons/)


@pytest.fixture(scope="module")
def values():
    return block_numbers.numbers()


def test_the_block_is_12_c_squared_and_the_mlp_two_thirds_of_it(values):
    C = 768
    assert values["attn_params"] == 4 * C * C and values["mlp_params"] == 8 * C * C
    assert values["block_12c2"] == values["attn_params"] + values["mlp_params"]
    assert values["block_params"] == values["block_12c2"] + 2 * C  # two norms' gains, no biases
    # with biases: q, k, v, output (4C), the MLP's two (4C + C), and the norms' biases (2C)
    assert values["block_params_bias"] == values["block_params"] + 4 * C + 5 * C + 2 * C


def test_gpt2_smalls_parameters_add_up(values):
    parts = ("gpt2_token_embedding", "gpt2_position_embedding", "gpt2_blocks", "gpt2_final_norm")
    assert sum(values[p] for p in parts) == values["gpt2_total"] == 124_439_808
    assert values["gpt2_token_embedding"] == 50257 * 768 and values["gpt2_blocks"] == 12 * values["block_params_bias"]
    assert values["gpt2_blocks_share"] == f"{values['gpt2_blocks'] / values['gpt2_total']:.1%}"
    assert values["gpt2_untied_total"] - values["gpt2_total"] == values["gpt2_token_embedding"]
    # the course's configuration drops every bias: 12 blocks' 13C, the final norm's C
    assert values["gpt2_total"] - values["course_total"] == 12 * 11 * 768 + 768


def test_gpt2_small_in_transformers_has_the_same_count(values):
    pytest.importorskip("torch", reason="PyTorch not installed")
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config())
    assert model.lm_head.weight is model.transformer.wte.weight  # tied: counted once
    assert sum(p.numel() for p in model.parameters()) == values["gpt2_total"]
    assert model.transformer.h[0].mlp.c_fc.weight.numel() == 4 * 768 * 768


def test_the_gelu_forms_differ_by_the_stated_gap(values):
    from lessonpy.course.block.parts import gelu, gelu_exact

    x = float(values["gelu_gap_at"])
    assert abs(gelu(x) - gelu_exact(x)) == pytest.approx(float(values["gelu_gap"]), abs=1e-5)


def test_the_residual_keeps_the_gradient_and_the_plain_stack_loses_it(values):
    plain = float(values["grad_plain"])
    assert plain < 1e-5 and float(values["grad_plain_per_layer"]) ** values["grad_depth"] == pytest.approx(plain, rel=0.5)
    assert float(values["grad_residual"]) > 10  # with fan-in weights the stream, and the gradient, grow
    assert float(values["grad_pre_ln_gpt2"]) == pytest.approx(1, abs=0.01)
    # the caveat the module states: a LayerNorm in every plain block keeps its gradient from vanishing at init
    assert float(values["grad_plain_ln"]) > 0.5


def test_post_ln_holds_the_stream_at_1_and_pre_ln_lets_it_grow(values):
    assert float(values["stream_post_rms_gap"]) < 1e-4
    assert float(values["stream_pre_rms"]) > 4 * float(values["stream_input_rms"])
    assert float(values["stream_pre_change_last"]) < float(values["stream_pre_change_first"]) / 2
    assert float(values["stream_post_change_last"]) > 2 * float(values["stream_pre_change_last"])
    # with GPT-2's small initial writes the stream barely moves: the growth needs writes as large as the stream
    assert float(values["stream_pre_gpt2_rms"]) == pytest.approx(float(values["stream_input_rms"]), abs=0.01)
    assert float(values["stream_pre_gpt2_change"]) < 0.01


def test_the_numbers_are_the_experiments_with_the_lessons_seeds(values):
    got = experiments.stream_scale(block_numbers.DEPTH, block_numbers.SMALL_C, arrangement="pre", std=None)
    assert values["stream_pre_rms"] == f"{got['rms'][-1]:.2f}"
    again = block_numbers.numbers()
    assert again == values  # seeded: the same every time
