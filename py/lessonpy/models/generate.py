"""Generation in "What comes next?": SmolLM2 writes after the reader's text, a token at a time, with the KV cache
and without, each timed, so Lesson 5's argument for the cache is measured in a real model.

The panel calls :func:`start` (checks everything, computes nothing), then :func:`more` until the reply says
``done``: each call makes tokens for about :data:`CHUNK_SECONDS` (at least one step), so the page shows them as
they come and its Stop ends the run between calls (it stops asking) or within one (Python is interrupted).
A token is committed only with the step that follows it, so an interrupted call loses nothing already shown
and leaves the run as the last reply described it.

Both ways start the same: one causal pass over the reader's text (after :data:`next_token.START`) gives the
first new token's logits. Then

- **with the cache** the pass's keys and values are kept (``k``, ``v`` of :func:`smollm2.forward`) and each new
  token goes through the model alone (:func:`smollm2.decode_step`): one position's work per token;
- **without** every new token reruns the whole pass over the text so far (the last position's logits only):
  the work grows with the text, and the earlier positions' results come out as before (up to rounding).

Each step after the first pass is timed: seconds per token, kept per text so the two ways show side by side.
A token is the logits' argmax (greedy, temperature 0) or drawn from softmax(logits / temperature) with a
generator seeded by (seed, position): a run with the same text, temperature and seed makes the same tokens,
whichever way it runs and however it is cut into calls.

Knock-outs apply to every pass of a generation, with "off" only: "mean" replaces a head's output by its mean over
the positions present, and a cached step has one position, so it would change nothing there (see
:func:`smollm2.knock_heads`). The reader's own functions, when asked for: their ``causal_attention`` (Lesson 5)
in the first pass and in every pass without the cache, their ``decode_step`` in every cached step; a missing or
unusable one stops the run with :class:`smollm2.ReaderFunctionError`'s one line.

Speed: a cached step is one position's products, made straight from the kept 4-bit blocks
(:func:`smollm2.linear`), without widening a matrix: about 0.3 s in Pyodide (docs/speed.md).
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from . import next_token, smollm2

#: the most new tokens one generation makes: without the cache the last reruns the pass over up to
#: next_token.MAX_TOKENS + 19 tokens, whose products grow with the text (seconds each in the page: docs/speed.md)
MAX_NEW_TOKENS = 20
#: the highest sampling temperature: past 2 SmolLM2's samples are mostly noise (the distribution is near flat)
MAX_TEMPERATURE = 2.0
#: seeds are what NumPy's generators take whole: 0 to 2**32 - 1
MAX_SEED = 2**32 - 1
#: a call of :func:`more` returns once it has worked this long (one step at least: a token, or the first pass)
CHUNK_SECONDS = 1.0
#: the two ways a generation runs
WAYS = ("cache", "full")


def _number(name, value, low, high, whole=False):
    kinds = (int,) if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high or value != value:
        kind = "a whole number" if whole else "a number"
        raise ValueError(f"{name} must be {kind} from {low} to {high:.15g}, not {value!r}")
    return value


def sample(logits, temperature, seed, position):
    """The next token from *logits* (V,): the argmax at temperature 0, else a draw from softmax(logits /
    temperature) by a generator seeded with (seed, position), so a position's draw does not depend on how
    many draws came before it in the process."""
    if temperature == 0:
        return int(np.argmax(logits))
    p = np.exp(next_token.log_softmax(logits / temperature))
    return int(np.random.default_rng([seed, position]).choice(len(p), p=p / p.sum()))


class Generation:
    """One run's state: the ids so far, the next token's logits, the cache (with the cache), the times."""

    def __init__(self, m, tokenizer, ids, way, temperature, seed, new_tokens, knock, functions, key):
        self.m, self.tokenizer, self.prompt = m, tokenizer, list(ids)
        self.ids, self.way, self.temperature, self.seed, self.limit = list(ids), way, temperature, seed, new_tokens
        self.knock, self.functions, self.key = knock, functions, key
        self.logits, self.cache, self.first_seconds, self.steps = None, None, None, []

    @property
    def made(self):
        return len(self.ids) - len(self.prompt)

    @property
    def done(self):
        return self.made >= self.limit

    def full_pass(self, ids, keep=()):
        return smollm2.forward(self.m, ids, knock=self.knock, keep=keep, logits="last",
                               attention=self.functions["causal_attention"])

    def first(self):
        """The causal pass over the text: the first new token's logits, and the cache with the cache."""
        start = time.perf_counter()
        out = self.full_pass(self.ids, keep=("k", "v") if self.way == "cache" else ())
        cache = [(out["k"][i], out["v"][i]) for i in range(self.m.layers)] if self.way == "cache" else None
        self.logits, self.cache, self.first_seconds = out["logits"], cache, time.perf_counter() - start

    def one(self):
        """Make one token, and (unless it is the last) the next token's logits; commit both only at the end."""
        token = sample(self.logits, self.temperature, self.seed, len(self.ids))
        logits, cache, seconds = None, None, None
        if self.made + 1 < self.limit:
            start = time.perf_counter()
            if self.way == "cache":
                logits, cache = smollm2.decode_step(self.m, token, self.cache, knock=self.knock,
                                                    decode_step=self.functions["decode_step"])
            else:
                logits = self.full_pass([*self.ids, token])["logits"]
            seconds = time.perf_counter() - start
        self.ids.append(token)
        self.logits, self.cache = logits, cache
        if seconds is not None:
            self.steps.append(seconds)
        if self.done:
            self.m = self.cache = None  # the cache goes with the run's end


_ids = itertools.count(1)
_runs: dict = {}  # run id -> Generation: the latest only (a new start drops the others and their caches)
#: (folder, prompt ids, functions) -> {way: {seconds_per_token, steps}}: the two ways side by side, per text
_timings: dict = {}


def start(text, cache=True, temperature=0.0, seed=0, new_tokens=MAX_NEW_TOKENS, knock=(), mine=(), cells=None,
          reader=None, folder=smollm2.FOLDER, target=None):
    """Set up a generation after *text* (see the module's docstring) and return :func:`more`'s reply before any
    token: {run, ...}. *knock*: [layer, head, "off"] entries; *mine*: which of the reader's functions to use,
    found in the cells *cells* names ({name: cell id}) among the *reader*'s (the runtime passes them in).
    Every bad argument raises ValueError in one line."""
    m, tokenizer = smollm2.load(folder)
    if not isinstance(cache, bool):
        raise ValueError(f"cache must be true or false, not {cache!r}")
    temperature = float(_number("temperature", temperature, 0, MAX_TEMPERATURE))
    seed = _number("seed", seed, 0, MAX_SEED, whole=True)
    new_tokens = _number("new_tokens", new_tokens, 1, MAX_NEW_TOKENS, whole=True)
    applied = next_token.knocks(knock, m)
    if "mean" in applied.values():
        raise ValueError('generation knocks heads out with "off" only: "mean" replaces a head\'s output by its mean '
                         "over the positions present, and a cached step has one, so it would change nothing")
    functions = next_token.reader_functions(mine, reader, cells, use=next_token.READER_FUNCTIONS if cache
                                             else ("causal_attention",))
    ids = next_token.encode(text, tokenizer)
    key = (str(folder), tuple(ids), tuple(functions.values()))
    _runs.clear()
    run = next(_ids)
    _runs[run] = Generation(m, tokenizer, ids, "cache" if cache else "full", temperature, seed, new_tokens,
                            smollm2.knock_heads(applied), functions, key)
    return _reply(run, target)


def more(run, target=None):
    """Make the next tokens of generation *run* for about :data:`CHUNK_SECONDS` (at least one piece of work unless
    it is done: the first call's is the pass over the text, which makes no token yet) and return {run, way, temperature, seed, limit, made, done, prompt (its token texts), ids (the new ones),
    tokens (their texts), text (the new tokens decoded together), first_seconds (the pass over the text),
    steps (seconds of each step after it), timings: {way: {seconds_per_token, steps}} for this text, both ways
    once both have run, and speedup (without / with) then}."""
    g = _runs.get(run)
    if g is None:
        raise ValueError("this generation has ended (a newer one replaced it, or Python restarted): generate again")
    began = time.perf_counter()
    while not g.done:
        if g.logits is None:
            g.first()
        else:
            g.one()
        if time.perf_counter() - began >= CHUNK_SECONDS:
            break
    return _reply(run, target)


def _reply(run, target):
    g = _runs[run]
    new = g.ids[len(g.prompt):]
    if g.steps:
        if len(_timings) > 32:
            _timings.clear()
        _timings.setdefault(g.key, {})[g.way] = {"seconds_per_token": float(np.mean(g.steps)), "steps": len(g.steps)}
    timings = _timings.get(g.key, {})
    speedup = (timings["full"]["seconds_per_token"] / timings["cache"]["seconds_per_token"]
               if set(timings) == set(WAYS) else None)
    return {"view": "next-token-generate", "target": target, "run": run, "way": g.way, "temperature": g.temperature,
            "seed": g.seed, "limit": g.limit, "made": g.made, "done": g.done,
            "prompt": [g.tokenizer.token_text(i) for i in g.prompt], "prompt_text": g.tokenizer.decode(g.prompt[1:]),
            "ids": new,
            "tokens": [g.tokenizer.token_text(i) for i in new], "text": g.tokenizer.decode(new),
            "first_seconds": g.first_seconds, "steps": list(g.steps),
            "functions": {name: "lesson" if f is None else "yours" for name, f in g.functions.items()},
            "timings": timings, "speedup": speedup}
