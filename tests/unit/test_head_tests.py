"""The head tests on repeated random tokens (lessonpy.models.head_tests) and the ablation results (lessonpy.models.ablation):
the definitions on made-up weights, the committed data's shape and size, the featured heads being the tests'
picks, and the lesson's numbers coming from the data. No model weights needed (tests/build/test_realheads_models.py
recomputes the data from the pinned weights)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from lessonpy.models import ablation, head_tests, realheads
import attention_numbers  # the lesson's numbers module, beside it (lessons/)

#: the committed head-test and ablation data must stay small (tens of KB, gzipped)
MAX_BYTES = 60_000
N = 5


def perfect(test, n, causal, draws=2, L=1, H=2):
    """Weights (draws, L, H, T, T) whose head 0 puts everything on the test's target and head 1 spreads
    evenly over the keys it may see."""
    T = 2 * n + 1 if causal else 2 * n + 2
    allowed = np.tril(np.ones((T, T))) if causal else np.ones((T, T))
    w = np.zeros((draws, L, H, T, T))
    w[:, :, 1] = allowed / allowed.sum(-1, keepdims=True)
    w[:, :, 0, np.arange(T), 0] = 1.0  # rows the test does not score: all on the first key
    rows, keys = head_tests.targets(test, n, causal)
    w[:, :, 0, rows] = 0.0
    w[:, :, 0, rows, keys] = 1.0
    return w


@pytest.mark.parametrize("causal", [True, False])
def test_a_head_doing_the_job_scores_1_and_an_even_head_scores_the_chance_baseline(causal):
    for test in head_tests.TESTS[causal]:
        s = head_tests.scores(perfect(test, N, causal), test, N, causal)
        assert s[0, 0] == pytest.approx(1.0)
        assert s[0, 1] == pytest.approx(head_tests.chance(test, N, causal))


def test_the_targets_are_what_the_definitions_say():
    ids = head_tests.sequences(np.array([[7, 8, 9, 10, 11]]), start=0)[0]  # 0 7 8 9 10 11 7 8 9 10 11
    for test, want in (("previous", lambda t: ids[t - 1]), ("duplicate", lambda t: ids[t]),
                       ("induction", lambda t: ids[t + 1])):
        rows, keys = head_tests.targets(test, N, causal=True)
        assert list(rows) == list(range(N + 1, 2 * N + 1))  # the second copy
        if test == "previous":
            assert [ids[k] for k in keys] == [want(t) for t in rows]
        elif test == "duplicate":
            assert all(ids[k] == ids[t] and k < t for t, k in zip(rows, keys))
        else:  # the token after the earlier copy of ids[t] is the one that follows ids[t] now
            assert all(ids[k - 1] == ids[t] and k <= t for t, k in zip(rows, keys))
    rows, keys = head_tests.targets("next", N, causal=False)
    assert rows[0] == 1 and rows[-1] == 2 * N - 1 and list(keys) == list(rows + 1)  # not onto [SEP]
    rows, keys = head_tests.targets("duplicate", N, causal=False)
    assert list(rows) == list(range(1, 2 * N + 1)) and all(abs(k - t) == N for t, k in zip(rows, keys))
    with pytest.raises(ValueError, match="no test 'induction' for a bidirectional"):
        head_tests.targets("induction", N, causal=False)
    with pytest.raises(ValueError, match="no test 'next' for a causal"):
        head_tests.targets("next", N, causal=True)
    assert head_tests.chance("first", N, causal=False) == pytest.approx(1 / (2 * N + 2))
    assert head_tests.chance("first", N, causal=True) == pytest.approx(np.mean(1 / np.arange(N + 2, 2 * N + 2)))


def test_the_draws_are_seeded_and_never_repeat_a_token_within_a_copy():
    a = head_tests.draw(3, 4, 20, np.arange(100, 200))
    assert np.array_equal(a, head_tests.draw(3, 4, 20, np.arange(100, 200)))
    assert all(len(set(row)) == 20 for row in a) and a.min() >= 100 and a.max() < 200


def test_summary_names_the_best_the_runner_up_and_counts_above_the_thresholds():
    table = np.array([[0.1, 0.95], [0.6, 0.85]])
    s = head_tests.summary(table, 0.03)
    assert s["best"] == {"layer": 0, "head": 1, "score": 0.95}
    assert s["runner_up"] == {"layer": 1, "head": 1, "score": 0.85}
    assert s["gap"] == pytest.approx(0.1) and s["above"] == {0.5: 3, 0.8: 2}
    assert [head_tests.rank(table, 0, 1), head_tests.rank(table, 1, 0), head_tests.rank(table, 0, 0)] == [1, 3, 4]


def test_the_committed_results_cover_every_head_and_test():
    data = head_tests.load()
    for name in realheads.MODELS:
        heads, model = realheads.load(name), data["models"][name]
        assert model["causal"] == heads.causal and set(model["tests"]) == set(head_tests.TESTS[heads.causal])
        assert np.array(model["random"]).shape == (model["draws"], model["n"])
        assert 20 <= model["n"] <= 50 and 5 <= model["draws"] <= 10
        for test, result in model["tests"].items():
            assert result["scores"].shape == (heads.layers, heads.heads)
            assert result["chance"] == pytest.approx(head_tests.chance(test, model["n"], heads.causal), abs=1e-5)
            assert result["rows"] == len(head_tests.targets(test, model["n"], heads.causal)[0])


def test_the_featured_heads_are_the_tests_picks():
    summaries = head_tests.summaries()
    for name in realheads.MODELS:
        heads = realheads.load(name)
        assert heads.featured == realheads.featured_heads(heads, [f["job"] for f in heads.featured], summaries[name])
        for f in heads.featured:
            best = summaries[name][f["test"]]["best"]
            assert (f["layer"], f["head"]) == (best["layer"], best["head"])
            assert f["test_score"] >= f["test_runner_up"] and f["test_score"] > 10 * f["chance"]


def test_the_lesson_numbers_of_the_tests_come_from_the_data():
    values = attention_numbers.numbers()
    for name, tests in head_tests.summaries().items():
        for test, s in tests.items():
            key = f"{name}_test_{test}"
            assert values[f"{key}_layer"] == str(s["best"]["layer"]) and values[f"{key}_head"] == str(s["best"]["head"])
            assert values[f"{key}_score"] == f"{s['best']['score']:.2f}"
            assert values[f"{key}_runner_up"] == f"{s['runner_up']['score']:.2f}"
            assert values[f"{key}_chance"] == f"{s['chance']:.3f}"
            assert values[f"{key}_above_05"] == str(s["above"][0.5])
    heads = realheads.load("smollm2")
    f = heads.featured_head("induction")
    assert values["smollm2_induction_layer"] == values["smollm2_test_induction_layer"] == str(f["layer"])
    on_sentences, _ = realheads.head_scores(heads)["induction"]
    best = np.unravel_index(np.argmax(on_sentences), on_sentences.shape)
    assert values["smollm2_induction_sentence_best_layer"] == str(best[0])
    scores = head_tests.load()["models"]["smollm2"]["tests"]["induction"]["scores"]
    assert values["smollm2_induction_sentence_best_test_rank"] == str(head_tests.rank(scores, *best))


def test_the_ablation_results_cover_every_head_of_smollm2():
    data, heads = ablation.load(), realheads.load("smollm2")
    tests = head_tests.load()["models"]["smollm2"]
    assert data["loss"].shape == (heads.layers, heads.heads, data["draws"]) and data["method"] == "mean"
    assert data["n"] == tests["n"] and data["seed"] == tests["seed"] and data["draws"] <= tests["draws"]
    assert data["predictions_per_draw"] == data["n"] - 1
    assert np.all(data["loss"] > 0) and np.all(data["baseline"] > 0)
    runs = data["example"]["runs"]
    assert runs[0]["knocked"] is None and [r["knocked"]["test"] for r in runs[1:]] == list(ablation.EXAMPLE_TESTS)
    for r in runs:
        assert len(r["p_correct"]) == len(r["top"]) == len(r["top_text"]) == data["n"] - 1


def test_the_lesson_numbers_of_the_ablation_come_from_the_data():
    values, data = attention_numbers.numbers(), ablation.load()
    rise = data["loss"].mean(-1) - data["baseline"].mean()
    layer, head = np.unravel_index(np.argmax(rise), rise.shape)
    assert (values["ablation_top1_layer"], values["ablation_top1_head"]) == (str(layer), str(head))
    assert values["ablation_top1_increase"] == f"{rise.max():.2f}"
    b = head_tests.summaries()["smollm2"]["induction"]["best"]
    assert values["ablation_induction_increase"] == f"{rise[b['layer'], b['head']]:.2f}"
    r = head_tests.summaries()["smollm2"]["induction"]["runner_up"]
    assert values["ablation_induction_runner_up_increase"] == f"{rise[r['layer'], r['head']]:.2f}"
    assert values["ablation_induction_rank"] == str(int((rise > rise[b["layer"], b["head"]]).sum()) + 1)
    assert values["ablation_baseline_loss"] == f"{data['baseline'].mean():.2f}"


def test_the_lesson_numbers_of_changed_minilm_heads_come_from_the_data():
    """The numbers next to the live panel's "Change heads" are what the shipped data says, and of the sentences
    the panel shows first (lessonpy.models.live): the lesson's words and the panel's table are about the same thing."""
    from lessonpy.models import live, sentence_changes

    values, data = attention_numbers.numbers(), sentence_changes.load()
    assert (data["sentence"], data["others"]) == (live.SENTENCE, list(live.OTHERS))
    trained = np.asarray(data["trained"])
    assert [values[f"changes_trained_{i}"] for i in range(len(trained))] == [f"{c:.2f}" for c in trained]
    off = data["changes"]["off"]
    moved = np.abs(off["single"][..., :-1] - trained).max(-1)  # (L, H): the most one head moves any cosine
    layer, head = np.unravel_index(moved.argmax(), moved.shape)
    assert (values["changes_off_single_layer"], values["changes_off_single_head"]) == (str(layer), str(head))
    assert values["changes_off_single_max"] == f"{moved.max():.2f}"
    assert values["changes_off_layer_max"] == f"{np.abs(off['layer'][:, :-1] - trained).max():.2f}"
    worst = off["layer"][:, -1].argmin()
    assert (values["changes_off_self_layer"], values["changes_off_layer_self_min"]) == (str(worst), f"{off['layer'][worst, -1]:.2f}")
    # what the prose says of them: the reordered words beat the paraphrase; a single head moves less than a layer
    assert trained[2] > trained[0]
    assert float(values["changes_off_single_max"]) < float(values["changes_off_layer_max"])


def test_the_head_test_and_ablation_data_are_small():
    from lessonpy.models import sentence_changes

    for path in (head_tests.DATA_PATH, ablation.DATA_PATH, sentence_changes.DATA_PATH):
        assert len(gzip.compress(path.read_bytes())) <= MAX_BYTES, path.name


def test_the_ablation_views_payload_has_the_costliest_and_the_named_heads_and_the_wrong_tokens():
    data = ablation.load()
    p = ablation.payload(data, target="real", shown=5)
    named = {(n["layer"], n["head"]) for n in data["named"]}
    shown = [(h["layer"], h["head"]) for h in p["heads"]]
    assert shown[:5] == [(layer, head) for layer, head, _ in ablation.ranked(data)[:5]]
    assert named <= set(shown) and len(shown) == len(set(shown))
    assert all(bool(h["names"]) == ((h["layer"], h["head"]) in named) for h in p["heads"])
    rise = p["arrays"]["increase"]
    assert rise.dtype == np.float32 and rise.shape == (p["layers"], p["heads_per_layer"])
    assert [r["knocked"] for r in p["example"]["runs"]][0] is None
    ids, n = data["example"]["ids"], data["n"]
    for run, shipped in zip(p["example"]["runs"], data["example"]["runs"]):
        assert run["wrong"] == [top != ids[t + 1] for top, t in zip(shipped["top"], range(n + 1, 2 * n))]
    assert len(p["example"]["tokens"]) == n - 1
