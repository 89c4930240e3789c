"""Generation in "What comes next?" (lessonpy.models.generate) on the tiny random SmolLM2
(tests/support/smollm2_random.py): greedy is the argmax continuation, the cached and uncached ways make the same
tokens, a temperature's draws repeat with their seed however the run is cut into calls, the limits and the
reader's functions (theirs used, their mistakes named in one line). The real model in the page:
tests/browser/widgets/test_next_token_browser.py."""

from __future__ import annotations

import numpy as np
import pytest
from lessonpy.models import generate, next_token, smollm2
from lessonpy.runtime.runner import ReaderCells

from cell_runner import run as run_in_cell_runner
from lesson5_functions import CAUSAL_ATTENTION, DECODE_STEP
from smollm2_random import random_folder

TEXT = "a cab, a bad cab."
#: the cached step against the full pass: the same float32 sums in another order (test_smollm2_live's CACHE_TOL)
CACHE_TOL = 1e-4
CELLS = {"causal_attention": "prefix", "decode_step": "my-decode-step"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return random_folder(tmp_path_factory.mktemp("smollm2"))


def generated(folder, calls=None, **options):
    """The last reply of a whole generation (at most *calls* calls of more)."""
    reply = generate.start(TEXT, folder=folder, **options)
    for _ in range(calls or 10 * generate.MAX_NEW_TOKENS):
        if reply["done"]:
            break
        reply = generate.more(reply["run"])
    return reply


def test_greedy_is_the_argmax_continuation_of_full_passes(folder):
    m, tokenizer = smollm2.load(folder)
    reply = generated(folder, new_tokens=6)
    ids = next_token.encode(TEXT, tokenizer)
    for _ in range(6):
        ids.append(int(smollm2.forward(m, ids, keep=())["logits"][-1].argmax()))
    assert reply["done"] and reply["made"] == 6 and reply["ids"] == ids[-6:]
    assert reply["text"] == tokenizer.decode(ids[-6:]) and reply["tokens"] == [tokenizer.token_text(i) for i in ids[-6:]]
    assert len(reply["steps"]) == 5 and reply["first_seconds"] > 0  # the last token needs no step after it


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_with_and_without_the_cache_the_same_tokens_and_both_timings(folder, temperature):
    with_cache = generated(folder, new_tokens=8, temperature=temperature, seed=7)
    without = generated(folder, new_tokens=8, temperature=temperature, seed=7, cache=False)
    assert (with_cache["way"], without["way"]) == ("cache", "full")
    assert with_cache["ids"] == without["ids"]
    assert set(without["timings"]) == {"cache", "full"} and without["timings"]["full"]["steps"] == 7
    assert without["speedup"] == pytest.approx(without["timings"]["full"]["seconds_per_token"]
                                               / without["timings"]["cache"]["seconds_per_token"])


def test_a_cached_step_gives_the_full_passs_logits(folder):
    m, tokenizer = smollm2.load(folder)
    ids = next_token.encode(TEXT, tokenizer)
    g = generate.Generation(m, tokenizer, ids, "cache", 0.0, 0, 4, None, {"causal_attention": None, "decode_step": None}, None)
    g.first()
    for _ in range(3):
        g.one()
        full = smollm2.forward(m, g.ids, keep=())["logits"][-1]
        assert np.abs(g.logits - full).max() <= CACHE_TOL


def test_a_temperature_draws_again_the_same_tokens_with_its_seed_however_the_calls_are_cut(folder, monkeypatch):
    first = generated(folder, new_tokens=10, temperature=1.5, seed=123)
    monkeypatch.setattr(generate, "CHUNK_SECONDS", 0.0)  # one token a call
    again = generated(folder, new_tokens=10, temperature=1.5, seed=123)
    other = generated(folder, new_tokens=10, temperature=1.5, seed=124)
    greedy = generated(folder, new_tokens=10)
    assert again["ids"] == first["ids"] and again["seed"] == 123
    assert other["ids"] != first["ids"] and greedy["ids"] != first["ids"]


def test_a_draw_follows_the_softmax_of_the_logits_over_the_temperature():
    logits = np.log(np.array([0.7, 0.2, 0.1]))
    draws = np.bincount([generate.sample(logits, 1.0, 5, t) for t in range(4000)], minlength=3) / 4000
    assert np.abs(draws - [0.7, 0.2, 0.1]).max() < 0.03
    cold = np.bincount([generate.sample(logits, 0.25, 5, t) for t in range(4000)], minlength=3) / 4000
    p = np.array([0.7, 0.2, 0.1]) ** 4
    assert np.abs(cold - p / p.sum()).max() < 0.03  # a lower temperature sharpens the distribution


def test_knocked_out_heads_change_what_is_generated_the_same_both_ways(folder):
    m, tokenizer = smollm2.load(folder)
    knock = [[0, 1, "off"], [1, 0, "off"], [1, 2, "off"]]
    with_cache = generated(folder, new_tokens=6, knock=knock)
    without = generated(folder, new_tokens=6, knock=knock, cache=False)
    ids = next_token.encode(TEXT, tokenizer)
    knocked = smollm2.knock_heads({(0, 1): "off", (1, 0): "off", (1, 2): "off"})
    for _ in range(6):
        ids.append(int(smollm2.forward(m, ids, knock=knocked, keep=())["logits"][-1].argmax()))
    assert with_cache["ids"] == without["ids"] == ids[-6:]
    assert with_cache["ids"] != generated(folder, new_tokens=6)["ids"]


def test_a_stop_within_a_call_loses_nothing_already_made(folder, monkeypatch):
    reply = generate.start(TEXT, folder=folder, new_tokens=6)
    reply = generate.more(reply["run"])  # CHUNK_SECONDS is plenty for the tiny model: all of it
    made = generate.start(TEXT, folder=folder, new_tokens=6)
    run = made["run"]
    monkeypatch.setattr(generate, "CHUNK_SECONDS", 0.0)
    generate.more(run)  # the first pass
    shown = generate.more(run)  # one token
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        raise KeyboardInterrupt  # the page's Stop, in the middle of a step

    monkeypatch.setattr(smollm2, "decode_step", interrupted)
    with pytest.raises(KeyboardInterrupt):
        generate.more(run)
    assert calls and generate._runs[run].ids[-1:] == shown["ids"][-1:] and generate._runs[run].made == shown["made"]
    monkeypatch.undo()
    while not shown["done"]:
        shown = generate.more(run)
    assert shown["ids"] == reply["ids"]


@pytest.mark.parametrize("options, says", [
    ({"temperature": -0.5}, "temperature must be a number from 0 to 2, not -0.5"),
    ({"temperature": float("nan")}, "temperature must be a number"),
    ({"seed": 1.5}, "seed must be a whole number from 0 to 4294967295"),
    ({"new_tokens": generate.MAX_NEW_TOKENS + 1}, f"new_tokens must be a whole number from 1 to {generate.MAX_NEW_TOKENS}"),
    ({"cache": "yes"}, "cache must be true or false"),
    ({"knock": [[0, 1, "mean"]]}, 'with "off" only: "mean" replaces a head\'s output by its mean'),
    ({"knock": [[5, 1, "off"]]}, "layers are 0 to 1"),
    ({"mine": ["attention"]}, "mine lists causal_attention and/or decode_step"),
    ({"mine": ["decode_step"]}, 'no decode_step of yours has run: define it in a cell of this page'),
])
def test_bad_options_are_refused_in_one_line(folder, options, says):
    with pytest.raises(ValueError, match=says) as info:
        generate.start(TEXT, folder=folder, **options)
    assert "\n" not in str(info.value)


def test_an_ended_run_says_so(folder):
    old = generate.start(TEXT, folder=folder)["run"]
    generate.start(TEXT, folder=folder)
    with pytest.raises(ValueError, match="this generation has ended"):
        generate.more(old)


# ---------------------------------------------------------------------------- the reader's own functions

def reader_with(code=None, cell="my-decode-step"):
    """The reader's cells after running *code* as the page runs a cell *cell*."""
    namespace = {"__name__": "__main__"}
    if code:
        result, _ = run_in_cell_runner(code, namespace, cell)
        assert result.ok, result.error
    return ReaderCells(namespace)


def test_the_readers_decode_step_and_causal_attention_generate_as_the_lessons_do(folder, monkeypatch):
    reader = reader_with(DECODE_STEP)
    run_in_cell_runner(CAUSAL_ATTENTION, reader.namespace, "prefix")
    used = []
    real = smollm2.decode_step
    monkeypatch.setattr(smollm2, "decode_step", lambda *a, **k: used.append(k["decode_step"]) or real(*a, **k))
    lesson = generated(folder, new_tokens=5)
    mine = generated(folder, new_tokens=5, mine=["causal_attention", "decode_step"], cells=CELLS, reader=reader)
    assert mine["ids"] == lesson["ids"]
    assert mine["functions"] == {"causal_attention": "yours", "decode_step": "yours"}
    assert used[-1] is reader.namespace["decode_step"]
    predicted = next_token.predict(TEXT, folder=folder, mine=["causal_attention", "decode_step"], cells=CELLS, reader=reader)
    assert predicted["attention"] == "yours" and predicted["arrays"] == {}  # their function returns no weights
    assert predicted["trained"]["predicted"] == next_token.predict(TEXT, folder=folder)["trained"]["predicted"]


@pytest.mark.parametrize("code, says", [
    (DECODE_STEP.replace("K_cache @ q / np.sqrt(len(q))", "np.full(len(K_cache), np.nan)"), "your decode_step's out_t has NaN or infinite values"),
    (DECODE_STEP.replace("return w @ V_cache, K_cache, V_cache", "return w"),
     r"your decode_step returned ndarray: the model needs \(out_t, K_cache, V_cache\)"),
    (DECODE_STEP.replace("q = x_t @ W_q", "q = x_t @ W_q.T"), "your decode_step raised ValueError: matmul"),
    (None, 'no decode_step of yours has run: define it in the cell "my-decode-step", run that cell'),
    ("decode_step = 3", 'no decode_step of yours has run'),  # not a function that cell defined
])
def test_the_readers_decode_step_mistakes_are_named_in_one_line(folder, code, says):
    reader = reader_with(code)
    with pytest.raises(smollm2.ReaderFunctionError, match=says) as info:
        generated(folder, new_tokens=3, mine=["decode_step"], cells=CELLS, reader=reader)
    assert "\n" not in str(info.value)


def test_a_prediction_with_no_causal_attention_of_the_readers_says_where_to_define_it(folder):
    with pytest.raises(smollm2.ReaderFunctionError, match='no causal_attention of yours has run: define it in the cell "prefix"'):
        next_token.predict(TEXT, folder=folder, mine=["causal_attention", "decode_step"], cells=CELLS, reader=reader_with(None))
    # their decode_step alone changes nothing of a prediction, which has no cached step
    assert next_token.predict(TEXT, folder=folder, mine=["decode_step"], cells=CELLS, reader=reader_with(None))["attention"] == "lesson"


def test_without_the_cache_the_readers_decode_step_is_not_asked_for(folder):
    reply = generated(folder, new_tokens=3, cache=False, mine=["decode_step"], cells=CELLS, reader=reader_with(None))
    assert reply["done"] and reply["functions"]["decode_step"] == "lesson"
