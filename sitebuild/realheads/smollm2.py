"""SmolLM2-135M at build time: its 4-bit GGUF dequantised whole to float32 (about 540 MB: far too much for a
page, which reads the same blocks one layer at a time, :class:`lessonpy.models.smollm2.LiveWeights`). The forward
pass is the page's, :mod:`lessonpy.models.smollm2` (re-exported here): one definition of the model.

GGUF stores each head's Q and K rows permuted for llama.cpp's interleaved RoPE; :class:`Model` undoes that,
so Q and K are in the Hugging Face layout and RoPE rotates the pairs (i, i + D/2).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from lessonpy.models.smollm2 import LAYER_TENSORS, block, forward, rms_norm, rope, split_heads, unembed  # noqa: F401


class Model:
    """Dequantised float32 weights (PyTorch layout: (out, in)) and the hyper-parameters the file states, with
    the methods :mod:`lessonpy.models.smollm2` reads weights through."""

    def __init__(self, path: Path):
        import gguf  # build-time dependency (requirements-dev.txt)

        reader = gguf.GGUFReader(str(path))
        meta = {name: field.contents() for name, field in reader.fields.items()
                if name.startswith("llama.")}
        self.layers = int(meta["llama.block_count"])
        self.heads = int(meta["llama.attention.head_count"])
        self.kv_heads = int(meta["llama.attention.head_count_kv"])
        self.width = int(meta["llama.embedding_length"])
        self.vocab = int(meta["llama.vocab_size"])
        self.theta = float(meta["llama.rope.freq_base"])
        self.eps = float(meta["llama.attention.layer_norm_rms_epsilon"])
        self.head_dim = self.width // self.heads
        self.W = {}
        for t in reader.tensors:
            array = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
            self.W[t.name] = array.reshape([int(n) for n in reversed(t.shape)]) if array.ndim > 1 else array
        for layer in range(self.layers):
            for name, n in (("attn_q", self.heads), ("attn_k", self.kv_heads)):
                key = f"blk.{layer}.{name}.weight"
                self.W[key] = unpermute(self.W[key], n)

    def layer(self, i, widen=True):  # float32 already: widen (the live weights' choice) changes nothing
        return {t: self.W[f"blk.{i}.{t}.weight"] for t in LAYER_TENSORS}

    def embed(self, ids):
        return self.W["token_embd.weight"][np.asarray(ids)]

    def output_norm(self):
        return self.W["output_norm.weight"]

    def unembedding(self, widen=True):
        yield 0, self.W.get("output.weight", self.W["token_embd.weight"])  # tied: the embedding, whole


@functools.lru_cache(maxsize=1)
def cached(path: Path) -> Model:
    """The model of *path*, dequantised once per process (about 10 s and 540 MB)."""
    return Model(path)


def unpermute(w, n_heads):
    """Undo llama.cpp's row order: within a head, GGUF has rows (0, D/2, 1, D/2+1, ...). *w*: (out, in) rows of
    numbers, or of a quantised file's bytes (each row whole blocks: the rows move, not what is in them)."""
    out_dim, in_dim = w.shape
    return w.reshape(n_heads, out_dim // n_heads // 2, 2, in_dim).swapaxes(1, 2).reshape(out_dim, in_dim)
