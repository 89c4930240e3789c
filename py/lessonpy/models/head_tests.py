"""The field's standard tests of what an attention head does, scored on repeated random tokens.

A head's average weight on a few natural sentences says little: a sentence has few repeated tokens, and
many heads have similar habits. The tests used since Olsson et al. (2022, "In-context learning and induction
heads") run the model on a *random* sequence of N distinct ordinary tokens written twice, after one start
token, and ask where each query puts its weight::

    position   0        1 ... N           N+1 ... 2N          (2N+1: [SEP], encoder only)
    token      start    r_1 ... r_N       r_1 ... r_N

Random tokens carry no meaning or grammar to predict from, so the only structure a head can use is the
repetition. Each test names, for every query row it scores, one target key (the tokens of a copy are drawn
without replacement, so every token has exactly one earlier copy):

  previous   t - 1                         the previous-token head
  next       t + 1                         (encoder only: a causal head cannot look ahead)
  duplicate  the other copy of token t     the duplicate-token head
  induction  the token *after* the earlier copy of token t: t - N + 1, prefix matching (causal only: it
             is the attention half of a mechanism that predicts the next token by copying)
  first      position 0 (the start token, [CLS] for MiniLM): the "sink" share

A head's score is its weight on the target, averaged over the rows and the draws. The chance baseline is
what a head spreading its weight evenly over the keys it may see would score on the same rows: 1 / (t + 1)
for a causal query t, 1 / T for the encoder's.

Which rows: for a causal model the second copy (rows N+1 ... 2N), the only rows whose token has an earlier
copy; every test uses the same rows, so their chance baselines are comparable. An encoder sees the whole
sequence from every row, so both copies count (rows 1 ... 2N), the other copy being later for the first;
"previous" leaves out row 1 (its previous token is [CLS], the "first" test's) and "next" row 2N (its next is
[SEP]).

Pure NumPy: :func:`scores` takes attention weights, the build (``sitebuild.realheads.score_heads``) runs the
models and writes ``static/data/realheads/head_tests.json``, and :func:`numbers` gives the lesson's numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

#: the tests that make sense for each kind of model (see the module's docstring)
TESTS = {True: ("previous", "duplicate", "induction", "first"), False: ("previous", "next", "duplicate", "first")}
#: how many heads score above these are counted (a "clear" and a "strong" job)
THRESHOLDS = (0.5, 0.8)
#: the featured head's job in lessonpy.models.realheads -> the test that picks it
TEST_OF_JOB = {"previous": "previous", "next": "next", "same": "duplicate", "induction": "induction",
               "first": "first"}
FILE = "head_tests.json"
DATA_PATH = Path(__file__).resolve().parents[3] / "static" / "data" / "realheads" / FILE


def sequences(random_ids, start, end=None):
    """(draws, N) random token ids -> (draws, T) model input: start token, the tokens twice, then *end* if given."""
    random_ids = np.asarray(random_ids)
    draws = len(random_ids)
    parts = [np.full((draws, 1), start), random_ids, random_ids]
    if end is not None:
        parts.append(np.full((draws, 1), end))
    return np.concatenate(parts, axis=1)


def inputs(model):
    """The sequences (draws, T) a model of the shipped results read: its ``random`` tokens written twice
    between its ``start`` and ``end`` tokens."""
    return sequences(model["random"], model["start"], model["end"])


def draw(seed, draws, n, pool):
    """(draws, N) token ids, each row N distinct ids from *pool* (seeded, so the build can say which)."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.choice(np.asarray(pool), size=n, replace=False) for _ in range(draws)])


def targets(test, n, causal):
    """The query rows a test scores and each row's one target key: two int arrays (R,)."""
    if causal:
        rows = np.arange(n + 1, 2 * n + 1)
    else:
        rows = np.arange(1, 2 * n + 1)
        rows = {"previous": rows[1:], "next": rows[:-1]}.get(test, rows)
    if test == "previous":
        keys = rows - 1
    elif test == "next" and not causal:
        keys = rows + 1
    elif test == "duplicate":
        keys = np.where(rows > n, rows - n, rows + n)
    elif test == "induction" and causal:
        keys = rows - n + 1
    elif test == "first":
        keys = np.zeros_like(rows)
    else:
        raise ValueError(f"no test {test!r} for a {'causal' if causal else 'bidirectional'} model: "
                         f"choose one of {', '.join(TESTS[causal])}")
    return rows, keys


def scores(weights, test, n, causal):
    """Every head's score: weights (draws, L, H, T, T) -> (L, H), the mean weight on the target over rows and
    draws."""
    rows, keys = targets(test, n, causal)
    return weights[..., rows, keys].mean(-1).mean(0)


def chance(test, n, causal):
    """The score of a head spreading its weight evenly over the keys each row may see, on the same rows."""
    rows, _ = targets(test, n, causal)
    allowed = rows + 1 if causal else np.full(len(rows), 2 * n + 2)  # the encoder's T: [CLS] + 2N + [SEP]
    return float((1.0 / allowed).mean())


def summary(table, chance_score, thresholds=THRESHOLDS):
    """What a table of scores (L, H) says: the best head, the runner-up, the gap, the counts above thresholds."""
    table = np.asarray(table)
    order = np.argsort(table, axis=None, kind="stable")[::-1]
    ranked = [dict(zip(("layer", "head"), map(int, np.unravel_index(i, table.shape))), score=float(table.flat[i]))
              for i in order[:2]]
    return {"best": ranked[0], "runner_up": ranked[1], "gap": ranked[0]["score"] - ranked[1]["score"],
            "chance": chance_score, "above": {t: int((table > t).sum()) for t in thresholds}}


def nth(table, n):
    """(layer, head) of the *n*-th best head of *table* (L, H), 1 for the best."""
    table = np.asarray(table)
    order = np.argsort(table, axis=None, kind="stable")[::-1]
    return tuple(map(int, np.unravel_index(order[n - 1], table.shape)))


def rank(table, layer, head):
    """1 for the best head of *table* (L, H), 2 for the runner-up, ..."""
    table = np.asarray(table)
    return int((table > table[layer, head]).sum()) + 1


# ---------------------------------------------------------------------------- the shipped results

def load(path=None):
    """The committed results: dict model -> {"n", "draws", "seed", "ids", "tests": {test: {"scores", "chance",
    "rows"}}}, the scores as float arrays (L, H)."""
    data = json.loads(Path(path or DATA_PATH).read_text(encoding="utf-8"))
    for model in data["models"].values():
        for result in model["tests"].values():
            result["scores"] = np.asarray(result["scores"], dtype=float)
    return data


def summaries(data=None):
    """dict model -> test -> :func:`summary` of the shipped scores."""
    data = data or load()
    return {name: {test: summary(r["scores"], r["chance"]) for test, r in model["tests"].items()}
            for name, model in data["models"].items()}


def numbers(data=None):
    """The lesson's numbers about the tests, formatted as the text shows them, e.g. ``smollm2_test_induction_layer``.
    ``<model>_test_<test>_...``: ``layer``, ``head``, ``score``, ``runner_up`` (with ``runner_up_layer``,
    ``runner_up_head``), ``gap``, ``chance``, ``above_05`` and ``above_08`` (heads above 0.5, 0.8), ``rows``
    (query rows per draw); and ``head_tests_n``, ``head_tests_draws``."""
    data = data or load()
    out = {f"head_tests_threshold_{str(t).replace('.', '')}": f"{t}" for t in THRESHOLDS}  # the table's column
    scored = summaries(data)  # every model's, once
    for name, model in data["models"].items():
        out["head_tests_n"], out["head_tests_draws"] = str(model["n"]), str(model["draws"])
        for test, s in scored[name].items():
            key = f"{name}_test_{test}"
            out.update({f"{key}_layer": str(s["best"]["layer"]), f"{key}_head": str(s["best"]["head"]),
                        f"{key}_score": f"{s['best']['score']:.2f}", f"{key}_runner_up": f"{s['runner_up']['score']:.2f}",
                        f"{key}_runner_up_layer": str(s["runner_up"]["layer"]),
                        f"{key}_runner_up_head": str(s["runner_up"]["head"]), f"{key}_gap": f"{s['gap']:.2f}",
                        f"{key}_chance": f"{s['chance']:.3f}", f"{key}_rows": str(model["tests"][test]["rows"])})
            out.update({f"{key}_above_{str(t).replace('.', '')}": str(n) for t, n in s["above"].items()})
    return out
