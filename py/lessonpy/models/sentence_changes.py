"""What MiniLM says when heads are changed: the shipped results of ``sitebuild.realheads.sentences``, the
numbers the lesson quotes next to the live panel's "Change heads" (which computes the same in the page).

``static/data/realheads/sentence_changes.json`` holds, for the panel's default sentence (``sentence``,
:data:`lessonpy.models.live.SENTENCE`) and the sentences it is compared with (``others``, :data:`lessonpy.models.live.OTHERS`),
computed from the pinned float32 weights with :func:`lessonpy.models.minilm.forward` and :func:`lessonpy.models.minilm.embed`:
``trained``, the cosine of the sentence with each other as trained; for each change of :data:`CHANGES`
(``off``: the head's output zeroed; ``uniform``: its scores times 0), ``single`` (L, H, len(others) + 1): the
cosines with each head changed alone, the last column the sentence with itself unchanged; ``layer`` (L,
len(others) + 1): the same with all the heads of one layer changed at once.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from . import head_tests

FILE = "sentence_changes.json"
DATA_PATH = head_tests.DATA_PATH.parent / FILE
#: the changes measured, by name: the value of lessonpy.models.minilm.forward's knock
CHANGES = {"off": "off", "uniform": 0.0}


def load(path=None):
    """The shipped results, the ``single`` and ``layer`` cosines as arrays (CPython only: the page computes live)."""
    data = json.loads(Path(path or DATA_PATH).read_text(encoding="utf-8"))
    for change in data["changes"].values():
        change["single"] = np.asarray(change["single"], dtype=float)
        change["layer"] = np.asarray(change["layer"], dtype=float)
    return data


def numbers(data=None):
    """The lesson's numbers: ``changes_trained_<i>`` the cosine of the sentence with other i as trained (2
    decimals); per change c of :data:`CHANGES`, ``changes_<c>_single_max`` the largest move of any of those
    cosines by one head changed alone, with ``_layer``/``_head`` the head that moves one most, and
    ``changes_<c>_layer_max`` the same for a whole layer changed; ``changes_<c>_layer_self_min``
    the lowest cosine of the sentence with itself unchanged when a whole layer is changed, ``_self_layer``
    which layer."""
    data = data or load()
    trained = np.asarray(data["trained"])
    out = {f"changes_trained_{i}": f"{c:.2f}" for i, c in enumerate(trained)}
    for name, change in data["changes"].items():
        single = np.abs(change["single"][..., :-1] - trained)  # (L, H, others)
        layer, head = np.unravel_index(single.max(-1).argmax(), single.shape[:2])
        whole = np.abs(change["layer"][:, :-1] - trained)
        self_layer = int(change["layer"][:, -1].argmin())
        out.update({f"changes_{name}_single_max": f"{single.max():.2f}", f"changes_{name}_single_layer": str(layer),
                    f"changes_{name}_single_head": str(head), f"changes_{name}_layer_max": f"{whole.max():.2f}",
                    f"changes_{name}_layer_self_min": f"{change['layer'][self_layer, -1]:.2f}",
                    f"changes_{name}_self_layer": str(self_layer)})
    return out
