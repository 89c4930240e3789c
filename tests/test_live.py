"""lessonpy.live, the page's "your own sentence", in CPython on a random MiniLM-shaped file (the real weights'
accuracy is tests/test_realheads_models.py's): the tokens, the forward pass, the messages."""

from __future__ import annotations

import numpy as np
import pytest

from lessonpy import live, minilm, realheads
from minilm_random import write_random_live


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_random_live(tmp_path_factory.mktemp("live"), "the cat sat on mat it was tired .".split())


def test_heads_is_the_forward_pass_on_the_wordpiece_tokens(folder):
    out = live.heads("The cat sat on the MAT, it was tired.", target="r", folder=folder)
    W, tokenizer = live.model(folder)
    assert out["tokens"] == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[UNK]", "it", "was", "tired", ".", "[SEP]"]
    ids = [tokenizer.vocab[t] for t in out["tokens"]]
    w = out["arrays"]["weights"]
    assert w.shape == (minilm.LAYERS, minilm.HEADS, 13, 13) and w.dtype == np.float32
    np.testing.assert_array_equal(w, minilm.forward(W, ids)["weights"])
    np.testing.assert_allclose(w.sum(-1), 1, atol=1e-5)
    assert out["live"] and out["seconds"] > 0 and out["target"] == "r"
    assert [f["job"] for f in out["featured"]] == [f["job"] for f in realheads.load("minilm").featured]


def test_bad_input_gets_a_clear_message(folder, tmp_path):
    with pytest.raises(ValueError, match="type a sentence first"):
        live.heads("   ", folder=folder)
    with pytest.raises(ValueError, match="at most 128"):
        live.heads("cat " * 200, folder=folder)
    with pytest.raises(FileNotFoundError, match="download MiniLM's weights first"):
        live.heads("the cat", folder=tmp_path / "nowhere")


def test_files_name_what_the_build_copies():
    from sitebuild.realheads.live import WEIGHTS_NAME

    assert [f["name"] for f in live.files()] == [WEIGHTS_NAME, "vocab.txt"]
    assert all(f["path"] == f"{live.FOLDER}/{f['name']}" for f in live.files())


def test_benchmark_times_each_length(folder):
    times = live.benchmark((8, 16), repeats=1, folder=folder)
    assert set(times) == {"8", "16"} and all(t > 0 for t in times.values())
