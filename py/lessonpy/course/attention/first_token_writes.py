"""What the featured first-token heads write (the aside "The head tests and the knock-outs" of the attention
lesson): their weight on the first token, and how much of it survives once each weight is multiplied by the length
of what its key passes on through the head (:mod:`lessonpy.models.head_writes`), read from the shipped data
(``lessonpy.models.realheads``) as the widget's "What the open head writes" draws it.
"""

from __future__ import annotations

import numpy as np

from ...models import realheads


def first_token(heads, layer, head):
    """What the head at (*layer*, *head*) does with the first token over all of *heads*' sentences (a
    :class:`lessonpy.models.realheads.Heads`), over the query rows t >= 1, as ``job_scores``' "first" counts them:
    ``weight``, the mean weight on the first token; ``share``, its mean share of the weighted row
    (``a_t0 ||f_0|| / sum_j a_tj ||f_j||``); ``ratio``, the mean over the sentences of the other keys' mean
    ``||f_j||`` divided by the first token's (how many times shorter what the first token passes on is)."""
    weight, share, ratio, rows = 0.0, 0.0, [], 0
    for s in range(len(heads.sentences)):
        a = heads.weights(s)[layer, head, 1:].astype(np.float64)  # (T - 1, T): the rows t >= 1
        n = heads.norms(s)[layer, head].astype(np.float64)  # (T,)
        weighted = a * n
        weight += a[:, 0].sum()
        share += (weighted[:, 0] / weighted.sum(-1)).sum()
        ratio.append(n[1:].mean() / n[0])
        rows += len(a)
    return {"weight": weight / rows, "share": share / rows, "ratio": float(np.mean(ratio)), "rows": rows}


def numbers():
    """The numbers the lesson states of what the featured first-token heads write, from the committed data:
    ``writes_<model>_first_weight``, ``_share``, ``_ratio`` (see :func:`first_token`), and the head's place."""
    out = {}
    for name in realheads.MODELS:
        heads = realheads.Heads.load(name)
        f = heads.featured_head("first")
        found = first_token(heads, f["layer"], f["head"])
        key = f"writes_{name}_first"
        out.update({f"{key}_layer": str(f["layer"]), f"{key}_head": str(f["head"]),
                    f"{key}_weight": f"{found['weight']:.2f}", f"{key}_share": f"{found['share']:.2f}",
                    f"{key}_ratio": f"{found['ratio']:.0f}"})
    return out
