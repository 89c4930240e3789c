"""Run both models on repeated random tokens and score every head by the tests of ``lessonpy.models.head_tests``;
write ``static/data/realheads/head_tests.json``.

    OPENBLAS_NUM_THREADS=1 python3 -m sitebuild.realheads.score_heads

(``python3 -m sitebuild.realheads.extract`` runs this first: the featured heads are the ones these tests
pick.) One BLAS thread is faster on a shared machine: OpenBLAS's threads wait on each other under load.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from lessonpy.models import head_tests, minilm
from lessonpy.models.safetensors import read_safetensors

from . import smollm2, weights, write_data

#: N random tokens written twice, DRAWS sequences, drawn with SEED: the same for both models
N, DRAWS, SEED = 25, 8, 2022
#: MiniLM: [CLS] starts and [SEP] ends every input, as its tokenizer writes them
CLS, SEP = 101, 102
#: SmolLM2's tokenizer adds no start token; training text saw <|endoftext|> (id 0) before every document,
#: so it is the start token here, as Olsson et al. put a BOS token first
SMOLLM2_START = 0
#: SmolLM2's ids 0 ... 16 are special tokens (<|endoftext|>, <|im_start|>, <repo_name>, ...); 17 is "!"
SMOLLM2_FIRST_ORDINARY = 17


def minilm_pool(folder: Path):
    """MiniLM's ordinary words: from "the" (id 1996) on, whole words only (no "##" continuation piece), as
    every id below is [PAD], [unusedN], [UNK], [CLS], [SEP], [MASK] or a single character."""
    vocab = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert vocab[1996] == "the", "not the pinned vocabulary"
    return np.array([i for i, word in enumerate(vocab) if i >= 1996 and not word.startswith("##")])


def smollm2_pool():
    """SmolLM2's ordinary tokens: every id after the special ones that is text by itself; byte-level BPE also
    has pieces of a character's UTF-8 bytes, which print as "\ufffd" and would make the lesson's example
    unreadable."""
    from transformers import AutoTokenizer

    path = weights.smollm2_gguf()
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return np.array([i for i in range(SMOLLM2_FIRST_ORDINARY, len(tok)) if "\ufffd" not in tok.decode([i])])


def minilm_weights(folder: Path) -> dict:
    return read_safetensors((folder / "model.safetensors").read_bytes())


def run_minilm(ids):
    """Every head's weights on each sequence of *ids* (draws, T): (draws, L, H, T, T)."""
    W = minilm_weights(weights.minilm_dir())
    return np.stack([minilm.forward(W, row)["weights"] for row in ids])


def run_smollm2(ids):
    """The same for SmolLM2, the draws as one batch."""
    return smollm2.forward(smollm2.cached(weights.smollm2_gguf()), ids, keep=("weights",))["weights"]


def draws(name):
    """The model's input (draws, T) and the random tokens (draws, N) it repeats."""
    if name == "minilm":
        random = head_tests.draw(SEED, DRAWS, N, minilm_pool(weights.minilm_dir()))
        return head_tests.sequences(random, CLS, SEP), random
    random = head_tests.draw(SEED, DRAWS, N, smollm2_pool())
    return head_tests.sequences(random, SMOLLM2_START), random


def score(name):
    """One model's entry of the data file."""
    causal = name == "smollm2"
    ids, random = draws(name)
    w = (run_smollm2 if causal else run_minilm)(ids)
    tests = {}
    for test in head_tests.TESTS[causal]:
        rows, _ = head_tests.targets(test, N, causal)
        tests[test] = {"scores": np.round(head_tests.scores(w, test, N, causal), 4).tolist(),
                       "chance": round(head_tests.chance(test, N, causal), 5), "rows": len(rows)}
    return {"causal": causal, "n": N, "draws": DRAWS, "seed": SEED, "start": int(ids[0, 0]),
            "end": int(ids[0, -1]) if ids.shape[1] > 2 * N + 1 else None, "random": random.tolist(), "tests": tests}


def write(path=head_tests.DATA_PATH):
    data = {"about": "lessonpy.models.head_tests: every head's score on repeated random tokens; sitebuild.realheads.score_heads",
            "models": {name: score(name) for name in ("minilm", "smollm2")}}
    write_data(path, data)  # says its size
    return data


def main() -> int:
    write()
    for name, tests in head_tests.summaries(head_tests.load()).items():
        for test, s in tests.items():
            b, r = s["best"], s["runner_up"]
            print(f"{name:8s} {test:9s} L{b['layer']:2d}H{b['head']} {b['score']:.3f}  next L{r['layer']:2d}H{r['head']} "
                  f"{r['score']:.3f}  chance {s['chance']:.3f}  above {s['above']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
