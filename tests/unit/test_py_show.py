"""lessonpy.maths.show.show_attention: derive, validate, emit one payload for the page."""

import math

import numpy as np
import pytest

from lessonpy.runtime import bridge
from lessonpy.maths.attention import example_inputs, softmax
from lessonpy.maths.show import MAX_D, MAX_T, ShowError, show_attention


@pytest.fixture(autouse=True)
def events(bridge_events):
    """The events show_attention emits during one test."""
    return bridge_events


@pytest.fixture
def qkv():
    ex = example_inputs(T=4, D=8, seed=0)
    x = ex["x"]
    return x, x @ ex["W_q"], x @ ex["W_k"], x @ ex["W_v"]


def last_payload(events):
    assert events, "nothing was emitted"
    kind, payload = events[-1]
    assert kind == "arrays"
    return payload


def shows_error(events, match, **kwargs):
    """show_attention(**kwargs) raises ShowError matching `match` and emits it too."""
    with pytest.raises(ShowError, match=match) as info:
        show_attention(**kwargs)
    message = str(info.value)
    assert "\n" not in message
    payload = last_payload(events)
    assert payload["view"] == "attention" and payload["error"] == message
    assert "arrays" not in payload
    return message


# -----------------------------------------------------------------------------
# success: what gets derived and what the payload looks like


def test_payload_structure(events, qkv, capsys):
    x, Q, K, V = qkv
    assert show_attention(x=x, Q=Q, K=K, V=V, tokens=["a", "b", "c", "d"],
                          title="Step 1", target="step1") is None
    assert capsys.readouterr() == ("", "")  # prints nothing
    assert len(events) == 1
    p = last_payload(events)
    assert set(p) == {"view", "title", "target", "tokens", "arrays", "derived", "causal", "stats", "qk_divisor"}
    assert p["causal"] is False
    assert (p["view"], p["title"], p["target"]) == ("attention", "Step 1", "step1")
    assert p["tokens"] == ["a", "b", "c", "d"]
    assert p["derived"] == ["scores", "weights", "out"]
    shapes = {"x": (4, 8), "Q": (4, 8), "K": (4, 8), "V": (4, 8),
              "scores": (4, 4), "weights": (4, 4), "out": (4, 8)}
    assert {k: a.shape for k, a in p["arrays"].items()} == shapes
    for a in p["arrays"].values():
        assert isinstance(a, np.ndarray) and a.dtype == np.float32 and a.flags.c_contiguous


def test_derives_scaled_scores_weights_and_out(events, qkv):
    _, Q, K, V = qkv
    show_attention(Q=Q, K=K, V=V)
    a = last_payload(events)["arrays"]
    scores = Q @ K.T / math.sqrt(8)
    np.testing.assert_allclose(a["scores"], scores, rtol=1e-5)
    np.testing.assert_allclose(a["weights"], softmax(scores), rtol=1e-5)
    np.testing.assert_allclose(a["out"], softmax(scores) @ V, rtol=1e-5, atol=1e-6)
    stats = last_payload(events)["stats"]
    assert stats["scores_divided_by"] == pytest.approx(math.sqrt(8))
    assert stats["weights_match_scores"] is True


def test_keeps_the_readers_arrays(events, qkv):
    _, Q, K, V = qkv
    weights = softmax(Q @ K.T)  # the reader forgot to scale: their choice, drawn as is
    show_attention(Q=Q, K=K, weights=weights)
    p = last_payload(events)
    np.testing.assert_allclose(p["arrays"]["weights"], weights, rtol=1e-5)
    # the derived scores are the ones these weights came from (unscaled)
    np.testing.assert_allclose(p["arrays"]["scores"], Q @ K.T, rtol=1e-5)
    assert p["stats"]["scores_divided_by"] == 1.0
    assert p["derived"] == ["scores"]
    assert "out" not in p["arrays"]  # no V, no out


def test_reports_weights_that_do_not_match_scores(events, qkv):
    _, Q, K, _ = qkv
    scores = Q @ K.T / math.sqrt(8)
    show_attention(scores=scores, weights=softmax(scores / 3))  # a temperature
    p = last_payload(events)
    assert p["derived"] == []
    assert p["stats"]["weights_match_scores"] is False


def test_qk_divisor_says_how_each_score_is_q_dot_k(events, qkv):
    """The step-through writes a score as q·k / qk_divisor: only when that is what the scores are."""
    x, Q, K, V = qkv
    show_attention(Q=Q, K=K)
    assert last_payload(events)["qk_divisor"] == pytest.approx(math.sqrt(8))
    show_attention(Q=Q, K=K, scores=Q @ K.T)  # the reader's own, unscaled
    assert last_payload(events)["qk_divisor"] == 1.0
    masked = np.where(np.tril(np.ones((4, 4), dtype=bool)), Q @ K.T / math.sqrt(8), -np.inf)
    show_attention(Q=Q, K=K, scores=masked)  # a causal mask: the kept scores still are q·k / sqrt(d_k)
    assert last_payload(events)["qk_divisor"] == pytest.approx(math.sqrt(8))
    show_attention(Q=Q, K=K, scores=Q @ K.T / 3.0)  # a temperature: not q·k over either
    assert last_payload(events)["qk_divisor"] is None
    show_attention(weights=softmax(Q @ K.T))  # no Q and K
    assert last_payload(events)["qk_divisor"] is None


def test_weights_alone_and_default_tokens(events):
    show_attention(weights=np.full((3, 3), 1 / 3))
    p = last_payload(events)
    assert p["tokens"] == ["t0", "t1", "t2"]
    assert list(p["arrays"]) == ["weights"] and p["derived"] == []
    assert p["title"] is None and p["target"] is None
    assert p["stats"]["row_entropy"] == pytest.approx([math.log(3)] * 3)


def test_scores_with_masked_entries(events):
    scores = np.where(np.tril(np.ones((4, 4), dtype=bool)), 0.0, -np.inf)
    show_attention(scores=scores)
    p = last_payload(events)
    np.testing.assert_allclose(p["arrays"]["weights"][3], 0.25)
    assert p["arrays"]["weights"][0, 1] == 0
    assert p["stats"]["masked"] == 6


def test_stats(events, qkv):
    _, Q, K, V = qkv
    show_attention(Q=Q, K=K, V=V)
    s = last_payload(events)["stats"]
    w = softmax(Q @ K.T / math.sqrt(8))
    assert s["T"] == 4 and s["d_k"] == 8 and s["d_v"] == 8
    assert s["log_T"] == pytest.approx(math.log(4))
    assert s["argmax"] == w.argmax(-1).tolist()
    assert s["max_weight"] == pytest.approx(w.max(-1).tolist())
    assert all(0 <= e <= math.log(4) + 1e-9 for e in s["row_entropy"])
    assert s["mean_entropy"] == pytest.approx(np.mean(s["row_entropy"]))
    for value in s.values():  # plain Python values, ready for JSON
        assert isinstance(value, (int, float, bool, list))


def test_accepts_lists_ints_float32_and_a_batch_of_one(events, qkv):
    _, Q, K, V = qkv
    show_attention(weights=[[1, 0], [0, 1]])
    assert last_payload(events)["arrays"]["weights"].dtype == np.float32
    show_attention(Q=Q[None].astype(np.float32), K=K[None], V=V[None])  # (1, T, D)
    p = last_payload(events)
    assert p["arrays"]["Q"].shape == (4, 8) and p["arrays"]["out"].shape == (4, 8)
    show_attention(weights=np.eye(3)[None, None])  # (1, 1, T, T)
    assert last_payload(events)["arrays"]["weights"].shape == (3, 3)


def test_long_labels_are_cut_and_labels_become_strings(events):
    show_attention(weights=np.eye(2), tokens=["x" * 100, 7])
    tokens = last_payload(events)["tokens"]
    assert len(tokens[0]) == 32 and tokens[0].endswith("…")
    assert tokens[1] == "7"


def test_works_with_a_sink_installed(qkv):
    got = []
    bridge.install_sink(lambda kind, payload: got.append((kind, payload)))
    try:
        show_attention(weights=np.eye(2))
        with pytest.raises(ShowError):
            show_attention(weights=np.ones((2, 2)))
    finally:
        bridge.install_sink(None)
    assert [kind for kind, _ in got] == ["arrays", "arrays"]
    assert "error" in got[1][1] and bridge.recorded == []


# -----------------------------------------------------------------------------
# validation: every message is one line, raised and emitted


def test_rows_not_summing_to_one(events):
    w = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.9, 0.37, 0.1]])
    msg = shows_error(events, "did you forget to normalise", weights=w)
    assert msg.startswith("weights: row 2 sums to 1.37, not 1")


def test_columns_normalised_instead_of_rows(events):
    w = softmax(np.random.default_rng(0).standard_normal((4, 4)), axis=0)
    shows_error(events, r"columns sum to 1 .*axis=-1", weights=w)


def test_negative_weights(events):
    shows_error(events, r"weights: entry \(0, 1\) is -0.5.*can't be negative",
                weights=[[1.5, -0.5], [0.5, 0.5]])


def test_nan_and_inf(events, qkv):
    _, Q, K, _ = qkv
    w = np.full((3, 3), 1 / 3)
    w[1, 2] = np.nan
    shows_error(events, r"weights: contains NaN, first at row 1, column 2 \(did np.exp overflow",
                weights=w)
    Qbad = Q.copy()
    Qbad[0, 3] = np.inf
    shows_error(events, r"Q: contains inf at row 0, column 3", Q=Qbad, K=K)
    shows_error(events, r"scores: contains inf", scores=[[np.inf, 0], [0, 0]])
    shows_error(events, r"scores: row 1 is entirely -inf", scores=[[0, -np.inf], [-np.inf, -np.inf]])


def test_values_too_large_for_float32(events, qkv):
    shows_error(events, r"scores: holds values as large as 1e\+300", scores=[[1e300, 0], [0, 0]])
    _, Q, K, _ = qkv
    shows_error(events, r"scores \(computed from your arrays\): holds values as large as",
                Q=Q * 1e20, K=K * 1e20)


def test_shape_problems(events, qkv):
    _, Q, K, V = qkv
    shows_error(events, r"Q has d_k=8 but K has d_k=5: they must match", Q=Q, K=K[:, :5])
    shows_error(events, r"K: has 3 positions but Q has 4", Q=Q, K=K[:3])
    shows_error(events, r"weights: expected a square \(T, T\) array", weights=np.full((2, 3), 1 / 3))
    shows_error(events, r"out has 3 features but V has 8", Q=Q, K=K, V=V, out=np.zeros((4, 3)))
    shows_error(events, r"Q: expected a 2-D \(T, d_k\) array, got shape \(8,\)", Q=Q[0], K=K)
    shows_error(events, r"weights: expected a 2-D \(T, T\) array, got shape \(\)", weights=1.0)


def test_batches_and_heads_are_rejected_with_a_hint(events, qkv):
    _, Q, K, _ = qkv
    shows_error(events, r"Q: got a batch of 2 \(shape \(2, 4, 8\)\); pass one sequence, e.g. Q\[0\]",
                Q=np.stack([Q, Q]), K=K)
    shows_error(events, r"weights: got shape \(2, 12, 4, 4\).*\(B, H, T, \.\.\.\).*weights\[0, 0\]",
                weights=np.full((2, 12, 4, 4), 0.25))
    shows_error(events, r"5-D", weights=np.full((2, 1, 1, 4, 4), 0.25))


def test_empty_and_non_numeric(events):
    shows_error(events, r"weights: is empty \(shape \(0, 0\)\)", weights=np.zeros((0, 0)))
    shows_error(events, r"weights: expected numbers, got a str", weights="0.5 0.5")
    shows_error(events, r"weights: expected numbers, got an array of dtype <U1",
                weights=[["a", "b"], ["c", "d"]])
    shows_error(events, r"weights: rows of different lengths", weights=[[1.0, 0.0], [1.0]])
    shows_error(events, r"weights: could not turn it into an array of numbers",
                weights=np.array([[None, 1], [1, 0]], dtype=object))
    shows_error(events, r"True/False", weights=np.eye(2, dtype=bool))
    shows_error(events, r"complex", weights=np.eye(2) + 0j)


def test_nothing_or_not_enough_to_draw(events, qkv):
    x, Q, K, V = qkv
    shows_error(events, r"nothing to show: pass weights=, scores=, or Q= and K=")
    shows_error(events, r"can't draw attention from Q alone: also pass K", Q=Q)
    shows_error(events, r"from K and V alone: also pass Q", K=K, V=V)
    shows_error(events, r"from x alone: also pass Q and K", x=x)


def test_tokens_problems(events):
    w = np.full((4, 4), 0.25)
    shows_error(events, r"tokens: got 3 labels for T=4 positions", weights=w, tokens=["a", "b", "c"])
    shows_error(events, r"tokens: pass a list of labels, one per position, e\.g\. \['a', 'b'",
                weights=w, tokens="a b c d")
    shows_error(events, r"tokens: pass a list of labels, got int", weights=w, tokens=4)


class BadLabel:
    def __str__(self):
        raise ValueError("no name yet")


def test_a_label_that_cannot_become_text_is_a_show_error(events):
    shows_error(events, r"^tokens: label 1 cannot be turned into text: str\(\) raised ValueError: no name yet$",
                weights=np.full((3, 3), 1 / 3), tokens=["a", BadLabel(), "c"])


def test_an_endless_tokens_iterator_is_a_quick_show_error(events):
    import itertools
    import time
    started = time.perf_counter()
    shows_error(events, r"^tokens: got more than T=3 labels; pass one label per position$",
                weights=np.full((3, 3), 1 / 3), tokens=itertools.count())
    assert time.perf_counter() - started < 1
    def broken():
        yield "a"
        raise OSError("file vanished")
    shows_error(events, r"^tokens: reading the labels raised OSError: file vanished$",
                weights=np.full((3, 3), 1 / 3), tokens=broken())


def test_a_generator_of_exactly_T_labels_is_fine(events):
    show_attention(weights=np.full((3, 3), 1 / 3), tokens=(f"w{i}" for i in range(3)))
    assert last_payload(events)["tokens"] == ["w0", "w1", "w2"]


def test_title_and_target_types(events):
    shows_error(events, r"title: expected a string, got int", weights=np.eye(2), title=3)
    assert last_payload(events)["title"] is None
    shows_error(events, r"target: expected a string", weights=np.eye(2), target=["a"])


def test_size_caps(events):
    T = MAX_T + 1
    shows_error(events, rf"T={T} positions is more than this view draws \({MAX_T}\)",
                weights=np.eye(T))
    shows_error(events, rf"x: {MAX_D + 1} features is more than this view draws",
                x=np.zeros((2, MAX_D + 1)), weights=np.eye(2))
    show_attention(weights=np.eye(MAX_T))  # the cap itself is fine
    assert last_payload(events)["arrays"]["weights"].shape == (MAX_T, MAX_T)


# -----------------------------------------------------------------------------
# huge texts: every message and title the page gets is within MESSAGE_CHARS


def test_a_huge_text_is_clipped_in_the_error_and_the_title(events, qkv):
    from lessonpy.runtime.limits import MESSAGE_CHARS

    _, Q, K, _ = qkv
    message = shows_error(events, "tokens: pass a list of labels", Q=Q, K=K, tokens="t" * 10**7,
                          title="T" * 10**7)
    assert len(message) <= MESSAGE_CHARS and "characters not shown" in message
    assert len(last_payload(events)["title"]) <= MESSAGE_CHARS
    show_attention(Q=Q, K=K, title="T" * 10**7)
    title = last_payload(events)["title"]
    assert len(title) <= MESSAGE_CHARS and title.startswith("TTT") and "characters not shown" in title


# -----------------------------------------------------------------------------
# the causal mask: every way a cell hands over a causal head draws its future masked


def _causal(T):
    return np.tril(np.ones((T, T), dtype=bool))


@pytest.fixture
def causal_head(qkv):
    """Q, K, V of a head and its masked scores and weights, as Lesson 5's cells make them."""
    _, Q, K, V = qkv
    masked = np.where(_causal(4), Q @ K.T / math.sqrt(8), -np.inf)
    return Q, K, V, masked, softmax(masked)


@pytest.mark.parametrize("given", [
    "scores=masked",                        # Lesson 5's cell
    "scores=masked, weights=mine",          # Lesson 4's SmolLM2 cell
    "Q, K, weights=mine",                   # the same cell as it was written: the weights show the mask
    "scores=raw, weights=mine",
    "Q, K, causal=True",
    "scores=raw, causal=True",
    "weights=mine, causal=True",            # weights alone say nothing of a mask: causal=True does
])
def test_a_causal_head_is_drawn_masked_however_it_is_handed_over(events, causal_head, given):
    Q, K, V, masked, mine = causal_head
    raw = Q @ K.T / math.sqrt(8)
    kwargs = {"scores=masked": {"scores": masked}, "scores=masked, weights=mine": {"scores": masked, "weights": mine},
              "Q, K, weights=mine": {"Q": Q, "K": K, "weights": mine},
              "scores=raw, weights=mine": {"scores": raw, "weights": mine},
              "Q, K, causal=True": {"Q": Q, "K": K, "causal": True},
              "scores=raw, causal=True": {"scores": raw, "causal": True},
              "weights=mine, causal=True": {"weights": mine, "causal": True}}[given]
    show_attention(V=V, **kwargs)
    p = last_payload(events)
    s = p["stats"]
    assert p["causal"] is True and s["causal"] is True
    assert s["masked"] == 6  # the 4 * 3 / 2 keys after their query
    np.testing.assert_allclose(p["arrays"]["weights"], mine, atol=1e-6)
    if "scores" in p["arrays"]:
        np.testing.assert_array_equal(np.isneginf(p["arrays"]["scores"]), ~_causal(4))
        assert s["weights_match_scores"] is True and s["weights_gap"] < 1e-6
    # an even spread over the keys query i may see: log(i + 1), not log T
    assert s["even_entropy"] == pytest.approx(np.mean(np.log(np.arange(1, 5))))
    assert s["mean_entropy"] <= s["even_entropy"]


def test_weights_alone_are_not_taken_for_a_mask(events, causal_head):
    *_, mine = causal_head
    show_attention(weights=mine)  # zeros above the diagonal could be anything without causal=True
    p = last_payload(events)
    assert p["causal"] is False and p["stats"]["masked"] == 0


def test_an_unmasked_head_is_not_masked(events, qkv):
    _, Q, K, V = qkv
    show_attention(Q=Q, K=K, V=V, weights=softmax(Q @ K.T / math.sqrt(8)))
    p = last_payload(events)
    assert p["causal"] is False and p["stats"]["masked"] == 0 and not np.isinf(p["arrays"]["scores"]).any()
    assert p["stats"]["even_entropy"] == pytest.approx(math.log(4))


def test_another_mask_is_masked_but_not_called_causal(events):
    scores = np.zeros((3, 3))
    scores[:, 0] = -np.inf  # every query ignores key 0 (a padding mask)
    show_attention(scores=scores)
    s = last_payload(events)["stats"]
    assert last_payload(events)["causal"] is False and s["causal"] is False and s["masked"] == 3
    assert s["even_entropy"] == pytest.approx(math.log(2))


def test_causal_weights_that_look_ahead_are_refused(events, qkv):
    _, Q, K, _ = qkv
    leaky = softmax(Q @ K.T / math.sqrt(8))  # no mask
    message = shows_error(events, r"causal=True, but query 0 puts .* on key 1, which comes after it",
                          Q=Q, K=K, weights=leaky, causal=True)
    assert "-inf" in message
    shows_error(events, "causal: expected True or False", weights=np.eye(2), causal="yes")


def test_weights_that_are_not_the_scores_softmax_say_by_how_much(events, causal_head):
    Q, K, V, masked, mine = causal_head
    unmasked = softmax(Q @ K.T / math.sqrt(8))
    show_attention(scores=masked, weights=unmasked)  # masked scores, weights made without the mask
    s = last_payload(events)["stats"]
    assert s["weights_match_scores"] is False
    assert s["weights_gap"] == pytest.approx(np.abs(mine - unmasked).max())


@pytest.mark.parametrize("cell", ["real-head-minilm", "real-head-smollm2"])
@pytest.mark.parametrize("as_written", ["scores=masked", "Q, K only"])
def test_the_real_head_cells_draw_the_readers_pattern_without_an_alarm(events, cell, as_written):
    """Lesson 4's "your attention on a real head" cells, in CPython: the reader's Step 1 softmax of the shipped
    Q, K (masked for SmolLM2) matches the scores drawn beside it, and SmolLM2's future is masked, whether the
    cell passes the masked scores (as it does) or only Q and K with its weights (as it did)."""
    from lessonpy.models import realheads

    model, job, s = realheads.CELL_HEADS[cell]
    heads = realheads.load(model)
    Qh, Kh, Vh = heads.qkv(s, job)
    T = len(Qh)
    scores = Qh @ Kh.T / np.sqrt(Kh.shape[-1])
    if heads.causal:
        scores = np.where(_causal(T), scores, -np.inf)
    mine = softmax(scores)
    given = {"scores": scores} if as_written == "scores=masked" else {}
    show_attention(Q=Qh, K=Kh, V=Vh, weights=mine, tokens=heads.tokens(s), **given)
    st = last_payload(events)["stats"]
    assert st["weights_match_scores"] is True
    assert st["causal"] is heads.causal and st["masked"] == (T * (T - 1) // 2 if heads.causal else 0)
