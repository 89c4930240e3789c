"""Change MiniLM's heads, one at a time and a layer at a time, and measure what the model then says of the live
panel's default sentence; write ``static/data/realheads/sentence_changes.json`` (read by
``lessonpy.models.sentence_changes``, which says what it holds).

    python3 -m sitebuild.realheads.sentences

The pinned float32 weights (``sitebuild.realheads.weights``), the lesson's own NumPy forward pass with its
``knock``, and the tokenizer the page uses. Each change is applied to every sentence compared, as the panel
does. About 35 seconds on 2 shared cores (2 December 2026).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from lessonpy.models import live, minilm, sentence_changes
from lessonpy.models.safetensors import read_safetensors
from lessonpy.models.wordpiece import WordPiece

from . import weights, write_data


def vectors(W, ids, knock=None):
    """The sentence vector of each row of *ids*, run with *knock*."""
    return [minilm.embed(minilm.forward(W, row, knock or None)["hidden"]) for row in ids]


def cosines(W, ids, knock, trained):
    """[cosine of the sentence with each other sentence, both run with *knock*; the sentence with *knock* against
    *trained*, its vector as trained]: ids[0] is the sentence, ids[1:] the others."""
    mine, *theirs = vectors(W, ids, knock)
    return [float(mine @ v) for v in theirs] + [float(mine @ trained)]


def run(folder=None):
    folder = Path(folder or weights.minilm_dir(download=False))
    W = read_safetensors((folder / "model.safetensors").read_bytes())
    tokenizer = WordPiece((folder / "vocab.txt").read_text(encoding="utf-8"))
    ids = [tokenizer.encode(text)[0] for text in (live.SENTENCE, *live.OTHERS)]
    trained = vectors(W, ids)
    changes = {}
    for name, change in sentence_changes.CHANGES.items():
        single = [[cosines(W, ids, {(layer, head): change}, trained[0]) for head in range(minilm.HEADS)]
                  for layer in range(minilm.LAYERS)]
        whole = [cosines(W, ids, {(layer, head): change for head in range(minilm.HEADS)}, trained[0])
                 for layer in range(minilm.LAYERS)]
        changes[name] = {"single": np.round(single, 5).tolist(), "layer": np.round(whole, 5).tolist()}
    return {"about": "lessonpy.models.sentence_changes: MiniLM's cosines of the live panel's default sentence with others, "
                     "as trained and with heads changed; sitebuild.realheads.sentences",
            "model": "minilm", "weights": "float32", "sentence": live.SENTENCE, "others": list(live.OTHERS),
            "trained": np.round([float(trained[0] @ v) for v in trained[1:]], 5).tolist(), "changes": changes}


def main() -> int:
    return write_data(sentence_changes.DATA_PATH, run())


if __name__ == "__main__":
    sys.exit(main())
