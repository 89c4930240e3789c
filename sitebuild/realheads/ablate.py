"""Knock each of SmolLM2's 270 heads out, one at a time, and measure what the model loses on repeated random
tokens; write ``static/data/realheads/ablation.json`` (read by ``lessonpy.models.ablation``).

    OPENBLAS_NUM_THREADS=1 python3 -m sitebuild.realheads.ablate

The sequences are the first :data:`DRAWS` of the head tests' (``sitebuild.realheads.score_heads``: a start
token, then N random tokens written twice). The loss is the cross-entropy of the next token on the second copy:
the predictions, from positions N+1 ... 2N-1, of the tokens N+2 ... 2N, which the first copy gives away; the
first token of the second copy is left out, as nothing before it predicts it.

**Mean-ablation.** A knocked-out head's output (its slice of the output projection's input, (T, D)) is replaced
by its mean over the positions and draws of the unablated run, at every position from 1 on. Zeroing it would
also remove the constant part of what the head writes, which later layers may rely on as a bias (sink heads
write a large, steady vector): the loss would then measure that shock, not the loss of what the head reads off
*this* sequence. The mean keeps the residual stream at its usual scale and removes only the information.
Position 0 is left alone: it sees only the start token, so its output is the same in every draw and there is
nothing sequence-specific to remove there.

Cost: a head of layer l changes nothing before l, so the run restarts from the unablated layer-l input, and
the 9 heads of a layer go as one batch of 9 copies (9 x draws sequences). About 4 minutes on 2 shared cores
(one BLAS thread; 2 December 2026).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from lessonpy.models import ablation, head_tests, realheads

from . import smollm2, weights, write_data

#: the first position whose head outputs are replaced (see the module's docstring)
FROM_POSITION = 1
#: the first DRAWS of the head tests' sequences: 270 knock-outs of 8 draws would take 9 minutes here
DRAWS = 4


def loss_rows(n):
    """The positions whose next-token prediction counts: N+1 ... 2N-1 (predicting N+2 ... 2N)."""
    return np.arange(n + 1, 2 * n)


def token_losses(logits, ids, n):
    """Cross-entropy (nats) of each counted prediction: logits (..., R, vocab) at :func:`loss_rows`, ids (..., T)
    the sequences -> (..., R); and the log-probabilities (..., R, vocab) they came from."""
    rows = loss_rows(n)
    logits = logits.astype(np.float64)
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    target = np.broadcast_to(ids[..., rows + 1], logp.shape[:-1])
    return -np.take_along_axis(logp, target[..., None], -1)[..., 0], logp


def head_means(z):
    """Each head's mean output over draws and positions from FROM_POSITION: z (B, L, H, T, D) -> (L, H, D)."""
    return z[..., FROM_POSITION:, :].mean(axis=(0, 3))


def knocked(m, resid, layer, heads, means, n):
    """Run from layer *layer*'s input *resid* (B, T, C) once per entry of *heads* (copy i knocks out head
    heads[i] of that layer) and return the logits (len(heads), B, R, vocab) at :func:`loss_rows`."""
    copies = len(heads)
    x = np.broadcast_to(resid, (copies, *resid.shape)).copy()

    def knock(at, z):  # z (copies, B, H, T, D)
        if at != layer:
            return z
        z = z.copy()
        for i, h in enumerate(heads):
            z[i, :, h, FROM_POSITION:, :] = means[layer, h]
        return z

    for at in range(layer, m.layers):
        x, _ = smollm2.block(m, at, x, knock)
    return smollm2.unembed(m, x[..., loss_rows(n), :])


def predictions(logp, ids, n, decode):
    """Per counted position of one sequence: the correct token's probability, and the top-1 token and its."""
    rows = loss_rows(n)
    top = logp.argmax(-1)
    correct = ids[rows + 1]
    return {"p_correct": np.round(np.exp(logp[np.arange(len(rows)), correct]), 4).tolist(),
            "top": top.tolist(), "top_text": [decode(int(i)) for i in top],
            "p_top": np.round(np.exp(logp.max(-1)), 4).tolist()}


def one_sequence(m, base, means, ids, n, tests, decode):
    """The first sequence token by token: as the model is, and without the tests' top induction and
    previous-token heads (:data:`lessonpy.models.ablation.EXAMPLE_TESTS`)."""
    _, base_logp = token_losses(base["logits"][:1, loss_rows(n)], ids[:1], n)
    example = {"draw": 0, "ids": ids[0].tolist(), "tokens": [decode(int(i)) for i in ids[0]],
               "runs": [{"knocked": None, **predictions(base_logp[0], ids[0], n, decode)}]}
    for test in ablation.EXAMPLE_TESTS:
        best = tests[test]["best"]
        logits = knocked(m, base["resid"][:1, best["layer"]], best["layer"], [best["head"]], means, n)
        _, logp = token_losses(logits[0], ids[:1], n)
        example["runs"].append({"knocked": {"test": test, "layer": best["layer"], "head": best["head"]},
                                **predictions(logp[0], ids[0], n, decode)})
    return example


def named_heads(tests):
    """The heads the lesson names: each test's best, and the one the sentences alone would call induction."""
    named = [{"label": f"{test} (test)", "layer": tests[test]["best"]["layer"], "head": tests[test]["best"]["head"]}
             for test in head_tests.TESTS[True]]
    on_sentences = realheads.best_heads(realheads.load("smollm2"), ["induction"])[0]
    return named + [{"label": "induction (the sentences' pick)", "layer": on_sentences["layer"],
                     "head": on_sentences["head"]}]


def run(log=print):
    path = weights.smollm2_gguf()
    m = smollm2.cached(path)
    tests_data = head_tests.load()["models"]["smollm2"]
    ids = head_tests.inputs(tests_data)[:DRAWS]  # the head tests' sequences, as shipped
    n = tests_data["n"]
    base = smollm2.forward(m, ids, keep=("resid", "z"))
    means = head_means(base["z"])
    base_loss, base_logp = token_losses(base["logits"][:, loss_rows(n)], ids, n)
    loss = np.zeros((m.layers, m.heads, len(ids)))
    correct = np.zeros((m.layers, m.heads), dtype=int)
    started = time.time()
    for layer in range(m.layers):
        logits = knocked(m, base["resid"][:, layer], layer, list(range(m.heads)), means, n)
        for head in range(m.heads):  # one copy at a time: all 9 in float64 would take 700 MB
            losses, logp = token_losses(logits[head], ids, n)
            loss[layer, head] = losses.mean(-1)
            correct[layer, head] = (logp.argmax(-1) == ids[:, loss_rows(n) + 1]).sum()
        log(f"layer {layer:2d}: {time.time() - started:5.1f} s, worst head {int(loss[layer].mean(-1).argmax())} "
            f"+{loss[layer].mean(-1).max() - base_loss.mean(-1).mean():.2f} nats")

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    tests = head_tests.summaries()["smollm2"]
    example = one_sequence(m, base, means, ids, n, tests, lambda i: tok.decode([i]))
    return {"about": "lessonpy.models.ablation: SmolLM2's loss on the second copy of repeated random tokens, each head "
                     "mean-ablated; sitebuild.realheads.ablate",
            "model": "smollm2", "method": "mean", "from_position": FROM_POSITION, "n": n, "draws": len(ids),
            "seed": tests_data["seed"], "predictions_per_draw": len(loss_rows(n)),
            "baseline": np.round(base_loss.mean(-1), 4).tolist(),
            "baseline_correct": int((base_logp.argmax(-1) == ids[:, loss_rows(n) + 1]).sum()),
            "loss": np.round(loss, 4).tolist(), "correct": correct.tolist(), "named": named_heads(tests),
            "example": example}


def main() -> int:
    return write_data(ablation.DATA_PATH, run())


if __name__ == "__main__":
    sys.exit(main())
