"""A MiniLM-shaped weight file with random values and a tiny vocabulary, in exactly the format the page's
live model uses (float16 safetensors written by sitebuild.realheads.live.to_safetensors, read by
lessonpy.models.safetensors.read_safetensors, plus vocab.txt): the browser tests download and run it without the
45 MB real file or the model wheels. Its 6 layers of 12 heads at width 384 are the real shapes (the forward
pass has them as constants), so about 21 MB; the attention it computes means nothing, which is all a test of
the download, the caching, Stop and the drawing needs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lessonpy.models import live, minilm
from sitebuild.realheads.live import POSITIONS, to_safetensors

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def random_weights(vocab_size, seed=0):
    rng = np.random.default_rng(seed)
    C, F = minilm.WIDTH, 4 * minilm.WIDTH
    normal = lambda *shape: (rng.standard_normal(shape) * 0.05).astype(np.float32)  # noqa: E731
    W = {"embeddings.word_embeddings.weight": normal(vocab_size, C),
         "embeddings.position_embeddings.weight": normal(POSITIONS, C),
         "embeddings.token_type_embeddings.weight": normal(2, C),
         "embeddings.LayerNorm.weight": np.ones(C, np.float32), "embeddings.LayerNorm.bias": np.zeros(C, np.float32)}
    for layer in range(minilm.LAYERS):
        p = f"encoder.layer.{layer}."
        for name, (o, i) in {"attention.self.query": (C, C), "attention.self.key": (C, C),
                             "attention.self.value": (C, C), "attention.output.dense": (C, C),
                             "intermediate.dense": (F, C), "output.dense": (C, F)}.items():
            W[p + name + ".weight"], W[p + name + ".bias"] = normal(o, i), normal(o)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            W[p + name + ".weight"], W[p + name + ".bias"] = np.ones(C, np.float32), np.zeros(C, np.float32)
    return W


def write_random_live(folder: Path, words) -> Path:
    """Write minilm-live.safetensors and vocab.txt (the special tokens, then *words*) into *folder*."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = SPECIAL + [w for w in dict.fromkeys(words) if w not in SPECIAL]
    (folder / live.WEIGHTS_NAME).write_bytes(to_safetensors(random_weights(len(vocab))))
    (folder / live.VOCAB_NAME).write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return folder
