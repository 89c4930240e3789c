""""What comes next?": SmolLM2 live on the reader's text, the panel's one call (:func:`predict`).

The text becomes token ids (:mod:`lessonpy.models.bpe`) after one ``<|endoftext|>``, the token that separates
documents in SmolLM2's training text, so every text starts as a new document does (and as the head tests'
sequences do: :mod:`lessonpy.models.head_tests`). :func:`lessonpy.models.smollm2.forward` gives the logits of
every position; the panel shows

- the top next tokens after the last position, with their probabilities;
- for every position t, the model's top token there against the token that actually came next, t + 1, and
  that token's loss, -log p(token t+1 | tokens 0..t): the shifted targets a language model is trained on
  (Lesson 5);
- every head's attention weights (L, H, T, T) for the grid.

With knock-outs (heads whose output is zeroed, "off", or replaced by its mean over the text's positions,
"mean": :func:`lessonpy.models.smollm2.knock_heads`) the same numbers come back twice, as trained and knocked
out. The pass as trained is kept per text (its small numbers, not its weights), so a second run on the same
text with other knock-outs costs one pass, not two.

The weights are read once from where the page's worker writes them (:data:`lessonpy.models.smollm2.FOLDER`);
in CPython pass ``folder=``.
"""

from __future__ import annotations

import time

import numpy as np

from . import head_tests, page_files, smollm2

#: the most tokens a text may make, the start token included: a 64-token pass takes about 13 s in the page
#: (twice the 32-token figures of docs/speed.md), and its (L, H, T, T) weights 4.4 MB
MAX_TOKENS = 64
#: the most next tokens the panel lists
MAX_TOP = 20
#: the token put before every text: SmolLM2's end-of-document marker
START = "<|endoftext|>"
#: the tests' draw the preset is made of (lessonpy.models.head_tests: SmolLM2's shipped sequences)
PRESET_DRAW = 0
#: the reader's own Lesson 5 functions the panel can run instead of the lesson's: the masked attention of every
#: full pass, and the step of generation with the cache (lessonpy.models.generate)
READER_FUNCTIONS = ("causal_attention", "decode_step")


def preset(tokenizer):
    """The preset text: the head tests' first sequence of random tokens, written twice. It tokenizes back to
    exactly those ids (tested with the real tokenizer), so after :data:`START` it is the tests' own sequence."""
    random_ids = head_tests.load()["models"]["smollm2"]["random"][PRESET_DRAW]
    return tokenizer.decode(random_ids) * 2


def preset_heads():
    """The heads the preset's buttons knock out, from the shipped head tests' best heads: ``induction`` (the
    induction head and the previous-token head that feeds it) and ``sink`` (the first-token head). Each a list
    of [layer, head]."""
    best = {test: [s["best"]["layer"], s["best"]["head"]] for test, s in head_tests.summaries()["smollm2"].items()}
    return {"induction": [best["induction"], best["previous"]], "sink": [best["first"]]}


def knocks(knock, m):
    """*knock*, a list of [layer, head, "off" | "mean"], as :func:`lessonpy.models.smollm2.knock_heads`' dict;
    ValueError in one line naming the entry that is wrong. A head listed twice keeps its last knock-out."""
    if not isinstance(knock, (list, tuple)):
        raise ValueError(f"knock must be a list of [layer, head, kind], not {type(knock).__name__}")
    out = {}
    for entry in knock:
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            raise ValueError(f"each knock-out is [layer, head, kind], got {entry!r}")
        layer, head, kind = entry
        for name, value, size in (("layer", layer, m.layers), ("head", head, m.heads)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
                raise ValueError(f"a knock-out names {name} {value!r}: SmolLM2's {name}s are 0 to {size - 1}")
        if kind not in smollm2.KNOCKS:
            raise ValueError(f"layer {layer}, head {head}: a knock-out is {' or '.join(map(repr, smollm2.KNOCKS))}, "
                             f"not {kind!r}")
        out[(layer, head)] = kind
    return out


def encode(text, tokenizer):
    """The ids of *text* after :data:`START`; ValueError in one line for no text or too many tokens."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("type some text first")
    ids = [tokenizer.special[START], *tokenizer.encode(text)]
    if len(ids) > MAX_TOKENS:
        raise ValueError(f"your text makes {len(ids) - 1} tokens; the panel reads at most {MAX_TOKENS - 1} "
                         "(a pass grows with their number): shorten it")
    return ids


def log_softmax(logits):
    """log p over the vocabulary, (..., V) float64: the logits less their log-sum-exp. Worked out in place in the
    one float64 copy, a row at a time: written as one expression, 32 positions' 49,152 logits made four more
    copies of 12.6 MB at once, and Python's wasm memory, which never shrinks, kept the 55 MB (docs/speed.md)."""
    x = logits.astype(np.float64)
    rows = x.reshape(-1, x.shape[-1])  # a view: the rows of x
    for row in rows:
        row -= row.max()
        row -= np.log(np.exp(row).sum())
    return x


def summary(logits, ids, top, tokenizer):
    """The small numbers of one pass: ``top`` [{id, token, p}] after the last position; per position t
    ``predicted`` (its top token's id) and ``p_predicted``; per position t < T - 1 ``loss`` (nats) of the token
    that came next, and ``p_next``, its probability."""
    logp = log_softmax(logits)  # (T, V)
    last = np.exp(logp[-1])
    order = np.argsort(-last, kind="stable")[:top]
    ids = np.asarray(ids)
    nxt = logp[np.arange(len(ids) - 1), ids[1:]]  # (T - 1,): log p of each next token
    predicted = logp.argmax(-1)
    return {"top": [{"id": int(i), "token": tokenizer.token_text(int(i)), "p": float(last[i])} for i in order],
            "predicted": [int(i) for i in predicted],
            "predicted_tokens": [tokenizer.token_text(int(i)) for i in predicted],
            "p_predicted": [float(np.exp(logp[t, i])) for t, i in enumerate(predicted)],
            "loss": [float(-x) for x in nxt], "p_next": [float(np.exp(x)) for x in nxt]}


_clean: dict = {}  # (folder, ids, top, attention) -> the summary of the pass as trained: one pass saved per knocked-out run


def _reader_function(reader, cells, name):
    """The reader's *name* from the cell ``cells[name]`` (``lessonpy.runtime.runner.ReaderCells``), or
    ReaderFunctionError in one line saying where to define it."""
    cell = (cells or {}).get(name)
    found = reader.defined(name, cell) if reader is not None and cell else None
    if found is None:
        where = f'the cell "{cell}"' if cell else "a cell of this page"
        raise smollm2.ReaderFunctionError(f"no {name} of yours has run: define it in {where}, run that cell, "
                                          "then try again (or untick \"Use my own\")")
    return found


def reader_functions(mine, reader=None, cells=None, use=READER_FUNCTIONS):
    """{name: function or None} for each of :data:`READER_FUNCTIONS`: the reader's for the names in both *mine*
    (the panel's list of those names) and *use* (what this call runs), the lesson's (None) for the others."""
    if not isinstance(mine, (list, tuple)) or any(name not in READER_FUNCTIONS for name in mine):
        raise ValueError(f"mine lists {' and/or '.join(READER_FUNCTIONS)}, not {mine!r}")
    return {name: _reader_function(reader, cells, name) if name in mine and name in use else None
            for name in READER_FUNCTIONS}


def predict(text, knock=(), top=10, folder=smollm2.FOLDER, target=None, mine=(), cells=None, reader=None):
    """SmolLM2 on the reader's *text* (see the module's docstring). Returns {tokens, ids, targets (each
    position's next token, None at the last), seconds (this call's passes), layers, heads, knock (as applied),
    attention ("yours" or "lesson"), trained: :func:`summary` as trained, knocked: the same with *knock* (None
    without), arrays: {weights (L, H, T, T) float32 of the pass with the knock-outs}}.

    *mine* ["causal_attention"]: the passes use the reader's Lesson 5 ``causal_attention``, found in the cell
    *cells* names among the *reader*'s (:func:`reader_functions`); a missing or unusable
    one raises :class:`smollm2.ReaderFunctionError` in one line. Theirs returns no weights: the grid then shows
    none (``arrays`` is empty)."""
    m, tokenizer = smollm2.load(folder)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP:
        raise ValueError(f"top must be a whole number from 1 to {MAX_TOP}, not {top!r}")
    applied = knocks(knock, m)
    attention = reader_functions(mine, reader, cells, use=("causal_attention",))["causal_attention"]
    ids = encode(text, tokenizer)
    key = (str(folder), tuple(ids), top, attention)
    start = time.perf_counter()
    out = smollm2.forward(m, ids, knock=smollm2.knock_heads(applied), keep=("weights",), attention=attention)
    this = summary(out["logits"], ids, top, tokenizer)
    if not applied:
        _clean[key] = this
    elif key not in _clean:
        if len(_clean) > 32:
            _clean.clear()
        _clean[key] = summary(smollm2.forward(m, ids, keep=(), attention=attention)["logits"], ids, top, tokenizer)
    seconds = time.perf_counter() - start
    tokens = [tokenizer.token_text(i) for i in ids]
    return {"view": "next-token", "target": target, "tokens": tokens, "ids": ids,
            "targets": tokens[1:] + [None], "seconds": seconds, "layers": m.layers, "heads": m.heads,
            "knock": [[layer, head, kind] for (layer, head), kind in applied.items()],
            "attention": "lesson" if attention is None else "yours",
            "trained": _clean[key], "knocked": this if applied else None,
            "arrays": {"weights": out["weights"]} if "weights" in out else {}}


def files():
    """What the page must put into Python's file system first: [{name, path, loaded}] (name: under
    data/smollm2-live/; loaded: already read, nothing to put there: :mod:`lessonpy.models.page_files`)."""
    return page_files.listing(smollm2.FOLDER, (smollm2.WEIGHTS_NAME, smollm2.TOKENIZER_NAME), smollm2.loaded())
