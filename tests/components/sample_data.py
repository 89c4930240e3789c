"""Seeded attention payloads for the component tests (the maths lives here, never in the JS).

Arrays travel as {shape, dtype, b64}: little-endian float32 bytes in base64, which the fixture
turns into the {shape, dtype, data: Float32Array} objects Python's show_attention sends.
Run as a script to rewrite sample.json (what fixture.html?sample shows).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


def encode(a: np.ndarray) -> dict:
    """Pack a 2-D array as {shape, dtype, b64} (float32)."""
    a = np.ascontiguousarray(a, dtype="<f4")
    return {"shape": list(a.shape), "dtype": "float32", "b64": base64.b64encode(a.tobytes()).decode()}


def softmax_rows(s: np.ndarray) -> np.ndarray:
    """Row-wise softmax; -inf entries get weight 0."""
    m = s.max(axis=1, keepdims=True)
    e = np.exp(s - m)
    return e / e.sum(axis=1, keepdims=True)


def attention_arrays(T: int, D: int = 4, seed: int = 0, causal: bool = False, sharp: float = 0.7,
                     plant: tuple[int, int] | None = None) -> dict:
    """Q, K, V (T, D) from a seeded generator; scores (T, T); weights (T, T); out (T, D)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(T, D)).astype(np.float32)
    Q = (x @ rng.normal(size=(D, D)) * sharp).astype(np.float32)
    K = (x @ rng.normal(size=(D, D))).astype(np.float32)
    V = (x @ rng.normal(size=(D, D))).astype(np.float32)
    scores = (Q @ K.T / np.sqrt(D)).astype(np.float32)  # (T, T)
    if plant is not None:  # one query that clearly prefers one key: a unique largest weight
        scores[plant] += 12.0
    if causal:
        scores = np.where(np.tril(np.ones((T, T), bool)), scores, -np.inf).astype(np.float32)
    weights = softmax_rows(scores.astype(np.float64)).astype(np.float32)  # (T, T), rows sum to 1
    out = (weights @ V).astype(np.float32)  # (T, D)
    return {"x": x, "Q": Q, "K": K, "V": V, "scores": scores, "weights": weights, "out": out}


def payload(T: int = 6, D: int = 4, seed: int = 0, causal: bool = False, tokens: list[str] | None = None,
            **kwargs) -> dict:
    """A show_attention-style payload with every array encoded, plus the raw arrays for asserts."""
    arrays = attention_arrays(T, D, seed, causal, **kwargs)
    if tokens is None:
        tokens = TOKENS if T == len(TOKENS) else [f"t{i}" for i in range(T)]
    wire = {
        "view": "attention",
        "title": f"Self-attention over {T} tokens" + (" (causal)" if causal else ""),
        "tokens": tokens,
        "arrays": {k: encode(v) for k, v in arrays.items()},
        "derived": ["scores", "weights", "out"],
        "stats": {"T": T, "d_k": D, "max_weight": float(arrays["weights"].max())},
    }
    return {"wire": wire, "arrays": arrays}


if __name__ == "__main__":
    out = Path(__file__).with_name("sample.json")
    out.write_text(json.dumps({"small": payload()["wire"], "causal": payload(8, 4, 3, True)["wire"], "medium": payload(64, 8, 1)["wire"]}))
    print(f"wrote {out}")
