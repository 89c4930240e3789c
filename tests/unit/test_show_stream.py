"""lessonpy.course.block.show_stream.show_residual_stream: the reader's stream and writes (Lesson 6's block loop, run
here on the tiny random SmolLM2 of tests/support/smollm2_random.py) give the residual-stream widget exactly the
numbers its live run computes for the same text; another position's lens is read from the kept stream; a wrong
array is refused in one line, on the page and in the cell."""

from __future__ import annotations

import numpy as np
import pytest
from lessonpy.course.block import real_layers, residual_stream, show_stream
from lessonpy.maths.show import ShowError
from lessonpy.models import next_token, smollm2

from smollm2_random import SIZES, random_folder

TEXT = "a cab, a bad cab."


@pytest.fixture(scope="module")
def smol(tmp_path_factory):
    return smollm2.load(random_folder(tmp_path_factory.mktemp("smollm2")))


@pytest.fixture(scope="module")
def arrays(smol):
    """The lesson's smollm2-layer cell on TEXT: the stream after each block, and each block's writes."""
    m, tokenizer = smol
    ids = next_token.encode(TEXT, tokenizer)
    x = m.embed(np.array(ids))
    stream, writes = [x], []
    for layer in range(m.layers):
        writes.append({})
        x = real_layers.smollm2_block(m, layer, writes[-1])(x)
        stream.append(x)
    return {"stream": np.stack(stream), "writes": writes, "tokens": [tokenizer.token_text(i) for i in ids],
            "model": m, "tokenizer": tokenizer}


@pytest.fixture(autouse=True)
def events(bridge_events):
    return bridge_events


def test_the_payload_is_the_live_runs_numbers_for_the_same_text(smol, arrays, events):
    m, tokenizer = smol
    show_stream.show_residual_stream(**arrays, title="Mine", target="stream")
    [(kind, payload)] = events
    T = len(arrays["tokens"])
    live, _ = residual_stream.compute(m, tokenizer, TEXT, positions=[T - 1])
    assert kind == "arrays" and payload["view"] == "residual-stream" and isinstance(payload["key"], int)
    assert (payload["target"], payload["title"], payload["position"]) == ("stream", "Mine", T - 1)
    # exactly, not within a tolerance: one definition of each number, on the same float32 arrays
    assert payload["norms"] == live["norms"] and payload["lens"] == live["lens"]
    assert payload["tokens"] == live["tokens"] and payload["layers"] == live["layers"] == SIZES["layers"]
    assert list(payload["lens"]) == [str(T - 1)]  # one position's lens: each costs a pass through the vocabulary


def test_another_position_is_read_from_the_kept_stream(smol, arrays):
    m, tokenizer = smol
    first = show_stream.build_stream_payload(**arrays, position=2)
    assert first["position"] == 2 and list(first["lens"]) == ["2"]
    reply = show_stream.lens(first["key"], -1, target="stream")
    T = len(arrays["tokens"])
    assert reply["position"] == T - 1 and reply["key"] == first["key"]
    assert reply["lens"] == residual_stream.compute(m, tokenizer, TEXT, positions=[T - 1])[0]["lens"]
    newer = show_stream.build_stream_payload(**arrays)
    assert newer["key"] != first["key"]
    with pytest.raises(ValueError, match="run the cell that drew them again"):
        show_stream.lens(first["key"], 1)  # another picture was sent since: that stream is gone


def spoil(arrays, **changes):
    return {**arrays, **changes}


def bad_cases(a):
    """(what a reader might pass, the message it must get)."""
    s, w = a["stream"], a["writes"]
    L, T, C = s.shape[0] - 1, s.shape[1], s.shape[2]
    nan = s.copy()
    nan[1, 2, 3] = np.nan
    return [
        ({"stream": s[:, -1]}, "stream: expected (layers + 1, T, C), every position's stream after each layer, got "
                               f"shape ({L + 1}, {C}): one position's (stream[:, -1])? pass the whole stack"),
        ({"stream": s[None]}, f"stream: expected a 3-D (layers + 1, T, C) array, got shape (1, {L + 1}, {T}, {C})"),
        ({"stream": s[:1], "writes": []}, "stream: got 1 row, the embedding alone: stack the stream after each "
                                          "layer too, (layers + 1, T, C)"),
        ({"stream": nan}, "stream: contains nan at index (1, 2, 3); pass finite numbers"),
        ({"writes": w[:-1]}, f"writes: got {L - 1} layers' writes for a stream of {L + 1} rows ({L} layers): pass "
                             "one dict per layer"),
        ({"writes": w[0]}, f"writes: expected a list of {L} dicts, one per layer, {{'attn': (T, C), 'mlp': (T, C)}}, "
                           "got dict"),
        ({"writes": [{"attn": w[0]["attn"]}, *w[1:]]}, "writes[0]: expected a dict with 'attn' and 'mlp', got ['attn']"),
        ({"writes": [w[0], {**w[1], "mlp": w[1]["mlp"][-1]}]},
         f"writes[1]['mlp']: expected shape (T, C) = ({T}, {C}), as the stream's, got ({C},)"),
        ({"tokens": a["tokens"][1:]}, f"tokens: got {T - 1} labels for T={T} positions; pass one label per position"),
        ({"tokens": None}, f"tokens: pass the text's {T} tokens, one label per position"),
        ({"model": None}, "nothing to draw without model: pass stream= (L + 1, T, C), writes= (one {'attn', 'mlp'} "
                          "per layer), tokens=, model= and tokenizer="),
        ({"model": a["tokenizer"]}, "model: expected SmolLM2's weights (the first of live_models.smollm2_model()), "
                                    "got BPE"),
        ({"tokenizer": a["model"]}, f"tokenizer: expected the model's tokenizer ({SIZES['vocab']} tokens), the second "
                                    "of live_models.smollm2_model()"),
        ({"stream": s[..., :32], "writes": [{k: v[:, :32] for k, v in d.items()} for d in w]},
         f"model: its width is {C} but the stream's C is 32: pass the model the stream came from"),
        ({"position": T}, f"position {T}: the stream has {T} positions, 0 to {T - 1} (or -{T} to -1 from the end)"),
        ({"title": 3}, "title: expected a string, got int"),
    ]


def test_each_wrong_argument_gets_its_one_line_message_on_the_page_and_in_the_cell(arrays, events):
    for changes, message in bad_cases(arrays):
        events.clear()
        with pytest.raises(ShowError) as err:
            show_stream.show_residual_stream(**spoil(arrays, **changes), target="stream")
        assert str(err.value) == message, changes.keys()
        [(kind, payload)] = events
        assert kind == "arrays" and payload == {"view": "residual-stream", "title": None, "target": "stream",
                                                "error": message}


def test_float64_arrays_are_drawn_as_the_live_runs_float32(arrays):
    """A reader's stream in float64 (np.stack of float64 blocks, say) gives the numbers of its float32 copy."""
    wide = {**arrays, "stream": arrays["stream"].astype(np.float64),
            "writes": [{k: v.astype(np.float64) for k, v in d.items()} for d in arrays["writes"]]}
    got, want = show_stream.build_stream_payload(**wide), show_stream.build_stream_payload(**arrays)
    assert got["norms"] == want["norms"] and got["lens"] == want["lens"]


def test_outside_the_page_the_notebook_draws_the_payload_as_a_figure(arrays):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from lessonpy.course.block import stream_mpl
    from lessonpy.maths import notebook

    payload = show_stream.build_stream_payload(**arrays, title="Mine")
    plt.close("all")
    notebook._sink("arrays", payload)  # what %load_ext lessonpy.maths.notebook routes a show_residual_stream to
    [number] = plt.get_fignums()
    ax = plt.figure(number).axes[0]
    L, at = payload["layers"], payload["position"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["embed", *map(str, range(L))]
    bars = [b.get_width() for b in ax.patches]  # attention, MLP, stream: a bar per depth each
    np.testing.assert_allclose(bars[L + 1:2 * (L + 1)][1:], np.array(payload["norms"]["mlp"])[:, at])
    np.testing.assert_allclose(bars[2 * (L + 1):], np.array(payload["norms"]["stream"])[:, at])
    lens = payload["lens"][str(at)]
    assert [t.get_text() for t in ax.texts] == [f"{row[0][0]!r} {row[0][1]:.2f}" for row in lens["top"]]
    assert ax.get_title().startswith(f"Mine at {payload['tokens'][at]!r} (position {at})")
    plt.close("all")
    assert stream_mpl.draw({"view": "residual-stream", "error": "stream: ..."}) is None
