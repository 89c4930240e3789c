"""What SmolLM2 loses when one head is knocked out: the shipped results of ``sitebuild.realheads.ablate``.

``static/data/realheads/ablation.json`` holds, for the repeated random tokens of :mod:`lessonpy.models.head_tests`
(N tokens written twice, ``draws`` seeded sequences), the mean cross-entropy (nats) of the next token on the
second copy: ``baseline`` per draw, and ``loss`` (L, H, draws) with each head mean-ablated (its output replaced
by its mean over positions and draws; why mean and not zero: the build module's docstring). ``correct`` (L, H)
counts the predictions whose top-1 token is right, over all draws (``baseline_correct`` unablated).
``example`` is one sequence token by token: the correct token's probability and the top-1 token, as the model
is and with the tests' top induction and previous-token heads knocked out. ``named``: the heads the lesson
names (each test's best, and the head the sentences alone would call the induction head).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from . import head_tests
from .site_data import download

FILE = "ablation.json"
DATA_PATH = head_tests.DATA_PATH.parent / FILE
#: the example sequence is shown with the best head of each of these tests knocked out
EXAMPLE_TESTS = ("induction", "previous")


def load(path=None):
    """The shipped results, ``loss`` and ``correct`` as arrays; in the page downloaded from the site (12 KB)."""
    if path is None and sys.platform == "emscripten":
        text = download(FILE).decode()
    else:
        text = Path(path or DATA_PATH).read_text(encoding="utf-8")
    data = json.loads(text)
    data["loss"] = np.asarray(data["loss"], dtype=float)
    data["correct"] = np.asarray(data["correct"])
    data["baseline"] = np.asarray(data["baseline"], dtype=float)
    return data


def increases(data=None):
    """Each head's rise in the loss when knocked out, averaged over the draws: (L, H) nats."""
    data = data or load()
    return data["loss"].mean(-1) - data["baseline"].mean()


def ranked(data=None):
    """The heads by how much knocking them out raises the loss, most first: list of (layer, head, nats)."""
    rise = increases(data)
    order = np.argsort(rise, axis=None, kind="stable")[::-1]
    return [(*map(int, np.unravel_index(i, rise.shape)), float(rise.flat[i])) for i in order]


def numbers(data=None):
    """The lesson's numbers about the ablation: ``ablation_baseline_loss`` and ``_accuracy`` (top-1, as a
    percentage), ``ablation_top<i>_layer``/``_head``/``_increase`` for the 3 most harmful heads, and for the best
    head of each of the tests :data:`EXAMPLE_TESTS` and ``duplicate``, ``ablation_<test>_layer``/``_head``/
    ``_increase``/``_rank``/``_accuracy`` (and the same for the test's runner-up, ``ablation_<test>_runner_up_...``,
    and for the induction test's third head, ``ablation_induction_third_...`` with its test ``_score``); ``ablation_over_1`` heads raise it by more than 1 nat, ``ablation_over_01``
    by more than 0.1; ``ablation_predictions`` predictions counted (all draws)."""
    data = data or load()
    rise, order = increases(data), ranked(data)
    total = data["predictions_per_draw"] * data["draws"]
    out = {"ablation_baseline_loss": f"{data['baseline'].mean():.2f}",
           "ablation_baseline_accuracy": f"{100 * data['baseline_correct'] / total:.0f}",
           "ablation_predictions": str(total), "ablation_over_1": str(int((rise > 1).sum())),
           "ablation_over_01": str(int((rise > 0.1).sum()))}
    for i, (layer, head, nats) in enumerate(order[:3], 1):
        out.update({f"ablation_top{i}_layer": str(layer), f"ablation_top{i}_head": str(head),
                    f"ablation_top{i}_increase": f"{nats:.2f}"})
    tests = head_tests.summaries()["smollm2"]
    for test in (*EXAMPLE_TESTS, "duplicate"):
        for which, key in (("best", f"ablation_{test}"), ("runner_up", f"ablation_{test}_runner_up")):
            out.update(head_numbers(key, tests[test][which]["layer"], tests[test][which]["head"], data))
    # the induction test's third head: knocked out it costs more than the runner-up (copying is not one head's)
    induction = head_tests.load()["models"][data["model"]]["tests"]["induction"]["scores"]
    layer, head = head_tests.nth(induction, 3)
    out.update(head_numbers("ablation_induction_third", layer, head, data))
    out["ablation_induction_third_score"] = f"{induction[layer, head]:.2f}"
    return out


def head_numbers(key, layer, head, data=None):
    """One head's ``<key>_layer``, ``_head``, ``_increase`` (nats), ``_rank`` (1 = most harmful) and ``_accuracy``
    (top-1 % without it)."""
    data = data or load()
    rise = increases(data)
    total = data["predictions_per_draw"] * data["draws"]
    return {f"{key}_layer": str(layer), f"{key}_head": str(head), f"{key}_increase": f"{rise[layer, head]:.2f}",
            f"{key}_rank": str(int((rise > rise[layer, head]).sum()) + 1),
            f"{key}_accuracy": f"{100 * data['correct'][layer, head] / total:.0f}"}


def payload(data=None, target=None, shown=12):
    """The real-heads widget's ablation view: the *shown* heads whose knock-out raises the loss most, plus the
    named ones, as bars (``heads``: layer, head, increase in nats, the names it has); every head's increase as
    one float32 (L, H) array for the table; and the example sequence's second copy, token by token, in each run
    (``wrong``: the top-1 prediction is not the next token)."""
    data = data or load()
    rise = increases(data)
    names = {}
    for named in data["named"]:
        names.setdefault((named["layer"], named["head"]), []).append(named["label"])
    picked = [(layer, head) for layer, head, _ in ranked(data)[:shown]]
    picked += [key for key in names if key not in picked]
    example = data["example"]
    n = data["n"]
    runs = []
    for run in example["runs"]:
        wanted = example["ids"][n + 2: 2 * n + 1]  # the counted predictions' right answers
        runs.append({"knocked": run["knocked"], "p_correct": run["p_correct"], "top_text": run["top_text"],
                     "wrong": [top != want for top, want in zip(run["top"], wanted)]})
    return {"view": "ablation", "widget": "real-heads", "target": target, "model": data["model"],
            "method": data["method"], "baseline": float(data["baseline"].mean()), "draws": data["draws"],
            "n": n, "layers": int(rise.shape[0]), "heads_per_layer": int(rise.shape[1]),
            "heads": [{"layer": layer, "head": head, "increase": float(rise[layer, head]),
                       "names": names.get((layer, head), [])} for layer, head in picked],
            "arrays": {"increase": rise.astype(np.float32)},
            "example": {"context": example["tokens"][1: n + 2], "tokens": example["tokens"][n + 2: 2 * n + 1],
                        "runs": runs}}
