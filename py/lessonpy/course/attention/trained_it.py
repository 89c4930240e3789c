"""The hand-built "it -> cat" asked of the two trained models (cell "trained-it" of the attention lesson).

Of every head of each model, the one that puts the most weight from *it* on *cat* in the lesson's first
sentence; then that same head on a second sentence, where the right referent is *glass*. The numbers are
read from the shipped data (``lessonpy.models.realheads``), the way the cell reads them, so the text, the cell and
the data agree; the choice of head is made on the first sentence only, which is why the second is the test.
"""

from __future__ import annotations

import numpy as np

from ...models import realheads

CAT, GLASS = 0, 5  # the sentences, by index in the shipped data
#: the words whose weight from "it" the cell prints, per sentence
WORDS = {CAT: ("cat", "mat"), GLASS: ("glass", "water")}

CELL_PRINTS = {"trained-it": [f"trained_it_{name}_{key}" for name in realheads.MODELS
                              for key in ("heads", "layer", "head", "cat", "mat", "glass", "water")]}


def position(tokens, word):
    """Where *word* is in a model's tokens (SmolLM2's carry their leading space): the cell's function."""
    return [t.strip().lower() for t in tokens].index(word)


def best_head(heads: realheads.Heads) -> tuple[int, int]:
    """The (layer, head) with the most weight from "it" on "cat" in the first sentence."""
    toks = heads.tokens(CAT)
    on_cat = heads.weights(CAT)[:, :, position(toks, "it"), position(toks, "cat")]
    layer, head = np.unravel_index(on_cat.argmax(), on_cat.shape)
    return int(layer), int(head)


def shares(heads: realheads.Heads, layer: int, head: int) -> dict[str, float]:
    """That head's weight from "it" on each of WORDS' words, in both sentences."""
    out = {}
    for s, words in WORDS.items():
        toks = heads.tokens(s)
        row = heads.weights(s)[layer, head, position(toks, "it")]
        out |= {w: float(row[position(toks, w)]) for w in words}
    return out


def numbers() -> dict[str, str]:
    out = {}
    for name in realheads.MODELS:
        heads = realheads.Heads.load(name)
        layer, head = best_head(heads)
        out |= {f"trained_it_{name}_heads": str(heads.layers * heads.heads),
                f"trained_it_{name}_layer": str(layer), f"trained_it_{name}_head": str(head)}
        out |= {f"trained_it_{name}_{w}": f"{v:.2f}" for w, v in shares(heads, layer, head).items()}
    return out
