"""Numbers behind the lessons' tightened claims, held to their sources: Lesson 4's third prefix-matching head, its
test score and knock-out cost (the shipped data, static/data/realheads/), and Lesson 5's saving of SmolLM2's
parameters by grouped-query attention (its shapes and config, counted as `transformers` builds the model when it is
installed)."""

from __future__ import annotations

import numpy as np
import pytest
from lessonpy.models import ablation, head_tests, realheads

import attention_numbers  # the lessons' numbers modules, beside them (lessons/)
import causal_mask_numbers


def test_the_third_induction_head_is_the_tests_third_and_costs_more_than_the_runner_up():
    values = attention_numbers.numbers()
    scores = head_tests.load()["models"]["smollm2"]["tests"]["induction"]["scores"]
    order = np.argsort(scores, axis=None)[::-1]
    layer, head = np.unravel_index(order[2], scores.shape)
    assert (values["ablation_induction_third_layer"], values["ablation_induction_third_head"]) == (str(layer), str(head))
    assert values["ablation_induction_third_score"] == f"{scores[layer, head]:.2f}"
    rise = ablation.increases()
    assert values["ablation_induction_third_increase"] == f"{rise[layer, head]:.2f}"
    assert values["ablation_induction_third_rank"] == str(int((rise > rise[layer, head]).sum()) + 1)
    # what the text says of it: copying leans on at least two heads, the runner-up by attention costs little
    runner = head_tests.summaries()["smollm2"]["induction"]["runner_up"]
    assert rise[layer, head] > 0.5 > rise[runner["layer"], runner["head"]]


def test_grouped_query_attention_saves_about_a_tenth_of_smollm2s_parameters():
    """Lesson 5's GQA paragraph: W_K and W_V of 3 key/value heads instead of 9, counted on the shipped shapes."""
    smol = realheads.Heads.load("smollm2")
    values = causal_mask_numbers.numbers()
    saved = values["gqa_params_saved"]
    C = smol.heads * smol.head_dim
    assert saved == smol.layers * 2 * C * (smol.heads - smol.meta["kv_heads"]) * smol.head_dim
    assert 0.09 < saved / values["smollm2_params"] < 0.11  # the text's "about a tenth"
    assert values["gqa_params_saved_pct"] == f"{saved / values['smollm2_params']:.1%}"


def test_the_smollm2_parameter_count_is_the_models_as_transformers_builds_it():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    smol = realheads.Heads.load("smollm2")
    config = transformers.LlamaConfig(
        vocab_size=causal_mask_numbers.SMOLLM2_VOCAB, hidden_size=smol.heads * smol.head_dim,
        intermediate_size=causal_mask_numbers.SMOLLM2_MLP, num_hidden_layers=smol.layers,
        num_attention_heads=smol.heads, num_key_value_heads=smol.meta["kv_heads"], tie_word_embeddings=True)
    with torch.device("meta"):  # shapes only, no memory
        model = transformers.LlamaForCausalLM(config)
    assert sum(p.numel() for p in model.parameters()) == causal_mask_numbers.numbers()["smollm2_params"]
