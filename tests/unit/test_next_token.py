""""What comes next?" (lessonpy.models.next_token.predict) on the tiny random SmolLM2 (tests/support/smollm2_random.py):
the shifted targets and their losses, the top tokens, the knock-outs before and after, the cache of the pass as
trained, and the one-line errors. The preset's claim on the real model: tests/build/test_next_token_preset.py."""

from __future__ import annotations

import numpy as np
import pytest
from lessonpy.models import next_token, smollm2

from smollm2_random import SIZES, random_folder

TEXT = "a cab, a bad cab."


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return random_folder(tmp_path_factory.mktemp("smollm2"))


def test_the_reply_holds_the_shifted_targets_and_each_positions_loss(folder):
    m, tokenizer = smollm2.load(folder)
    reply = next_token.predict(TEXT, folder=folder, top=5)
    ids = reply["ids"]
    assert ids[0] == tokenizer.special[next_token.START] and ids[1:] == tokenizer.encode(TEXT)
    T = len(ids)
    assert reply["targets"] == reply["tokens"][1:] + [None]
    logits = smollm2.forward(m, ids, keep=())["logits"].astype(np.float64)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    trained = reply["trained"]
    assert np.allclose(trained["loss"], [-logp[t, ids[t + 1]] for t in range(T - 1)], atol=1e-5)
    assert np.allclose(trained["p_next"], np.exp(-np.asarray(trained["loss"])))
    assert trained["predicted"] == list(logits.argmax(-1))
    probs = [x["p"] for x in trained["top"]]
    assert len(probs) == 5 and probs == sorted(probs, reverse=True) and trained["top"][0]["id"] == logits[-1].argmax()
    assert np.isclose(probs[0], np.exp(logp[-1]).max())
    assert reply["knocked"] is None and reply["knock"] == []
    weights = reply["arrays"]["weights"]
    assert weights.shape == (SIZES["layers"], SIZES["heads"], T, T) and weights.dtype == np.float32
    assert np.allclose(weights.sum(-1), 1, atol=1e-5)


@pytest.mark.parametrize("kind", ["off", "mean"])
def test_a_knock_out_returns_both_passes_and_changes_the_prediction(folder, kind):
    m, _ = smollm2.load(folder)
    plain = next_token.predict(TEXT, folder=folder)
    reply = next_token.predict(TEXT, knock=[[0, 1, kind], [1, 3, kind]], folder=folder)
    assert reply["knock"] == [[0, 1, kind], [1, 3, kind]]
    assert reply["trained"] == plain["trained"]
    knocked = smollm2.forward(m, reply["ids"], knock=smollm2.knock_heads({(0, 1): kind, (1, 3): kind}), keep=())
    assert reply["knocked"]["predicted"] == list(knocked["logits"].argmax(-1))
    assert not np.allclose(reply["knocked"]["loss"], reply["trained"]["loss"])


def test_the_pass_as_trained_is_computed_once_per_text(folder, monkeypatch):
    next_token._clean.clear()
    calls = []
    real = smollm2.forward
    monkeypatch.setattr(smollm2, "forward", lambda *a, **k: calls.append(k.get("knock")) or real(*a, **k))
    next_token.predict(TEXT, knock=[[0, 0, "off"]], folder=folder)
    assert len(calls) == 2  # with the knock-out, then as trained
    next_token.predict(TEXT, knock=[[1, 2, "mean"]], folder=folder)
    assert len(calls) == 3  # as trained: kept


@pytest.mark.parametrize("text, knock, says", [
    ("   ", [], "type some text first"),
    ("a" * 200, [], f"at most {next_token.MAX_TOKENS - 1}"),
    (TEXT, [[2, 0, "off"]], "layers are 0 to 1"),
    (TEXT, [[0, 4, "off"]], "heads are 0 to 3"),
    (TEXT, [[0, 0, "half"]], "'off' or 'mean'"),
    (TEXT, [[0, 0]], r"\[layer, head, kind\]"),
    (TEXT, "0,0,off", "must be a list"),
])
def test_bad_input_says_what_is_wrong_in_one_line(folder, text, knock, says):
    with pytest.raises(ValueError, match=says) as info:
        next_token.predict(text, knock=knock, folder=folder)
    assert "\n" not in str(info.value)


def test_the_preset_is_the_head_tests_sequence_twice_and_its_heads_are_the_tests_best():
    from lessonpy.models import head_tests

    shipped = head_tests.load()["models"]["smollm2"]
    best = {t: [s["best"]["layer"], s["best"]["head"]] for t, s in head_tests.summaries()["smollm2"].items()}
    heads = next_token.preset_heads()
    assert heads == {"induction": [best["induction"], best["previous"]], "sink": [best["first"]]}

    class Decoder:
        def decode(self, ids):
            return "".join(f"<{i}>" for i in ids)

    text = next_token.preset(Decoder())
    assert text == Decoder().decode(shipped["random"][next_token.PRESET_DRAW]) * 2


@pytest.mark.parametrize("shape", [(7,), (3, 7), (2, 3, 7)])
def test_log_softmax_is_the_logits_less_their_log_sum_exp_and_leaves_them_alone(shape):
    """Worked out in place, a row at a time (to keep Python's wasm memory down): the same numbers as the formula,
    for one position, a text and a batch, with logits large enough that exp() would overflow unshifted."""
    logits = (np.random.default_rng(0).standard_normal(shape) * 300).astype(np.float32)
    before = logits.copy()
    got = next_token.log_softmax(logits)
    x = logits.astype(np.float64)
    top = x.max(-1, keepdims=True)
    want = x - top - np.log(np.exp(x - top).sum(-1, keepdims=True))
    assert got.dtype == np.float64 and got.shape == shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(logits, before)
