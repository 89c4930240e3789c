"""The residual-stream widget's Python (lessonpy.course.block.residual_stream): its live call on the tiny random
SmolLM2 (tests/support/smollm2_random.py) against the lesson's blocks and logit lens computed here, the kept stream,
the one-line errors, and the build's first picture from the committed file. The file against a recompute with the
real weights: tests/build/test_residual_stream_data.py."""

from __future__ import annotations

import numpy as np
import pytest
from lessonpy.course.block import real_layers, residual_stream
from lessonpy.models import smollm2

from smollm2_random import SIZES, random_folder

TEXT = "a cab, a bad cab."


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return random_folder(tmp_path_factory.mktemp("smollm2"))


def test_the_live_call_gives_the_blocks_writes_the_streams_length_and_the_lens(folder):
    m, tokenizer = smollm2.load(folder)
    reply = residual_stream.stream(TEXT, folder=folder)
    ids = [tokenizer.special["<|endoftext|>"], *tokenizer.encode(TEXT)]
    T, L = len(ids), SIZES["layers"]
    assert reply["tokens"] == [tokenizer.token_text(i) for i in ids] and reply["position"] == T - 1
    assert reply["live"] is True and reply["layers"] == L and reply["text"] == TEXT
    run = real_layers.smollm2_stream(m, ids)
    norms = reply["norms"]
    assert np.array(norms["attn"]).shape == (L, T) and np.array(norms["stream"]).shape == (L + 1, T)
    np.testing.assert_allclose(norms["attn"], run["attn"], rtol=1e-3)
    np.testing.assert_allclose(norms["mlp"], run["mlp"], rtol=1e-3)
    np.testing.assert_allclose(norms["stream"], np.linalg.norm(run["stream"], axis=-1), rtol=1e-3)
    # the stream after a layer is the stream before it plus the two writes: its length is within their sum
    stream = np.array(norms["stream"])
    assert (stream[1:] <= stream[:-1] + np.array(norms["attn"]) + np.array(norms["mlp"]) + 1e-3).all()
    lens = reply["lens"][str(T - 1)]
    assert list(reply["lens"]) == [str(T - 1)]  # only the picked position's lens is computed
    logits = smollm2.unembed(m, run["stream"][:, -1]).astype(np.float64)  # (L + 1, V)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    order = np.argsort(-probs, axis=-1)[:, :residual_stream.TOP]
    assert [[t for t, _ in row] for row in lens["top"]] == [[tokenizer.token_text(int(i)) for i in row] for row in order]
    np.testing.assert_allclose([[p for _, p in row] for row in lens["top"]],
                               np.take_along_axis(probs, order, -1), rtol=1e-3, atol=1e-12)
    # the last row's top token is the model's own prediction: rank 0 there, as the forward pass says
    final = int(smollm2.forward(m, ids, keep=())["logits"][-1].argmax())
    assert lens["final"] == tokenizer.token_text(final) and lens["rank"][-1] == 0
    np.testing.assert_allclose(lens["p"], probs[:, final], rtol=1e-3, atol=1e-12)


def test_another_position_reuses_the_kept_stream_and_adds_its_lens(folder, monkeypatch):
    residual_stream._kept.clear()
    first = residual_stream.stream(TEXT, folder=folder)
    calls = []
    real = real_layers.smollm2_stream
    monkeypatch.setattr(real_layers, "smollm2_stream", lambda *a: calls.append(a) or real(*a))
    second = residual_stream.stream(TEXT, position=2, folder=folder)
    assert calls == [] and second["position"] == 2 and list(second["lens"]) == ["2"]
    assert first["pass"] is True and second["pass"] is False and second["seconds"] > 0
    assert second["norms"] == first["norms"]
    assert residual_stream.stream(TEXT, position=-1, folder=folder)["lens"] == first["lens"]  # -1: the last
    residual_stream.stream(TEXT + " a", folder=folder)
    assert len(calls) == 1  # a new text: a new pass


@pytest.mark.parametrize("position, message", [(99, "positions 0 to"), (True, "positions 0 to"), ("1", "positions 0 to")])
def test_a_position_outside_the_text_is_refused_in_one_line(folder, position, message):
    with pytest.raises(ValueError, match=message):
        residual_stream.stream(TEXT, position=position, folder=folder)


def test_no_text_and_a_bad_top_are_refused_in_one_line(folder):
    with pytest.raises(ValueError, match="type some text first"):
        residual_stream.stream("  ", folder=folder)
    with pytest.raises(ValueError, match="top is 1 to"):
        residual_stream.stream(TEXT, top=0, folder=folder)


def test_the_first_picture_is_the_committed_sentence_at_every_position():
    data = residual_stream.load()
    assert data["text"] == residual_stream.SENTENCE
    T, L = len(data["tokens"]), data["layers"]
    assert data["tokens"][0] == "<|endoftext|>" and "".join(data["tokens"][1:]) == residual_stream.SENTENCE
    assert sorted(map(int, data["lens"])) == list(range(T))
    assert np.array(data["norms"]["attn"]).shape == (L, T) and np.array(data["norms"]["stream"]).shape == (L + 1, T)
    for lens in data["lens"].values():
        assert len(lens["top"]) == L + 1 and all(len(row) == residual_stream.TOP for row in lens["top"])
        assert lens["rank"][-1] == 0 and lens["top"][-1][0][0] == lens["final"]
        assert all(1 >= row[0][1] >= row[1][1] >= row[2][1] >= 0 for row in lens["top"])
    first = residual_stream.prerender({"position": -1}, target="stream")
    assert first["position"] == T - 1 and first["view"] == "residual-stream" and first["live"] is False
    assert residual_stream.prerender({"position": 3})["position"] == 3


def test_a_fence_position_outside_the_sentence_is_refused_by_the_check():
    T = len(residual_stream.load()["tokens"])
    assert residual_stream.check({"position": T - 1}, {"position"}) == []
    assert residual_stream.check({"position": -T}, {"position"}) == []
    [(option, message)] = residual_stream.check({"position": T}, {"position"})
    assert option == "position" and f"{-T} to {T - 1}" in message


def test_a_stale_data_file_stops_the_build(tmp_path, monkeypatch):
    import json

    stale = {**residual_stream.load(), "text": "another sentence"}
    (tmp_path / "stale.json").write_text(json.dumps(stale), encoding="utf-8")
    monkeypatch.setattr(residual_stream, "DATA_PATH", tmp_path / "stale.json")
    with pytest.raises(ValueError, match="python3 -m sitebuild.realheads.residual_stream"):
        residual_stream.prerender({"position": -1})
