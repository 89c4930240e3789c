"""What Lesson 5 (lessons/causal-mask.md) says in words, held where its cells print no number: the ways to mask
and the one that breaks, the cost of generating without a cache, grouped-query attention's layout, and
SmolLM2's cache. Its printed numbers are held by tests/unit/test_every_lesson.py (CELL_PRINTS of
lessons/causal_mask_numbers.py); its PyTorch module by tests/unit/test_scaffold_causal_torch.py."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from lessonpy.models import realheads
from lessonpy.maths.attention import softmax

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lessons"))
import causal_mask_numbers as lesson  # noqa: E402 - the lesson's numbers module, next to it


def future(T):
    return np.triu(np.ones((T, T), dtype=bool), k=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_negative_number_masks_exactly_as_minus_infinity_in_float32_and_float64(dtype):
    scores = lesson.example()["scores"].astype(dtype)
    assert np.array_equal(softmax(np.where(future(6), dtype(-1e9), scores)), softmax(np.where(future(6), -np.inf, scores)))


def test_but_not_in_float16_whose_largest_magnitude_is_65504():
    assert np.finfo(np.float16).max == 65504
    with np.errstate(over="ignore"):
        assert np.float16(-1e9) == -np.inf  # it is -inf by overflow: the constant does not fit


def test_zeroing_after_the_softmax_scales_each_output_by_its_rows_share_of_the_past():
    ex = lesson.example()
    w_open = softmax(ex["scores"])
    after = w_open * ~future(6)
    right = softmax(np.where(future(6), -np.inf, ex["scores"])) @ ex["V"]
    past_share = after.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(after @ ex["V"], right * past_share)
    np.testing.assert_allclose(past_share[:, 0], 1 - (w_open * future(6)).sum(axis=1))  # not the future's share


def test_a_row_with_every_key_masked_is_nan_and_the_finite_minimum_makes_it_uniform():
    scores = lesson.example()["scores"]
    with np.errstate(invalid="ignore"):
        assert np.isnan(softmax(np.where(np.triu(np.ones((6, 6), dtype=bool)), -np.inf, scores))[0]).all()
    low = np.finfo(np.float64).min
    np.testing.assert_allclose(softmax(np.where(np.triu(np.ones((6, 6), dtype=bool)), low, scores))[0], 1 / 6)


@pytest.mark.parametrize("T", [1, 2, 17, 1024])
def test_recomputing_k_and_v_every_step_costs_t_plus_1_over_2_times_the_cache(T):
    per_token = 2 * 768 * 64
    assert sum((t + 1) * per_token for t in range(T)) / (T * per_token) == (T + 1) / 2


def test_query_head_h_reads_key_value_head_h_over_the_group_size_as_np_repeat_lays_them_out():
    k = np.arange(2 * 5 * 4).reshape(2, 5, 4)
    repeated = np.repeat(k, 3, axis=0)
    for h in range(6):
        assert np.array_equal(repeated[h], k[h // 3])


def test_smollm2s_two_heads_share_keys_and_values_and_its_cache_per_token():
    smol = realheads.Heads.load("smollm2")
    group = smol.heads // smol.meta["kv_heads"]
    a, b = smol.featured_head("induction"), smol.featured_head("first")
    assert (a["layer"], a["head"] // group) == (b["layer"], b["head"] // group)
    # the quiz (a fence, where {{ num.* }} cannot go) names them: 9 query heads, 3 key/value heads, heads 6 and 8 of 18
    assert (smol.heads, smol.meta["kv_heads"], a["layer"], a["head"], b["head"]) == (9, 3, 18, 6, 8)
    for s in range(len(smol.sentences)):
        (Qa, Ka, Va), (Qb, Kb, Vb) = smol.qkv(s, "induction"), smol.qkv(s, "first")
        assert np.array_equal(Ka, Kb) and np.array_equal(Va, Vb) and not np.array_equal(Qa, Qb)
    assert lesson.numbers()["smol_cache_bytes"] == 2 * 30 * 3 * 64 * 2 == 23_040
