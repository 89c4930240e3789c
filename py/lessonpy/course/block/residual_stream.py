"""The residual-stream widget (Lesson 6): SmolLM2-135M on a text, layer by layer, at one position the reader picks.

Per layer it shows the length (L2 norm) of what the layer's attention and its MLP add to the residual stream, the
stream's own length after the layer, and the logit lens there (:func:`.real_layers.logit_lens`: the final RMSNorm
and the tied embedding applied to the stream early), its top tokens with their probabilities.

**Per position, not averaged over positions.** The first position's stream (the ``<|endoftext|>`` every text
starts with) grows, on the lesson's sentence, more than twenty times longer than any other position's (the start
token as an attention sink: heads with nothing to read park their weight there, and its stream carries a few huge
channels; ``tests/build/test_residual_stream_data.py`` holds the ratio). An
average over positions would be that one position's number divided by T, and would say nothing of the others.
The lens is read at one position anyway, so the bars and the lens describe the same vector: the stream at the
position the reader picked (by default the last, whose lens is the model's next-token prediction).

The lesson's sentence (:data:`SENTENCE`) comes from a committed file (:data:`DATA_PATH`, made by
``python3 -m sitebuild.realheads.residual_stream`` with the pinned weights), so the build needs no weights; the
page's :func:`stream` computes the same for the reader's own text once the live SmolLM2 is loaded. The stream of
the last text is kept, so picking another position costs only that position's lens.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from ...models import next_token, smollm2
from . import real_layers

#: the lesson's sentence: its lens at the last position names the capital's country only after the last layer
SENTENCE = "Paris is the capital of France, and Rome is the capital of"
#: the lens's top tokens shown per layer
TOP = 3
#: the committed numbers of :data:`SENTENCE` (build time only; the page gets them in the widget's first payload)
DATA_PATH = Path(__file__).resolve().parents[4] / "static" / "data" / "block" / "residual_stream.json"
#: significant digits kept of each number in the payload: a bar or a 3-decimal probability needs no more
DIGITS = 4


def _sig(v) -> float:
    """*v* to :data:`DIGITS` significant digits."""
    return float(f"{float(v):.{DIGITS}g}")


def _round(values) -> list:
    """An array of floats as nested lists, each to :data:`DIGITS` significant digits (a smaller file and payload)."""
    return np.vectorize(_sig, otypes=[float])(np.asarray(values, dtype=np.float64)).tolist()


def norms(run):
    """The lengths of one :func:`.real_layers.smollm2_stream` *run*, as lists: ``attn`` and ``mlp`` (L, T), what
    each layer's attention and MLP wrote at each position; ``stream`` (L + 1, T), the stream's length at each
    position after the embedding (row 0) and after each layer."""
    return {"attn": _round(run["attn"]), "mlp": _round(run["mlp"]), "stream": _round(np.linalg.norm(run["stream"], axis=-1))}


def lens_at(m, stream, position, decode, top=TOP):
    """The logit lens of *stream* (L + 1, T, C) at *position*, after the embedding and after each layer: ``top``
    (L + 1) lists of [token, p], the row's most likely tokens; ``final``, the last row's top token (the model's
    prediction); ``rank`` and ``p`` (L + 1,), that token's rank (0: the row's top) and probability at each row.
    *decode* turns a token id into its text."""
    lens = real_layers.logit_lens(m, stream[:, position], top=top)
    probs = lens["probs"]
    return {"top": [[[decode(int(i)), _sig(probs[r, i])] for i in row] for r, row in enumerate(lens["top"])],
            "final": decode(lens["final"]), "rank": [int(r) for r in lens["rank"]], "p": _round(lens["p"])}


def compute(m, tokenizer, text, positions=None, top=TOP):
    """The widget's numbers of *text* (after ``<|endoftext|>``, as :func:`lessonpy.models.next_token.encode`):
    {text, tokens, layers, norms (:func:`norms`), lens: {position (str): :func:`lens_at`}} for each of *positions*
    (None: every position); and the run's stream, for more lenses later."""
    ids = next_token.encode(text, tokenizer)
    run = real_layers.smollm2_stream(m, ids)
    decode = tokenizer.token_text
    positions = range(len(ids)) if positions is None else positions
    data = {"text": text, "tokens": [decode(i) for i in ids], "layers": int(m.layers), "norms": norms(run),
            "lens": {str(p): lens_at(m, run["stream"], p, decode, top) for p in positions}}
    return data, run["stream"]


def load(path=None):
    """The committed numbers of :data:`SENTENCE` (:func:`compute` with every position), from *path* or :data:`DATA_PATH`."""
    return json.loads(Path(path or DATA_PATH).read_text(encoding="utf-8"))


def payload(data, position, target=None, live=False):
    """What the widget draws: *data* (:func:`compute`'s) with the picked *position*, the view's name and *target*;
    *live*: computed in the page for the reader's text (else the build's, for :data:`SENTENCE`)."""
    return {"view": "residual-stream", "target": target, "position": position, "live": live, **data}


def position_index(position, count):
    """*position* (None: the last; negative counts from the end) as an index of *count* tokens, or ValueError."""
    if position is None:
        return count - 1
    if isinstance(position, bool) or not isinstance(position, int) or not -count <= position < count:
        raise ValueError(f"position {position!r}: your text has {count} tokens, positions 0 to {count - 1}")
    return position % count


def check(o, given):
    """The fence's ``position`` against the lesson's sentence: [(option, message)]."""
    count = len(load()["tokens"])
    try:
        position_index(o.get("position"), count)
    except ValueError:
        return [("position", f"the lesson's sentence has {count} tokens: position is {-count} to {count - 1}")]
    return []


def build_options(site):
    """The live SmolLM2's files' sizes and sha256 (None: the site has none) and their folder, from the page (the
    next-token panel's), and the most tokens a text may make."""
    return {"live_files": site.get("smollm2_files"), "live_url": site.get("smollm2_url"),
            "max_tokens": next_token.MAX_TOKENS}


def prerender(o, target=None):
    """The first picture: the committed numbers of :data:`SENTENCE` at the fence's ``position`` (default the last)."""
    data = load()
    if data["text"] != SENTENCE:
        raise ValueError(f"{DATA_PATH.name} holds {data['text']!r}, not the lesson's sentence: run "
                         "python3 -m sitebuild.realheads.residual_stream")
    return payload(data, position_index(o.get("position"), len(data["tokens"])), target)


_kept: dict = {}  # {"key": (folder, ids, top), "data": the reply's numbers, "stream": (L + 1, T, C)}: the last text


def stream(text, position=None, top=TOP, folder=smollm2.FOLDER, target=None):
    """The page's call: the widget's numbers of the reader's *text* with the live SmolLM2 (read from *folder*),
    the lens at *position* (None: the last). The same text again (another position) reuses the kept stream:
    ``pass`` says whether this call ran the model (else only a lens), ``seconds`` how long it took."""
    started = time.perf_counter()
    m, tokenizer = smollm2.load(folder)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= next_token.MAX_TOP:
        raise ValueError(f"top is 1 to {next_token.MAX_TOP}, not {top!r}")
    ids = next_token.encode(text, tokenizer)
    at = position_index(position, len(ids))
    key = (str(folder), tuple(ids), top)
    if _kept.get("key") != key:
        _kept.clear()
        data, whole = compute(m, tokenizer, text, positions=(), top=top)
        _kept.update(key=key, data=data, stream=whole)
    data = _kept["data"]
    passed = bool(not data["lens"])  # a new text: this call ran the pass
    if str(at) not in data["lens"]:
        data["lens"][str(at)] = lens_at(m, _kept["stream"], at, tokenizer.token_text, top)
    lens = data["lens"][str(at)]
    return {**payload({**data, "lens": {str(at): lens}}, at, target, live=True), "pass": passed,
            "seconds": time.perf_counter() - started}
