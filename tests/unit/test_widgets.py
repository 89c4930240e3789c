"""The widgets' Python (py/lessonpy/course/attention/widget_payloads.py) and the ```widget fence (sitebuild/pages/widget_fence.py), in CPython."""

from __future__ import annotations

import hashlib
import json
import math
import re

import numpy as np
import pytest

from lessonpy.runtime import bridge
from lessonpy.course.attention import widget_payloads as widgets
from lessonpy.maths.attention import attention_param_count, example_inputs
from sweep_reference import scaling_sweep
from lessonpy.maths.show import build_payload
from sitebuild.pages.lessons import LessonError
from sitebuild.pages import widget_specs
from sitebuild.pages.widget_fence import encode_array
from widget_render import data_blocks, render


@pytest.fixture(autouse=True)
def clean_bridge():
    bridge.recorded.clear()
    yield
    bridge.recorded.clear()


# ---------------------------------------------------------------------------- dk-explorer

def test_unscaled_large_dk_saturates_and_scaling_keeps_rows_soft():
    hard = widgets.explore(d_k=512, scale=False)["stats"]
    soft = widgets.explore(d_k=512, scale=True)["stats"]
    assert hard["max_max_weight"] > 0.99 and hard["saturated_rows"] == hard["T"]
    assert min(hard["max_weight"]) > 0.9 and hard["mean_entropy"] < 0.2
    assert soft["max_max_weight"] < 0.9 and soft["saturated_rows"] == 0
    assert soft["mean_entropy"] > 0.75 * soft["log_T"]
    assert 0.8 < soft["score_std"] < 1.2 and hard["all_score_std"] > 20  # ~1 vs ~sqrt(512)


def test_explorer_agrees_with_the_scaling_sweep():
    for d_k, scale, temperature in [(4, True, 1.0), (64, False, 1.0), (512, True, 0.5), (16, False, 2.0)]:
        stats = widgets.explore(d_k=d_k, scale=scale, temperature=temperature, seed=3)["stats"]
        sweep = scaling_sweep(d_ks=[d_k], T=8, scale=scale, temperature=temperature, seed=3)
        assert stats["mean_entropy"] == pytest.approx(sweep["mean_entropy"][0])
        assert stats["mean_max_weight"] == pytest.approx(sweep["mean_max_weight"][0])
        assert stats["all_score_std"] == pytest.approx(sweep["score_std"][0])


def test_explorer_returns_the_example_it_describes():
    payload = widgets.explore(d_k=32, target="ex")
    stats = payload["stats"]
    assert bridge.recorded == []  # one reply to the call, no event beside it
    assert payload["target"] == "ex" and payload["view"] == "attention"
    w, s = payload["arrays"]["weights"], payload["arrays"]["scores"]
    assert w.dtype == np.float32 and w.shape == (8, 8) and payload["tokens"][:3] == ["the", "cat", "sat"]
    np.testing.assert_allclose(w.max(axis=-1), stats["max_weight"], rtol=1e-6)
    np.testing.assert_allclose(w.sum(axis=-1), 1, atol=1e-6)
    assert stats["score_min"] == pytest.approx(s.min(), rel=1e-6)
    json.dumps(stats)  # plain data only: it crosses to the page as a JS object


def test_causal_mask_hides_the_future_and_rows_renormalise():
    payload = widgets.explore(d_k=64, causal=True)
    s, w = payload["arrays"]["scores"], payload["arrays"]["weights"]
    upper = np.triu(np.ones_like(s, dtype=bool), k=1)
    assert np.all(np.isneginf(s[upper])) and np.all(np.isfinite(s[~upper]))
    assert np.all(w[upper] == 0)
    np.testing.assert_allclose(w.sum(axis=-1), 1, atol=1e-6)
    assert w[0, 0] == 1  # the first token sees only itself


def test_explorer_refuses_out_of_range_settings():
    with pytest.raises(ValueError, match="temperature"):
        widgets.explore(temperature=0)
    with pytest.raises(ValueError, match="d_k"):
        widgets.explore(d_k=4096)
    with pytest.raises(ValueError, match="whole number"):
        widgets.explore(d_k=6.5)


# ---------------------------------------------------------------------------- heads

def test_heads_split_the_same_parameters_for_every_divisor():
    C = 48
    for H in widgets.divisors(C):
        payload = widgets.heads(n_head=H, C=C, T=8)
        stats, weights = payload["stats"], payload["arrays"]["weights"]
        assert weights.shape == (H, 8, 8)
        np.testing.assert_allclose(weights.sum(axis=-1), 1, atol=1e-5)
        assert stats["heads_shape"] == [1, H, 8, C // H] and stats["x_shape"] == [1, 8, C]
        assert stats["param_count"] == stats["counted"] == attention_param_count(C) == 4 * C * C
    assert widgets.divisors(C) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 48]
    with pytest.raises(ValueError, match="does not split"):
        widgets.heads(n_head=5, C=C)


def test_heads_at_the_lessons_width_name_the_cells_matrices_and_offer_at_most_64_heads():
    payload = widgets.heads(n_head=12, C=768, T=8)
    stats = payload["stats"]
    assert stats["param_shapes"] == {"W_qkv": [768, 3 * 768], "W_o": [768, 768]}  # the `heads` cell's x @ W layout
    assert stats["param_count"] == stats["counted"] == 4 * 768**2
    assert stats["divisors"] == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]  # not 768 heatmaps of one channel
    with pytest.raises(ValueError, match="between 1 and 64"):
        widgets.heads(n_head=96, C=768)


def test_one_head_is_plain_attention_on_the_same_input():
    w1 = widgets.heads(1)["arrays"]["weights"]
    w4 = widgets.heads(4)["arrays"]["weights"]
    assert not np.allclose(w1[0], w4[0])  # splitting changes what each head sees
    x, W_qkv, _ = widgets._heads_weights(48, 8, 0)
    q, k = x[0] @ W_qkv[:, :48], x[0] @ W_qkv[:, 48:96]
    s = q @ k.T / math.sqrt(48)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(w1[0], e / e.sum(axis=-1, keepdims=True), rtol=1e-5)


def test_the_heads_widget_adds_two_hand_built_heads_that_really_specialise():
    payload = widgets.heads(n_head=4, C=48, T=8)
    stats, hand = payload["stats"], payload["arrays"]["hand_weights"]
    tokens = stats["tokens"]
    assert hand.shape == (2, 8, 8) and [h["name"] for h in stats["hand_heads"]] == ["previous token", "same token"]
    np.testing.assert_allclose(hand.sum(axis=-1), 1, atol=1e-5)
    previous, same = hand
    # previous token: row i looks at i - 1; the first row has no previous word and stays flat
    assert [int(j) for j in previous[1:].argmax(axis=-1)] == list(range(7))
    assert previous[1:].max(axis=-1).min() > 0.99
    np.testing.assert_allclose(previous[0], 1 / 8, atol=1e-6)
    # same token: the two "the" share their attention half and half; every other word looks at itself
    the = [i for i, t in enumerate(tokens) if t == "the"]
    assert len(the) == 2
    for i in the:
        np.testing.assert_allclose(same[i, the], 0.5, atol=0.01)
    for i in set(range(8)) - set(the):
        assert same[i].argmax() == i and same[i, i] > 0.99
    # the hand-built heads do not depend on H, and are not among the random heads
    np.testing.assert_array_equal(widgets.heads(n_head=2, C=48, T=8)["arrays"]["hand_weights"], hand)


def test_hand_built_heads_are_softmax_of_their_own_queries_and_keys():
    from lessonpy.course.attention import hand_heads

    tokens = ["a", "b", "a", "c", "b"]
    x, V = hand_heads._features(tokens)
    for name in hand_heads.HAND_HEADS:
        W_q, W_k = hand_heads._projections(name, V, len(tokens))
        s = (x @ W_q) @ (x @ W_k).T / math.sqrt(W_q.shape[1])
        assert set(np.unique(np.round(s, 9))) <= {0.0, hand_heads.MATCH_SCORE}  # a match or nothing
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        np.testing.assert_allclose(hand_heads.hand_head(name, tokens), e / e.sum(axis=-1, keepdims=True))
    with pytest.raises(ValueError, match="unknown hand-built head"):
        hand_heads.hand_head("next token", tokens)


# ---------------------------------------------------------------------------- views

def test_attention_example_is_what_show_attention_sends():
    payload = widgets.attention_example(T=6, d_k=8, seed=2, title="t", target="v")
    ex = example_inputs(6, 8, 2)
    x = ex["x"]
    expected = build_payload(Q=x @ ex["W_q"], K=x @ ex["W_k"], V=x @ ex["W_v"], tokens=ex["tokens"],
                              title="t", target="v")
    for key in ("weights", "scores", "out"):
        np.testing.assert_array_equal(payload["arrays"][key], expected["arrays"][key])
    assert payload["tokens"] == ["the", "cat", "sat", "on", "the", "mat"]


def test_a_causal_view_is_drawn_masked_before_python_runs():
    """A "Causal attention" view of a later lesson: its build-time picture is the masked pattern (scores -inf
    above the diagonal, weights 0 there), as a cell's show_attention(scores=masked) would send it."""
    plain = widgets.prerender_view({"T": 5, "seed": 1})["arrays"]
    masked = widgets.prerender_view({"T": 5, "seed": 1, "causal": True})["arrays"]
    above = np.triu(np.ones((5, 5), dtype=bool), 1)
    assert np.isneginf(masked["scores"][above]).all()
    np.testing.assert_array_equal(masked["scores"][~above], plain["scores"][~above])
    assert (masked["weights"][above] == 0).all() and (plain["weights"][above] > 0).all()
    np.testing.assert_allclose(masked["weights"].sum(-1), 1, rtol=1e-6)
    assert masked["weights"][0, 0] == pytest.approx(1)  # the first token sees only itself


def test_prerender_knows_every_widget():
    for name in widget_specs.specs():
        payload = widget_specs.prerender(name, {})
        if name == "next-token":  # its first picture is its controls: every number needs the 97.7 MB model
            assert payload == {"view": "next-token", "target": None}
            continue
        if name == "residual-stream":  # the committed numbers of the lesson's sentence, at every position
            assert payload["position"] == len(payload["tokens"]) - 1 and len(payload["lens"]) == len(payload["tokens"])
            continue
        assert "weights" in (payload["open"] if name == "real-heads" else payload["arrays"])
    with pytest.raises(ValueError, match="unknown widget"):
        widget_specs.prerender("pie-chart", {})


def test_encode_array_writes_masked_scores_as_strings():
    enc = encode_array(np.array([[0.1, -np.inf], [np.nan, 2.0]]))
    assert enc == {"shape": [2, 2], "dtype": "float32", "data": [0.1, "-inf", "nan", 2.0]}
    assert np.float32(enc["data"][0]) == np.float32(0.1)


# ---------------------------------------------------------------------------- the fence

def test_fence_puts_the_prerendered_payload_in_the_lessons_widget_data_not_its_html(tmp_path):
    rendered = render(tmp_path, "```widget dk-explorer id=ex\nd_k: 512\nscale: false\ncausal: true\n```\n\n"
                            "```widget heads id=h\n```\n\n```widget step-through id=s\ntokens: [a, b, c]\n```\n")
    ex, heads, steps = data_blocks(rendered)
    assert list(rendered.widgets) == ["ex", "h", "s"]
    assert 'data-widget="dk-explorer" data-widget-id="ex" id="widget-ex"' in rendered.html
    assert "application/json" not in rendered.html and "512" not in rendered.html
    assert ex["name"] == "dk-explorer" and ex["options"]["d_k"] == 512 and ex["options"]["scale"] is False
    scores = ex["initial"]["arrays"]["scores"]
    assert scores["shape"] == [8, 8] and scores["data"][1] == "-inf"  # the masked upper triangle
    expected = widgets.explore(d_k=512, scale=False, causal=True)["stats"]
    assert ex["initial"]["stats"]["max_weight"] == expected["max_weight"]
    assert heads["options"] == {"title": None, "C": 48, "T": 8, "heads": 4, "seed": 0}
    assert heads["initial"]["arrays"]["weights"]["shape"] == [4, 8, 8]
    assert steps["options"]["T"] == 3 and steps["initial"]["tokens"] == ["a", "b", "c"]


def test_real_heads_is_told_by_the_build_whether_the_live_files_are_there_their_sizes_and_sha256(tmp_path):
    """The page learns it from the build, not from a request for the 45 MB file, and checks what it keeps
    and uses against it (worker/live-files.js)."""
    from sitebuild.realheads.live import VOCAB_NAME, WEIGHTS_NAME, describe

    (tmp_path / WEIGHTS_NAME).write_bytes(b"w" * 1000)
    (tmp_path / VOCAB_NAME).write_bytes(b"[PAD]\n")
    described = describe(tmp_path)
    assert described[WEIGHTS_NAME] == {"size": 1000, "sha256": hashlib.sha256(b"w" * 1000).hexdigest()}
    assert described[VOCAB_NAME]["size"] == 6
    [shipped] = data_blocks(render(tmp_path, "```widget real-heads id=r\n```\n", site={"live_files": described}))
    assert shipped["options"]["live_files"] == described
    [left_out] = data_blocks(render(tmp_path, "```widget real-heads id=r\n```\n", site={"live_files": None}))
    assert left_out["options"]["live_files"] is None
    [no_site] = data_blocks(render(tmp_path, "```widget real-heads id=r\n```\n"))
    assert no_site["options"]["live_files"] is None
    with pytest.raises(LessonError, match="live_files"):  # the build's word, not the author's
        render(tmp_path, "```widget real-heads id=r\nlive_files: 5\n```\n")


def test_a_view_can_show_the_hand_built_cat_before_python_runs(tmp_path):
    from lessonpy.course.attention import cat_example

    (view,) = data_blocks(render(tmp_path, "```widget attention-view id=c\nexample: cat\nrow: 4\n```\n"))
    assert view["options"]["T"] == len(cat_example.SENTENCE) and view["options"]["row"] == 4
    assert view["initial"]["tokens"] == cat_example.SENTENCE
    _, weights, _ = cat_example.attend(cat_example.X, cat_example.W_Q, cat_example.W_K, cat_example.W_V)
    shown = np.array(view["initial"]["arrays"]["weights"]["data"]).reshape(7, 7)
    np.testing.assert_allclose(shown, weights, atol=1e-6)
    assert shown[4].argmax() == 1  # "it" looks at "cat"


# ---------------------------------------------------------------------------- real heads

def test_real_heads_call_sends_every_head_as_stored():
    from lessonpy.models import realheads

    for model, s in (("minilm", 0), ("smollm2", 3)):
        heads = realheads.load(model)
        payload = widgets.real_heads(model, s, target="g")
        w = payload["arrays"]["weights"]
        T = len(heads.tokens(s))
        assert w.dtype == np.float32 and w.shape == (heads.layers, heads.heads, T, T)
        np.testing.assert_array_equal(w, heads.weights(s))  # as stored: no renormalising in the data
        assert payload["sentences"][s] == heads.sentences[s]["text"] and payload["tokens"] == heads.tokens(s)
        assert [(f["job"], f["layer"], f["head"]) for f in payload["featured"]] == \
            [(f["job"], f["layer"], f["head"]) for f in heads.featured]
    with pytest.raises(ValueError, match="sentence must be between 0 and 7"):
        widgets.real_heads("minilm", 8)
    with pytest.raises(ValueError, match="unknown model 'gpt2'"):
        widgets.real_heads("gpt2", 0)


def test_real_heads_prerender_is_the_featured_head_as_stored_without_the_grid():
    from lessonpy.models import realheads

    heads = realheads.load("smollm2")
    p = widgets.prerender_real_heads({"model": "smollm2", "sentence": 3, "head": "induction"})
    f = heads.featured_head("induction")
    assert "arrays" not in p  # the (L, H, T, T) grid comes from Python in the page
    assert (p["open"]["layer"], p["open"]["head"], p["open"]["job"]) == (f["layer"], f["head"], "induction")
    np.testing.assert_array_equal(p["open"]["weights"], heads.pattern(3, f["layer"], f["head"]))
    assert [m["name"] for m in p["models"]] == list(realheads.MODELS)
    assert p["ablation"]["heads"]  # the ablation view comes drawn with the widget...
    # ... and is not shipped where the lesson leaves the view out (Lesson 5's grid)
    assert "ablation" not in widgets.prerender_real_heads({"model": "smollm2", "sentence": 3, "ablation": False})


@pytest.mark.parametrize("cell", ["real-head-minilm", "real-head-smollm2"])
def test_a_real_head_view_prerenders_what_its_cell_draws(tmp_path, cell):
    """Before Python runs, the view shows the reader's softmax of the head's stored Q, K (what the cell draws,
    so running it changes nothing), beside those scores, masked for a causal model: no false alarm."""
    from lessonpy.models import realheads

    (view,) = data_blocks(render(tmp_path, f"```widget attention-view id=v\nexample: {cell}\n```\n"))
    model, job, s = realheads.CELL_HEADS[cell]
    heads = realheads.load(model)
    f = heads.featured_head(job)
    stored = heads.pattern(s, f["layer"], f["head"])
    T = len(stored)
    initial = view["initial"]
    shown = np.array(initial["arrays"]["weights"]["data"], dtype=np.float32).reshape(T, T)
    mine, diff = realheads.reproduce(heads, s, job)
    np.testing.assert_allclose(shown, mine, atol=1e-6)
    assert abs(np.abs(shown - stored).max() - diff) < 1e-5  # the reader's pattern, within the bound of the stored
    assert initial["causal"] is heads.causal and initial["stats"]["causal"] is heads.causal
    assert initial["stats"]["masked"] == (T * (T - 1) // 2 if heads.causal else 0)
    assert initial["stats"]["weights_match_scores"] is True
    assert initial["tokens"] == heads.tokens(s)
    assert f"layer {f['layer']}, head {f['head']}" in initial["title"]


@pytest.mark.parametrize("fence, line, message", [
    ("```widget\n```", 7, "needs a name"),
    ("```widget pie id=p\n```", 7, "unknown widget 'pie'"),
    ("```widget heads\n```", 7, "needs an id"),
    ("```widget heads id=h\nC: 48\nheads: 5\n```", 9, "does not split into 5 heads"),
    ("```widget dk-explorer id=e\n\nd_k: 100\n```", 9, "d_k must be one of 4, 8"),
    ("```widget dk-explorer id=e\ntemprature: 2\n```", 8, "did you mean 'temperature'"),
    ("```widget attention-view id=v\nT: three\n```", 8, "T must be a whole number"),
    ("```widget attention-view id=v\nT: 4\ntokens: [a, b]\n```", 9, "tokens has 2 words but T is 4"),
    ("```widget attention-view id=v\nscale: [\n```", 9, "not valid YAML"),
    ("```widget heads id=h\n```\n\n```widget heads id=h\n```", 10, "already used by the widget on line 7"),
    ("```widget attention-view id=v\nexample: dog\n```", 8, "example must be one of seeded, cat"),
    ("```widget attention-view id=v\nexample: cat\ntokens: [a, b]\n```", 8, "brings its own tokens"),
    ("```widget attention-view id=v\nexample: real-head-minilm\nT: 4\n```", 8, "brings its own tokens"),
    ("```widget attention-view id=v\nexample: cat\ncausal: true\n```", 9, "causal masks the seeded example"),
    ("```widget dk-explorer id=e\ncausal_label: ''\n```", 8, "causal_label must be non-empty text"),
    ("```widget real-heads id=r\nmodel: gpt2\n```", 8, "model must be one of minilm, smollm2"),
    ("```widget real-heads id=r\nsentence: 8\n```", 7, "sentence must be between 0 and 7"),
    ("```widget real-heads id=r\nhead: induction\n```", 7, "has no featured head for 'induction'"),
])
def test_bad_widget_fences_name_the_file_and_line(tmp_path, fence, line, message):
    with pytest.raises(LessonError) as err:
        render(tmp_path, fence + "\n")
    assert f"w.md:{line}:" in str(err.value) and message in str(err.value)


def test_the_next_token_widget_gets_the_smollm2_files_and_the_preset_from_the_build(tmp_path, monkeypatch):
    from lessonpy.models import next_token, smollm2

    from smollm2_random import random_folder

    # the preset decodes the real model's token ids; the random tokenizer has 40 tokens: two of them instead
    monkeypatch.setattr(next_token, "preset", lambda tokenizer: tokenizer.decode([3, 1]) * 2)
    folder = random_folder(tmp_path / "smol")
    described = {smollm2.WEIGHTS_NAME: {"size": 5, "sha256": "0" * 64}}
    [shipped] = data_blocks(render(tmp_path, "```widget next-token id=n\n```\n",
                                   site={"smollm2_files": described, "smollm2_url": "../data/smollm2-live/",
                                         "smollm2_dir": str(folder)}))
    options = shipped["options"]
    assert options["live_files"] == described and options["live_url"] == "../data/smollm2-live/"
    assert options["preset"] == next_token.preset(smollm2.load(folder)[1])
    assert options["preset_heads"] == next_token.preset_heads() and options["max_tokens"] == next_token.MAX_TOKENS
    [left_out] = data_blocks(render(tmp_path, "```widget next-token id=n\n```\n"))
    assert left_out["options"]["live_files"] is None and left_out["options"]["preset"] is None
