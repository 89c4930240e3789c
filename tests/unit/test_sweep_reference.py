"""tests/support/sweep_reference.py (the reference sweep) and lessonpy.maths.score_draws: the claims the lesson's sqrt(d_k) step makes."""

import math
import time

import numpy as np
import pytest

import sweep_reference as experiments
from lessonpy.maths import score_draws
from sweep_reference import (
    DEFAULT_D_KS,
    draft_step2,
    draft_step2_many,
    expected_score_std,
    scaling_sweep,
)


@pytest.fixture(scope="module")
def unscaled():
    return scaling_sweep(DEFAULT_D_KS, T=8, scale=False, seed=0)


@pytest.fixture(scope="module")
def scaled():
    return scaling_sweep(DEFAULT_D_KS, T=8, scale=True, seed=0)


def test_scaled_scores_have_unit_std_at_every_d_k(scaled):
    assert scaled["d_k"] == list(DEFAULT_D_KS)
    for std in scaled["score_std"]:
        assert std == pytest.approx(1.0, abs=0.1)


def test_unscaled_std_grows_like_sqrt_d_k(unscaled):
    for d, std in zip(unscaled["d_k"], unscaled["score_std"]):
        assert std / math.sqrt(d) == pytest.approx(1.0, abs=0.1)
    # and the fitted exponent of std ~ d_k^a is 1/2
    slope = np.polyfit(np.log(unscaled["d_k"]), np.log(unscaled["score_std"]), 1)[0]
    assert slope == pytest.approx(0.5, abs=0.05)


def test_unscaled_rows_saturate_at_large_d_k(unscaled):
    i = unscaled["d_k"].index(512)
    assert unscaled["mean_max_weight"][i] > 0.9
    assert unscaled["mean_entropy"][i] < 0.1 * unscaled["log_T"]
    assert unscaled["mean_softmax_grad"][i] < 0.1
    # and it gets worse steadily as d_k grows
    assert unscaled["mean_entropy"][0] > 3 * unscaled["mean_entropy"][i]


def test_scaled_rows_stay_broad_at_every_d_k(scaled):
    log_T = scaled["log_T"]
    for e, m, g in zip(scaled["mean_entropy"], scaled["mean_max_weight"], scaled["mean_softmax_grad"]):
        assert 0.75 * log_T < e <= log_T  # unit-variance scores: about log T - 1/2
        assert m < 0.5
        assert g > 0.6


def test_properly_initialised_projections_behave_like_unit_q_k():
    scaled = scaling_sweep((16, 64, 256), T=8, scale=True, init="projected", seed=0)
    for std, e in zip(scaled["score_std"], scaled["mean_entropy"]):
        assert std == pytest.approx(1.0, abs=0.2)
        assert e > 0.75 * scaled["log_T"]


def test_draft_init_stays_saturated_even_when_scaled():
    r = scaling_sweep((16, 64, 256), T=8, scale=True, init="draft", seed=0)
    for d, std, m in zip(r["d_k"], r["score_std"], r["mean_max_weight"]):
        assert std == pytest.approx(d, rel=0.25)  # sqrt(d^3) / sqrt(d) = d, not 1
        assert m > 0.9
    assert r["expected_score_std"] == [16.0, 64.0, 256.0]


def test_expected_score_std():
    assert expected_score_std(64, "unit", scale=False) == 8.0
    assert expected_score_std(64, "unit", scale=True) == 1.0
    assert expected_score_std(64, "draft", scale=False) == 512.0
    assert expected_score_std(64, "draft", scale=True) == 64.0


def test_sweep_is_deterministic_and_independent_of_call_history():
    a = scaling_sweep([64], T=8, seed=3)
    score_draws._unit_cache.clear()
    b = scaling_sweep(DEFAULT_D_KS, T=8, seed=3)
    score_draws._unit_cache.clear()
    c = scaling_sweep([64], T=8, seed=3)
    assert a["score_std"][0] == b["score_std"][4] == c["score_std"][0]
    assert scaling_sweep([64], T=8, seed=4)["score_std"] != a["score_std"]


def test_temperature_divides_the_scores():
    base = scaling_sweep([64], T=8, seed=0)
    hot = scaling_sweep([64], T=8, seed=0, temperature=2.0)
    assert hot["score_std"][0] == pytest.approx(base["score_std"][0] / 2)
    assert hot["mean_entropy"][0] > base["mean_entropy"][0]


def test_sweep_returns_plain_python_numbers(scaled):
    for key, value in scaled.items():
        values = value if isinstance(value, list) else [value]
        assert all(type(v) in (int, float, bool, str) for v in values), key


def test_sweep_rejects_bad_arguments():
    for kwargs in ({"d_ks": []}, {"d_ks": [0]}, {"T": 1}, {"temperature": 0}, {"init": "xavier"},
                   {"n_trials": 0}):
        with pytest.raises(ValueError):
            scaling_sweep(**kwargs)


def test_sweep_is_fast_enough_for_a_slider():
    scaling_sweep(T=16, seed=0)  # the first call draws; a slider's later calls reuse it
    start = time.perf_counter()
    for temperature in (0.5, 1.0, 2.0, 4.0):
        scaling_sweep(T=16, seed=0, temperature=temperature)
    assert (time.perf_counter() - start) / 4 < 0.05  # a few ms here; generous for slow CI


# -----------------------------------------------------------------------------
# the draft's Step 2, as written


def test_draft_step2_seed_0():
    r = draft_step2(0)
    assert (r["T"], r["D"]) == (4, 64)
    assert r["score_max"] > 700  # not "-150 to +200"
    assert r["q_var"] > 40  # q entries have variance ~D, not 1
    assert r["naive_nan_rows"] >= 1  # np.exp overflowed
    assert r["entropy_row0_scaled"] < 0.01  # dividing by 8 did not help
    assert r["scaled_score_std"] > 30
    assert r["fixed_mean_entropy_scaled"] > 1.0  # W ~ N(0, 1/D) does


def test_draft_step2_many_seeds():
    r = draft_step2_many(range(200))
    assert r["n_seeds"] == 200
    assert r["score_std"] == pytest.approx(512, rel=0.15)  # sqrt(D^3)
    assert r["scaled_score_std"] == pytest.approx(64, rel=0.15)  # D, not 1
    assert r["q_var"] == pytest.approx(64, rel=0.1)
    assert r["frac_any_nan"] > 0.5  # the unstable softmax breaks on most seeds
    assert r["entropy_row0_scaled"] < 0.1  # far from log 4 = 1.39
    assert r["max_weight_scaled"] > 0.95
    assert 1.0 < r["fixed_mean_entropy_scaled"] < r["log_T"]


def test_draft_step2_leaves_global_random_state_alone():
    np.random.seed(123)
    expected = np.random.rand()
    np.random.seed(123)
    draft_step2(5)
    assert np.random.rand() == expected
