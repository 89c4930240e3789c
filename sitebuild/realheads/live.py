"""MiniLM's weights for running it live in the page: float16 safetensors (44.8 MB; position embeddings
for the first 128 positions only, as many as the tokenizer lets through) plus vocab.txt,
made from the pinned float32 file into the cache, never committed. ``python3 build.py --live-model`` copies
them into the site (``data/minilm/``); a normal build does not.

    python3 -m sitebuild.realheads.live    write them, and print the size and the error float16 costs
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np

from ..project import ROOT

from lessonpy import live as lessonpy_live, minilm
from lessonpy.wordpiece import MAX_TOKENS

from . import weights

LIVE_DIR = weights.CACHE / "minilm-live"
WEIGHTS_NAME = lessonpy_live.WEIGHTS_NAME  # the page asks for the names lessonpy.live reads
#: the tokenizer's limit; all 512 positions would make the file 45.1 MB (int8 word embeddings instead made
#: the attention weights 17 times less accurate)
POSITIONS = MAX_TOKENS
#: the page must not be asked to download more than this
MAX_BYTES = 45_000_000
#: what the forward pass reads; the pooler (sentence embeddings only) and the position-id buffer are left out
KEEP = ("embeddings.", "encoder.layer.")


def to_safetensors(arrays: dict) -> bytes:
    """The safetensors layout :func:`lessonpy.minilm.read_safetensors` reads: header length, JSON, buffers."""
    header, offset, blobs = {}, 0, []
    for name, a in arrays.items():
        blob = np.ascontiguousarray(a).astype("<f2").tobytes()
        header[name] = {"dtype": "F16", "shape": list(a.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # keep the buffers 8-byte aligned
    return len(text).to_bytes(8, "little") + text + b"".join(blobs)


def write_live(out_dir: Path = LIVE_DIR) -> Path:
    """Write the float16 weights and vocab.txt into *out_dir* (if not already there); return the folder."""
    target = out_dir / WEIGHTS_NAME
    folder = weights.minilm_dir()
    if not target.exists():
        W = minilm.read_safetensors((folder / "model.safetensors").read_bytes())
        W["embeddings.position_embeddings.weight"] = W["embeddings.position_embeddings.weight"][:POSITIONS]
        data = to_safetensors({k: v for k, v in W.items() if k.startswith(KEEP) and v.dtype.kind == "f"})
        if len(data) > MAX_BYTES:
            raise SystemExit(f"{WEIGHTS_NAME} would be {len(data):,} bytes > {MAX_BYTES:,}")
        out_dir.mkdir(parents=True, exist_ok=True)
        target.with_suffix(".part").write_bytes(data)
        target.with_suffix(".part").replace(target)
    shutil.copy2(folder / "vocab.txt", out_dir / "vocab.txt")
    return out_dir


def live_error(sentences_ids) -> float:
    """The largest difference between the attention weights from the live and the float32 weights."""
    W32 = minilm.read_safetensors((weights.minilm_dir() / "model.safetensors").read_bytes())
    Wlive = minilm.read_safetensors((LIVE_DIR / WEIGHTS_NAME).read_bytes())
    return max(float(np.abs(minilm.forward(Wlive, ids)["weights"] - minilm.forward(W32, ids)["weights"]).max())
               for ids in sentences_ids)


def main() -> int:
    from lessonpy.realheads import Heads

    folder = write_live()
    heads = Heads.load("minilm")
    error = live_error([heads.ids(s) for s in range(len(heads.sentences))])
    size = (folder / WEIGHTS_NAME).stat().st_size
    print(f"{folder / WEIGHTS_NAME}: {size:,} bytes; the live weights move the attention weights of the "
          f"{len(heads.sentences)} example sentences by at most {error:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
