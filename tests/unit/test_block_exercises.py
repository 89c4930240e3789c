"""Lesson 6's exercise checks (lessonpy.course.block.exercises) past the fences' listed wrong answers, which
tests/unit/test_every_lesson.py grades: right answers in every float the prompt allows pass, and the mistakes
stay named when computed in float32 too."""

from __future__ import annotations

import pytest
from lessonpy.maths.grading import grade

LAYER_NORM = """import numpy as np
def layer_norm(x, gain, bias, eps=1e-5):
    x, gain, bias = (a.astype(np.{dtype}) for a in (x, gain, bias))
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + np.{dtype}({eps})) * gain + bias
"""
EPS_OUTSIDE = """import numpy as np
def layer_norm(x, gain, bias, eps=1e-5):
    x = x.astype(np.float32)
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / (np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True)) + np.float32(eps)) * gain + bias
"""
BLOCK = """import numpy as np
def pre_ln_block(x, attn, mlp, ln_1, ln_2):
    x = x.astype(np.{dtype})
    x = x + attn(ln_1(x)).astype(np.{dtype})
    return x + mlp(ln_2(x)).astype(np.{dtype})
"""


def messages(code, check):
    """The check's messages for *code*, and whether it passed."""
    result = grade(code, check)
    return [c["message"] for c in result["checks"]], result["correct"]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_layer_norm_in_any_float_passes(dtype):
    _, correct = messages(LAYER_NORM.format(dtype=dtype, eps="eps"), "layer_norm")
    assert correct


def test_layer_norm_with_another_epsilon_or_outside_the_root_is_named_in_float32():
    said, correct = messages(EPS_OUTSIDE, "layer_norm")
    assert not correct and "outside the square root" in said[-1]
    said, correct = messages(LAYER_NORM.format(dtype="float64", eps="1e-3"), "layer_norm")
    assert not correct  # a hundred times the epsilon asked for changes the row of tiny spread


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pre_ln_block_in_float32_or_float64_passes(dtype):
    _, correct = messages(BLOCK.format(dtype=dtype), "pre_ln_block")
    assert correct
