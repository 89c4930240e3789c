"""lessonpy.models.live, the page's "your own sentence", in CPython on a random MiniLM-shaped file (the real weights'
accuracy is tests/build/test_realheads_models.py's): the tokens, the forward pass, the messages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lessonpy.models import live, minilm, realheads, wordpiece
from lessonpy.runtime.runner import ReaderCells
from cell_runner import run as run_in_cell_runner
from minilm_random import write_random_live


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_random_live(tmp_path_factory.mktemp("live"), "the cat sat on mat it was tired .".split())


@pytest.mark.slow  # a full-size MiniLM's forward pass, again and again
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
    # MiniLM's shipped sentences, for the widget's menu (after SmolLM2's grid it held SmolLM2's)
    assert out["sentences"] == [x["text"] for x in realheads.load("minilm").sentences]


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

MINILM_FILE = (Path(__file__).resolve().parents[2] / "py" / "lessonpy" / "models" / "minilm.py").read_text(encoding="utf-8")
SENTENCE = "the cat sat on the mat"
SIGNATURE = "def forward(W, ids, knock=None):\n"
HEADS_LINE = next(n for n, line in enumerate(MINILM_FILE.splitlines(), 1) if "heads = weights @ v" in line)


def run_cell(code, cell_id, namespace):
    """Run *code* as the page runs a cell (lessonpy.runtime.runner), in *namespace*; fail the test if it fails."""
    result, _ = run_in_cell_runner(code, namespace, cell_id)
    assert result.ok, result.error
    return namespace


def edited(old, new):
    assert old in MINILM_FILE, old
    return MINILM_FILE.replace(old, new)


@pytest.mark.slow  # a full-size MiniLM's forward pass, again and again
def test_the_lessons_forward_runs_until_the_readers_cell_has(folder):
    out = live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells({}))
    assert out["forward"] == "lesson"
    namespace = run_cell(MINILM_FILE, "minilm-forward", {"__name__": "__main__"})
    mine = live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace))
    assert mine["forward"] == "yours"
    np.testing.assert_array_equal(mine["arrays"]["weights"], out["arrays"]["weights"])  # the same code, unedited
    # a later cell that defines a forward of its own is not the MiniLM cell's
    run_cell("def forward(W, ids):\n    return {}\n", "elsewhere", namespace)
    assert live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace))["forward"] == "lesson"


def test_an_edit_to_the_forward_pass_changes_what_the_grid_gets(folder):
    unscaled = edited("scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])", "scores = q @ k.transpose(0, 2, 1)")
    namespace = run_cell(unscaled, "minilm-forward", {"__name__": "__main__"})
    mine = live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace))
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
        live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace))


# ---------------------------------------------------------------------------- what the reader's forward cannot do

from lessonpy.runtime.limits import MESSAGE_CHARS  # noqa: E402

HUGE = 10**7  # characters: the panel once received all of them, and 10**8 crashed the tab


@pytest.mark.parametrize("raised", [f"ValueError('m' * {HUGE})", f"type('E' * {HUGE}, (Exception,), {{}})('boom')"],
                         ids=["message", "class name"])
def test_a_huge_error_of_the_readers_forward_is_one_clipped_line(folder, raised):
    namespace = run_cell(f"def forward(W, ids):\n    raise {raised}\n", "minilm-forward", {"__name__": "__main__"})
    with pytest.raises(live.ForwardError) as info:
        live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace))
    message = str(info.value)
    assert len(message) < 3 * MESSAGE_CHARS and "\n" not in message
    assert " at line 2: " in message and "characters not shown" in message


def test_the_readers_forward_cannot_change_the_weights(folder):
    lesson = live.heads(SENTENCE, folder=folder)["arrays"]["weights"]
    writes = ("    W['embeddings.word_embeddings.weight'][:] = 0\n"
              "    W['embeddings.LayerNorm.weight'] *= 2\n")
    namespace = run_cell(edited(SIGNATURE, SIGNATURE + writes), "minilm-forward",
                         {"__name__": "__main__"})
    with pytest.raises(live.ForwardError, match=rf"raised ValueError at line \d+: assignment destination is read-only "
                                                r"\(MiniLM's weights are read-only.*W\[name\]\.copy\(\)\)$"):
        live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace))
    # replacing an entry of the dict it was given changes only its own dict
    namespace = run_cell(edited(SIGNATURE, SIGNATURE +
                                "    W['embeddings.word_embeddings.weight'] = 0 * W['embeddings.word_embeddings.weight']\n"),
                         "minilm-forward", {"__name__": "__main__"})
    live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace))
    np.testing.assert_array_equal(live.heads(SENTENCE, folder=folder)["arrays"]["weights"], lesson)


# ---------------------------------------------------------------------------- changed heads, and what the model says

def changed(layer, head, change):
    return {"layer": layer, "head": head, "change": change}


def test_without_changes_the_model_compares_as_trained(folder):
    out = live.heads(SENTENCE, folder=folder)
    W, tokenizer = live.model(folder)
    mine = minilm.embed(minilm.forward(W, tokenizer.encode(SENTENCE)[0])["hidden"])
    assert abs(np.linalg.norm(mine) - 1) < 1e-12
    assert out["changes"] == [] and out["similarity"]["self"] == pytest.approx(1)
    assert [o["text"] for o in out["similarity"]["others"]] == list(live.OTHERS)
    for o in out["similarity"]["others"]:
        theirs = minilm.embed(minilm.forward(W, tokenizer.encode(o["text"])[0])["hidden"])
        assert o["trained"] == o["changed"] == pytest.approx(float(mine @ theirs))


@pytest.mark.slow  # a full-size MiniLM's forward pass, again and again
def test_changes_apply_to_the_heads_shown_and_to_every_sentence_compared(folder):
    W, tokenizer = live.model(folder)
    ids = tokenizer.encode(SENTENCE)[0]
    plain = live.heads(SENTENCE, folder=folder)
    out = live.heads(SENTENCE, folder=folder, changes=[changed(2, 1, 0), changed(4, 7, "off"), changed(2, 1, 0.0)])
    assert out["changes"] == [changed(2, 1, 0.0), changed(4, 7, "off")]  # a head listed twice keeps its last change
    knock = {(2, 1): 0.0, (4, 7): "off"}
    want = minilm.forward(W, ids, knock)
    np.testing.assert_array_equal(out["arrays"]["weights"], want["weights"])
    w, before = out["arrays"]["weights"], plain["arrays"]["weights"]
    np.testing.assert_allclose(w[2, 1], 1 / len(ids), rtol=1e-6)  # scores x 0: every key the same weight
    np.testing.assert_array_equal(w[:2], before[:2])  # nothing before layer 2 moves
    np.testing.assert_array_equal(w[2, 0], before[2, 0])  # nor the other heads of layer 2 (their inputs are the same)
    assert np.abs(w[3:] - before[3:]).max() > 1e-4  # the layers after it read a changed stream
    similarity = out["similarity"]
    assert similarity["self"] == pytest.approx(float(minilm.embed(want["hidden"]) @ minilm.embed(
        minilm.forward(W, ids)["hidden"])))
    assert similarity["self"] < 1 - 1e-6
    for o, p in zip(similarity["others"], plain["similarity"]["others"]):
        assert o["trained"] == p["trained"]  # the "as trained" column stays
        theirs = minilm.embed(minilm.forward(W, tokenizer.encode(o["text"])[0], knock)["hidden"])
        assert o["changed"] == pytest.approx(float(minilm.embed(want["hidden"]) @ theirs))  # both sentences changed


@pytest.mark.slow  # a full-size MiniLM's forward pass, again and again
def test_the_readers_comparison_sentence_is_compared_as_the_others_are(folder):
    """A sentence the reader types to compare with gets the cosines the fixed ones get: both embeddings as
    trained, and both with the changes; the fixed sentences stay."""
    W, tokenizer = live.model(folder)
    theirs_ids, theirs_tokens = tokenizer.encode("It was tired.")
    knock = {(1, 2): "off", (3, 0): 0.5}
    changes = [changed(1, 2, "off"), changed(3, 0, 0.5)]
    embedding = {name: minilm.embed(minilm.forward(W, ids, k)["hidden"])
                 for name, ids, k in (("mine", tokenizer.encode(SENTENCE)[0], None), ("theirs", theirs_ids, None),
                                      ("mine changed", tokenizer.encode(SENTENCE)[0], knock), ("theirs changed", theirs_ids, knock))}
    plain = live.heads(SENTENCE, folder=folder, compare="It was tired.")["similarity"]
    out = live.heads(SENTENCE, folder=folder, changes=changes, compare="It was tired.")["similarity"]
    trained = float(embedding["mine"] @ embedding["theirs"])
    assert plain["compare"] == {"text": "It was tired.", "tokens": theirs_tokens, "trained": pytest.approx(trained),
                                "changed": pytest.approx(trained)}
    assert out["compare"]["trained"] == pytest.approx(trained)
    assert out["compare"]["changed"] == pytest.approx(float(embedding["mine changed"] @ embedding["theirs changed"]))
    assert abs(out["compare"]["changed"] - trained) > 1e-6  # the changes moved it
    assert [o["text"] for o in out["others"]] == list(live.OTHERS)  # the fixed ones are still compared
    assert live.heads(SENTENCE, folder=folder)["similarity"]["compare"] is None  # nothing typed: no comparison


@pytest.mark.parametrize("typed, want", [
    ("", None),
    ("  \t\n ", None),  # white space only: nothing typed
    ("\u200b\u0007\u200d", {"problem": "no-words", "tokens": ["[CLS]", "[SEP]"]}),  # every character dropped
    ("cat " * 200, {"problem": "too-long", "count": 202, "limit": wordpiece.MAX_TOKENS}),  # the live sentence's bound
    ("🙂 Ça\u0301? <b>&amp;</b>", "cosine"),  # odd characters: WordPiece's tokens ([UNK] among them), a cosine
])
def test_a_comparison_sentence_that_gives_no_cosine_says_why_and_the_run_goes_on(folder, typed, want):
    out = live.heads(SENTENCE, folder=folder, compare=typed)
    compare = out["similarity"]["compare"]
    assert len(out["similarity"]["others"]) == len(live.OTHERS)  # the run itself went on
    if want is None:
        assert compare is None
        return
    if want == "cosine":
        want = {"tokens": live.model(folder)[1].encode(typed)[1]}
        assert -1 <= compare["trained"] == compare["changed"] <= 1
    assert compare["text"] == typed and {k: compare[k] for k in want} == want
    assert ("problem" in compare) != ("trained" in compare)  # a reason, or the numbers: never both


def test_a_comparison_that_is_not_text_is_refused_in_words(folder):
    with pytest.raises(ValueError, match="the sentence to compare with must be text, not int"):
        live.heads(SENTENCE, folder=folder, compare=3)


def test_a_knocked_out_head_keeps_its_pattern_and_passes_nothing_on(folder):
    W, tokenizer = live.model(folder)
    ids = tokenizer.encode(SENTENCE)[0]
    plain, off = minilm.forward(W, ids), minilm.forward(W, ids, {(5, 3): "off"})
    np.testing.assert_array_equal(off["weights"], plain["weights"])  # the last layer's pattern is drawn as it was
    assert np.abs(off["hidden"] - plain["hidden"]).max() > 1e-4  # but the output moved
    np.testing.assert_array_equal(minilm.forward(W, ids, {(5, 3): 1})["hidden"], plain["hidden"])  # x 1 is no change


@pytest.mark.parametrize("changes, message", [
    ("off", "changes must be a list"),
    ([{"layer": 0, "head": 0}], "each change is {layer, head, change}"),
    ([changed(6, 0, "off")], "layer 6: MiniLM's layers are 0 to 5"),
    ([changed(0, -1, "off")], "head -1: MiniLM's heads are 0 to 11"),
    ([changed(0, 1.0, "off")], "head 1.0"),
    ([changed(0, 0, "none")], "is 'none': \"off\", or a factor"),
    ([changed(0, 0, -0.5)], "is -0.5"),
    ([changed(0, 0, 1e9)], "from 0 to 100"),
    ([changed(0, 0, float("inf"))], "is inf"),
    ([changed(0, 0, True)], "is True"),
])
def test_a_bad_change_is_refused_in_words(folder, changes, message):
    with pytest.raises(ValueError, match=message.replace("(", "\\(").replace("{", "\\{")):
        live.heads(SENTENCE, folder=folder, changes=changes)


@pytest.mark.slow  # a full-size MiniLM's forward pass, again and again
def test_the_readers_forward_gets_the_changes_and_must_give_the_vectors(folder):
    changes = [changed(1, 2, "off"), changed(3, 4, 2)]
    lesson = live.heads(SENTENCE, folder=folder, changes=changes)
    namespace = run_cell(MINILM_FILE, "minilm-forward", {"__name__": "__main__"})
    mine = live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace), changes=changes)
    assert mine["forward"] == "yours"
    np.testing.assert_array_equal(mine["arrays"]["weights"], lesson["arrays"]["weights"])
    assert mine["similarity"] == pytest.approx(lesson["similarity"])
    # a forward without knock= runs as long as nothing is changed, and says what changes need
    namespace = run_cell(edited(SIGNATURE, "def forward(W, ids):\n    knock = None\n"), "minilm-forward", {"__name__": "__main__"})
    assert live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace))["forward"] == "yours"
    with pytest.raises(live.ForwardError, match="takes no knock= argument, which changing heads needs"):
        live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace), changes=changes)
    # a forward that leaves out the last layer's vectors, or zeroes them, cannot be compared
    for new, message in (("    return {'weights': out['weights']}\n", "returned 'hidden' NoneType"),
                         ("    out['hidden'] = 0 * out['hidden']\n    return out\n", "all zeros")):
        namespace = run_cell(edited("    return out\n", new), "minilm-forward", {"__name__": "__main__"})
        with pytest.raises(live.ForwardError, match=message):
            live.heads(SENTENCE, folder=folder, cell="minilm-forward", reader=ReaderCells(namespace))
