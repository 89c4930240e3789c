"""lessonpy.live, the page's "your own sentence", in CPython on a random MiniLM-shaped file (the real weights'
accuracy is tests/test_realheads_models.py's): the tokens, the forward pass, the messages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lessonpy import live, minilm, realheads
from minilm_random import write_random_live
from test_runner import run as run_in_cell_runner


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


# ---------------------------------------------------------------------------- the reader's own forward pass

MINILM_FILE = (Path(__file__).resolve().parent.parent / "py" / "lessonpy" / "minilm.py").read_text(encoding="utf-8")
SENTENCE = "the cat sat on the mat"
HEADS_LINE = next(n for n, line in enumerate(MINILM_FILE.splitlines(), 1) if "heads = weights @ v" in line)


def run_cell(code, cell_id, namespace):
    """Run *code* as the page runs a cell (lessonpy.runner), in *namespace*; fail the test if it fails."""
    result, _ = run_in_cell_runner(code, namespace, cell_id)
    assert result.ok, result.error
    return namespace


def edited(old, new):
    assert old in MINILM_FILE, old
    return MINILM_FILE.replace(old, new)


def test_the_lessons_forward_runs_until_the_readers_cell_has(folder):
    out = live.heads(SENTENCE, folder=folder, cell="minilm-forward", namespace={})
    assert out["forward"] == "lesson"
    namespace = run_cell(MINILM_FILE, "minilm-forward", {"__name__": "__main__"})
    mine = live.heads(SENTENCE, folder=folder, cell="minilm-forward", namespace=namespace)
    assert mine["forward"] == "yours"
    np.testing.assert_array_equal(mine["arrays"]["weights"], out["arrays"]["weights"])  # the same code, unedited
    # a later cell that defines a forward of its own is not the MiniLM cell's
    run_cell("def forward(W, ids):\n    return {}\n", "elsewhere", namespace)
    assert live.heads(SENTENCE, folder=folder, cell="minilm-forward", namespace=namespace)["forward"] == "lesson"


def test_an_edit_to_the_forward_pass_changes_what_the_grid_gets(folder):
    unscaled = edited("scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])", "scores = q @ k.transpose(0, 2, 1)")
    namespace = run_cell(unscaled, "minilm-forward", {"__name__": "__main__"})
    mine = live.heads(SENTENCE, folder=folder, cell="minilm-forward", namespace=namespace)
    lesson = live.heads(SENTENCE, folder=folder)
    assert mine["forward"] == "yours"
    assert np.abs(mine["arrays"]["weights"] - lesson["arrays"]["weights"]).max() > 0.01


@pytest.mark.parametrize("old, new, message", [
    ("heads = weights @ v  #", "heads = weights @ v.T  #", rf"raised ValueError at line {HEADS_LINE}: operands could not be broadcast"),
    ("    return out\n", "    return out['weights']\n", "returned ndarray, not a dict with an array 'weights'"),
    ("    return out\n", "    return {'weights': out['weights'][0]}\n", r"returned weights of shape \(12, 8, 8\); the grid "
                                                                          r"needs \(6, 12, 8, 8\)"),
    ("weights = weights / weights.sum(-1, keepdims=True)", "pass", "rows do not sum to 1"),
])
def test_a_broken_forward_pass_gets_a_clear_message(folder, old, new, message):
    namespace = run_cell(edited(old, new), "minilm-forward", {"__name__": "__main__"})
    with pytest.raises(live.ForwardError, match="^your forward .*" + message):
        live.heads(SENTENCE, folder=folder, cell="minilm-forward", namespace=namespace)


# ---------------------------------------------------------------------------- what the reader's forward cannot do

from lessonpy.limits import MESSAGE_CHARS  # noqa: E402

HUGE = 10**7  # characters: the panel once received all of them, and 10**8 crashed the tab


@pytest.mark.parametrize("raised", [f"ValueError('m' * {HUGE})", f"type('E' * {HUGE}, (Exception,), {{}})('boom')"],
                         ids=["message", "class name"])
def test_a_huge_error_of_the_readers_forward_is_one_clipped_line(folder, raised):
    namespace = run_cell(f"def forward(W, ids):\n    raise {raised}\n", "minilm-forward", {"__name__": "__main__"})
    with pytest.raises(live.ForwardError) as info:
        live.heads(SENTENCE, folder=folder, cell="minilm-forward", namespace=namespace)
    message = str(info.value)
    assert len(message) < 3 * MESSAGE_CHARS and "\n" not in message
    assert " at line 2: " in message and "characters not shown" in message


def test_the_readers_forward_cannot_change_the_weights(folder):
    lesson = live.heads(SENTENCE, folder=folder)["arrays"]["weights"]
    writes = ("    W['embeddings.word_embeddings.weight'][:] = 0\n"
              "    W['embeddings.LayerNorm.weight'] *= 2\n")
    namespace = run_cell(edited("def forward(W, ids):\n", "def forward(W, ids):\n" + writes), "minilm-forward",
                         {"__name__": "__main__"})
    with pytest.raises(live.ForwardError, match=rf"raised ValueError at line \d+: assignment destination is read-only "
                                                r"\(MiniLM's weights are read-only.*W\[name\]\.copy\(\)\)$"):
        live.heads(SENTENCE, folder=folder, cell="minilm-forward", namespace=namespace)
    # replacing an entry of the dict it was given changes only its own dict
    namespace = run_cell(edited("def forward(W, ids):\n", "def forward(W, ids):\n"
                                "    W['embeddings.word_embeddings.weight'] = 0 * W['embeddings.word_embeddings.weight']\n"),
                         "minilm-forward", {"__name__": "__main__"})
    live.heads(SENTENCE, folder=folder, cell="minilm-forward", namespace=namespace)
    np.testing.assert_array_equal(live.heads(SENTENCE, folder=folder)["arrays"]["weights"], lesson)
