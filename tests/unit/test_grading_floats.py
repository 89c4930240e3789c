"""Every exercise's check accepts a right answer in any float the prompt allows, by one tolerance
(lessonpy.maths.tolerance), and names the mistake of an answer that is wrong in that float.

The lessons' `wrong:` lists hold the wrong answers (tests/unit/test_every_lesson.py grades them); here are the
right answers in float16, float32 and float64, computed in that float throughout or computed wider and
rounded at the end, which the checks once rejected with another mistake's words.
"""

from __future__ import annotations

import numpy as np
import pytest
from lessonpy.maths.grading import grade
from lessonpy.maths.tolerance import float_of

FLOATS = ["float16", "float32", "float64"]

ATTENTION = """
import numpy as np

def {name}(Q, K, V):
    Q, K, V = (a.astype(np.{dt}) for a in (Q, K, V))
    T, d_k = Q.shape
    s = Q @ K.T / np.{dt}(np.sqrt(d_k))
    {mask}
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V, w
"""

CAUSAL_MASK = "s = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, s).astype(s.dtype)"

SPLIT = """
import numpy as np

def split_qkv(qkv, n_head):
    qkv = qkv.astype(np.{dt})
    B, T, C3 = qkv.shape
    D = C3 // 3 // n_head
    return tuple(x.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in np.split(qkv, 3, axis=-1))
"""

# The cache starts as float64 zeros: np.vstack widens this token's float16 key to float64, and the answer's
# precision stays float16's.
DECODE = """
import numpy as np

def decode_step(x_t, W_q, W_k, W_v, K_cache, V_cache):
    x_t, W_q, W_k, W_v = (a.astype(np.{dt}) for a in (x_t, W_q, W_k, W_v))
    q = x_t @ W_q
    K_cache = np.vstack([K_cache, x_t @ W_k])
    V_cache = np.vstack([V_cache, x_t @ W_v])
    s = K_cache @ q / np.sqrt(len(q))
    e = np.exp(s - s.max())
    return (e / e.sum()) @ V_cache, K_cache, V_cache
"""


def feedback(result: dict) -> str:
    return "\n".join(c["message"] for c in result["checks"] if not c["correct"]) + (result["error"] or "")


def assert_passes(code: str, check: str) -> None:
    result = grade(code, check)
    assert result["correct"], feedback(result)


@pytest.mark.parametrize("dt", FLOATS)
def test_causal_attention_accepts_a_right_answer_in_every_float(dt):
    assert_passes(ATTENTION.format(name="causal_attention", dt=dt, mask=CAUSAL_MASK), "causal_attention")


@pytest.mark.parametrize("dt", FLOATS)
def test_decode_step_accepts_a_right_answer_in_every_float_even_with_a_float64_cache(dt):
    assert_passes(DECODE.format(dt=dt), "decode_step")


@pytest.mark.parametrize("dt", FLOATS)
def test_split_qkv_accepts_a_copy_in_every_float(dt):
    assert_passes(SPLIT.format(dt=dt), "split_qkv")


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_attention_accepts_a_right_answer_in_the_floats_its_prompt_allows(dt):
    assert_passes(ATTENTION.format(name="attention", dt=dt, mask="pass"), "attention")


def test_attention_rounded_to_float16_at_the_end_passes_the_large_score_probe_with_its_exact_zeros():
    """Computed in float64, returned as float16: far keys' weights are exactly 0, and the float16 tolerance at
    scores near 1e5 once overflowed to inf (inf · 0 is nan), calling those zeros 'clipping or rescaling'."""
    code = ATTENTION.format(name="attention", dt="float64", mask="pass").replace(
        "return w @ V, w", "return (w @ V).astype(np.float16), w.astype(np.float16)")
    assert_passes(code, "attention")


def test_attention_in_float16_throughout_is_told_float16_cannot_hold_the_large_scores():
    result = grade(ATTENTION.format(name="attention", dt="float16", mask="pass"), "attention")
    assert not result["correct"]
    assert "float16 cannot hold scores near 100,000" in feedback(result)
    assert "subtract each row's max" not in feedback(result)


def test_a_float16_number_widened_to_float64_is_judged_as_float16_and_float64_work_is_not():
    rng = np.random.default_rng(0)
    values = rng.standard_normal(20)
    assert float_of(values.astype(np.float16).astype(np.float64)) == np.float16
    assert float_of(values) == np.float32  # no answer is held to more than float32's precision
    assert float_of(np.zeros(0)) == np.float32


def test_a_float16_answer_off_by_far_more_than_float16_rounds_still_fails():
    code = ATTENTION.format(name="causal_attention", dt="float16", mask=CAUSAL_MASK).replace(
        "w = e / e.sum(axis=-1, keepdims=True)", "w = e / e.sum(axis=-1, keepdims=True) * np.float16(0.9)")
    result = grade(code, "causal_attention")
    assert not result["correct"] and "sums to 1 −" in feedback(result)
