"""The committed real-heads data (static/data/realheads/) and the code that reads it: schema, quantisation,
the causal triangle, the named heads' scores, and the reader's Step 1 attention reproducing a shipped head.
No model weights needed (tests/build/test_realheads_models.py recomputes the data from the pinned weights)."""

from __future__ import annotations

import gzip
import sys

import numpy as np
import pytest
from lessonpy.models import realheads
from lessonpy.maths.attention import scaled_dot_product_attention
from lessonpy.models.realheads import QK_ERROR, WEIGHT_ERROR, Heads, HeadsError

#: the committed data must stay small: it is fetched by the page only when a real-heads cell runs
MAX_TOTAL_BYTES = 700_000


@pytest.fixture(scope="module", params=realheads.MODELS)
def heads(request):
    return Heads.load(request.param)


@pytest.mark.parametrize("causal", [False, True])
def test_encoding_keeps_every_weight_within_half_a_level_and_the_triangle_empty(causal):
    rng = np.random.default_rng(0)
    L, H, T = 2, 3, 7
    scores = rng.standard_normal((L, H, T, T)) * 3
    if causal:
        scores = np.where(np.triu(np.ones((T, T), dtype=bool), 1), -np.inf, scores)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    data = realheads.encode_weights(w, causal)
    assert data.dtype == np.uint8 and data.size == L * H * (T * (T + 1) // 2 if causal else T * T)
    back = realheads.decode_weights(data, L, H, T, causal)
    assert np.abs(back - w).max() <= WEIGHT_ERROR + 1e-7
    if causal:
        assert not back[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]].any()


def test_decoding_the_wrong_amount_of_data_says_what_was_expected():
    with pytest.raises(realheads.DataBroken, match="expected 36 weight levels"):
        realheads.decode_weights(np.zeros(35, np.uint8), 1, 1, 6, causal=False)


def test_the_schema_of_each_model(heads):
    m = heads.meta
    assert {"model", "title", "causal", "layers", "heads", "kv_heads", "head_dim", "sentences", "featured"} <= set(m)
    assert heads.causal == (heads.name == "smollm2")
    assert (heads.layers, heads.heads, heads.head_dim) == {"minilm": (6, 12, 32), "smollm2": (30, 9, 64)}[heads.name]
    assert 6 <= len(heads.sentences) <= 10
    texts = [s["text"] for s in heads.sentences]
    assert any(t[: len(t) // 2].strip() == t[len(t) // 2:].strip() for t in texts), "a sentence written twice"
    F = len(heads.featured)
    for s, sentence in enumerate(heads.sentences):
        T = len(sentence["ids"])
        assert len(sentence["tokens"]) == T and all(isinstance(t, str) for t in sentence["tokens"])
        assert heads.arrays[f"w{s}"].dtype == np.uint8
        for name in "qkv":
            a = heads.arrays[f"{name}{s}"]
            assert a.dtype == np.float16 and a.shape == (F, T, heads.head_dim), (name, s, a.shape)
        assert heads.arrays[f"n{s}"].dtype == np.float16 and heads.arrays[f"n{s}"].shape == (heads.layers, heads.heads, T)
    assert set(heads.arrays) == {f"{n}{s}" for s in range(len(heads.sentences)) for n in "wqkvn"}


def test_rows_sum_to_one_within_the_quantisation_error(heads):
    for s in range(len(heads.sentences)):
        w = heads.weights(s)
        T = w.shape[-1]
        assert w.shape == (heads.layers, heads.heads, T, T) and w.dtype == np.float32
        assert np.abs(w.sum(-1) - 1).max() <= T * WEIGHT_ERROR + 1e-6
        assert w.min() >= 0 and w.max() <= 1


def test_the_causal_model_puts_nothing_above_the_diagonal(heads):
    for s in range(len(heads.sentences)):
        w = heads.weights(s)
        above = np.triu(np.ones(w.shape[-2:], dtype=bool), 1)
        if heads.causal:
            assert not w[..., above].any()
            assert np.all(w[..., 0, 0] == 1.0)  # the first token can only look at itself
        else:
            assert w[..., above].sum() > 1  # an encoder looks ahead too


def test_the_featured_heads_scores_on_the_sentences_recompute_from_the_data(heads):
    """They are the head tests' picks (tests/unit/test_head_tests.py); their score here is on the sentences."""
    on_sentences = realheads.head_scores(heads)
    for f in heads.featured:
        table, count = on_sentences[f["job"]]
        assert f["score"] == round(float(table[f["layer"], f["head"]]), 4) and f["count"] == count


def test_scores_mean_what_their_definitions_say():
    ids = np.array([5, 6, 7, 5, 6, 7])  # a sequence written twice
    T = len(ids)
    prev = np.zeros((1, 1, T, T))
    prev[0, 0, 0, 0] = 1
    prev[0, 0, np.arange(1, T), np.arange(T - 1)] = 1  # a perfect previous-token head
    induction = np.zeros((1, 1, T, T))
    induction[0, 0, :3, 0] = 1
    induction[0, 0, 3, 1], induction[0, 0, 4, 2], induction[0, 0, 5, 3] = 1, 1, 1  # looks where what followed before is
    p = realheads.job_scores(prev, ids, causal=True)
    i = realheads.job_scores(induction, ids, causal=True)
    assert p["previous"][0][0, 0] / p["previous"][1] == 1.0
    assert p["induction"][1] == 3  # positions 3, 4, 5 repeat a token whose successor came before them
    assert i["induction"][0][0, 0] / i["induction"][1] == 1.0
    assert i["previous"][0][0, 0] < p["previous"][0][0, 0]


def test_the_readers_attention_on_the_shipped_q_k_reproduces_every_featured_head(heads):
    for f in heads.featured:
        for s in range(len(heads.sentences)):
            Q, K, V = heads.qkv(s, f["job"])
            T = len(Q)
            mask = np.tril(np.ones((T, T), dtype=bool)) if heads.causal else None
            _, mine = scaled_dot_product_attention(Q, K, V, mask=mask)
            assert np.abs(mine - heads.pattern(s, f["layer"], f["head"])).max() <= WEIGHT_ERROR + QK_ERROR


def test_the_grid_payload_carries_one_array_of_every_head_and_the_named_ones(heads):
    payload = realheads.grid_payload(heads, 1, target="grid")
    w = payload["arrays"]["weights"]
    assert w.dtype == np.float32 and w.shape == (heads.layers, heads.heads, len(heads.tokens(1)), len(heads.tokens(1)))
    assert payload["tokens"] == heads.tokens(1) and payload["causal"] == heads.causal
    assert [f["job"] for f in payload["featured"]] == [f["job"] for f in heads.featured]


def test_the_lesson_numbers_come_from_the_data():
    values = realheads.numbers()
    for name in realheads.MODELS:
        heads = Heads.load(name)
        for f in heads.featured:
            assert values[f"{name}_{f['job']}_score"] == f"{f['score']:.2f}"
            assert values[f"{name}_{f['job']}_layer"] == str(f["layer"])
    for cell in realheads.CELL_HEADS:
        assert float(values[f"{cell.replace('-', '_')}_diff"]) <= WEIGHT_ERROR + QK_ERROR


def test_the_data_is_small():
    files = sorted(realheads.DATA_DIR.glob("*.npz"))
    assert [f.stem for f in files] == sorted(realheads.MODELS)
    total = sum(len(gzip.compress(f.read_bytes())) for f in files)
    assert total <= MAX_TOTAL_BYTES, f"{total:,} bytes gzipped"


def test_bad_requests_get_clear_messages():
    with pytest.raises(realheads.DataBroken, match="not a real-heads data file"):
        Heads.from_bytes(b"not a zip")
    with pytest.raises(HeadsError, match="unknown model 'gpt2'"):
        realheads.load("gpt2")
    heads = realheads.load("minilm")
    with pytest.raises(HeadsError, match="sentence must be 0"):
        heads.tokens(99)
    with pytest.raises(HeadsError, match="heads 0 ... 11"):
        heads.pattern(0, 0, 12)
    with pytest.raises(HeadsError, match="no featured head for 'induction'"):
        heads.qkv(0, "induction")


def test_the_live_weights_format_round_trips_through_the_readers_safetensors_reader():
    from lessonpy.models.safetensors import read_safetensors

    from sitebuild.realheads.live import to_safetensors

    rng = np.random.default_rng(1)
    arrays = {"embeddings.word_embeddings.weight": rng.standard_normal((5, 3)).astype(np.float32),
              "encoder.layer.0.output.dense.bias": rng.standard_normal(7).astype(np.float32)}
    back = read_safetensors(to_safetensors(arrays))
    assert set(back) == set(arrays)
    for name, a in arrays.items():
        assert back[name].dtype == np.float32 and back[name].shape == a.shape
        np.testing.assert_allclose(back[name], a, rtol=2 ** -11)


def test_outside_the_project_the_data_is_read_from_the_current_folder(tmp_path, monkeypatch):
    """A downloaded notebook keeps minilm.npz beside it: Heads.load finds it there, else says where to get it."""
    committed = realheads.DATA_DIR / "minilm.npz"
    monkeypatch.setattr(realheads, "DATA_DIR", tmp_path / "no-project")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(realheads.DataMissing, match=r"minilm\.npz is not in .*Take it home"):
        Heads.load("minilm")
    (tmp_path / "minilm.npz").write_bytes(committed.read_bytes())
    assert Heads.load("minilm").name == "minilm"


def test_the_rows_are_kept_as_rounded_and_the_text_says_what_renormalising_would_cost():
    """The lesson says a stored row is off 1 by at most realheads_rowsum_max and that dividing the rows by their
    sums would raise the SmolLM2 cell's largest difference: both recomputed here from the data."""
    values = realheads.numbers()
    worst = 0.0
    for name in realheads.MODELS:
        heads = Heads.load(name)
        for s in range(len(heads.sentences)):
            sums = heads.weights(s).sum(-1)
            T = len(heads.tokens(s))
            assert np.abs(sums - 1).max() <= T / 510 + 1e-6  # the bound the module states
            worst = max(worst, float(np.abs(sums - 1).max()))
    assert values["realheads_rowsum_max"] == f"{worst:.3f}" and worst > 0
    smol = Heads.load("smollm2")
    f = smol.featured_head("induction")
    mine, diff = realheads.reproduce(smol, 3, "induction")
    stored = smol.pattern(3, f["layer"], f["head"])
    renormalised = np.abs(mine - stored / stored.sum(-1, keepdims=True)).max()
    assert values["real_head_smollm2_renorm_diff"] == f"{renormalised:.4f}"
    assert renormalised > diff and values["real_head_smollm2_diff"] == f"{diff:.4f}"


class _FakeRequest:
    """The part of a synchronous XMLHttpRequest site_data.download uses, answering *status* or failing to send."""

    def __init__(self, status, fails):
        self.status, self.fails, self.response = status, fails, None

    def open(self, method, url, sync):
        self.url = url

    def send(self, body):
        if self.fails:
            raise OSError("NetworkError")  # Pyodide raises a JsException; any exception is a failed download


@pytest.mark.parametrize("status, fails", [(404, False), (0, True)])
def test_a_failed_download_is_data_missing_whatever_the_way_it_failed(monkeypatch, status, fails):
    """The page words a failure by its class (realheads.js): a 404 and a network error are both DataMissing."""
    import types

    fake = types.SimpleNamespace(
        URL=types.SimpleNamespace(new=lambda path, base: types.SimpleNamespace(href=base + path)),
        location=types.SimpleNamespace(href="https://site.test/assets/x/js/worker/"),
        XMLHttpRequest=types.SimpleNamespace(new=lambda: _FakeRequest(status, fails)))
    monkeypatch.setitem(sys.modules, "js", fake)
    from lessonpy.models import site_data

    with pytest.raises(realheads.DataMissing, match="could not download minilm.npz"):
        site_data.download("minilm.npz")


# ---------------------------------------------------------------------------- what a head writes (head_writes)

def test_every_heads_value_norms_read_back_and_weight_its_pattern(heads):
    """n<s> is read back as (L, H, T) positive lengths for every head, and the grid's written array is each weight
    times its key's length over the head's longest: no larger than the weight, equal to it at that longest key."""
    for s in range(len(heads.sentences)):
        T = len(heads.tokens(s))
        assert heads.arrays[f"n{s}"].dtype == np.float16
        norms = heads.norms(s)
        assert norms.shape == (heads.layers, heads.heads, T) and norms.dtype == np.float32
        assert np.isfinite(norms).all() and (norms > 0).all()
    payload = realheads.grid_payload(heads, 2)
    w, written = payload["arrays"]["weights"], payload["arrays"]["written"]
    assert written.shape == w.shape and written.dtype == np.float32
    assert (written <= w + 1e-7).all() and (written >= 0).all()
    longest = heads.norms(2).argmax(-1)  # (L, H): each head's longest key
    at = np.take_along_axis(written, longest[..., None, None].repeat(w.shape[2], -2), -1)
    np.testing.assert_array_equal(at, np.take_along_axis(w, longest[..., None, None].repeat(w.shape[2], -2), -1))
    # a head's cells divided by its weights give its keys' lengths over the longest, whatever the row
    L, H = 1, 2
    ratio = written[L, H][w[L, H] > 0.05] / w[L, H][w[L, H] > 0.05]
    keys = np.nonzero(w[L, H] > 0.05)[1]
    np.testing.assert_allclose(ratio, heads.norms(2)[L, H, keys] / heads.norms(2)[L, H].max(), rtol=1e-6)


def test_a_file_without_value_norms_says_so():
    heads = Heads.load("minilm")
    broken = Heads(heads.meta, {k: v for k, v in heads.arrays.items() if k != "n0"})
    with pytest.raises(realheads.DataBroken, match="value norms n0"):
        broken.norms(0)


def test_the_value_norms_are_the_lengths_of_what_each_head_adds_to_the_layers_output():
    """head_writes.value_norms on a random grouped-query layer: each head's vectors v_j W_O^h, summed over the heads
    with the weights, give merged heads @ W_O.T (the layer's output before its bias), and the norms are their lengths."""
    from lessonpy.models import head_writes

    rng = np.random.default_rng(3)
    L, G, H, T, D = 2, 2, 4, 5, 3
    v = rng.standard_normal((L, G, T, D))
    w_o = rng.standard_normal((L, H * D, H * D))
    a = rng.dirichlet(np.ones(T), size=(L, H, T))  # (L, H, T, T), rows sum to 1
    norms = head_writes.value_norms(v, w_o, H)
    assert norms.shape == (L, H, T)
    for layer in range(L):
        z = np.stack([a[layer, h] @ v[layer, h // (H // G)] for h in range(H)])  # (H, T, D), each head's output
        merged = z.transpose(1, 0, 2).reshape(T, H * D)
        f = [v[layer, h // (H // G)] @ w_o[layer, :, h * D:(h + 1) * D].T for h in range(H)]  # (T, C) per head
        np.testing.assert_allclose(sum(a[layer, h] @ f[h] for h in range(H)), merged @ w_o[layer].T, atol=1e-9)
        np.testing.assert_allclose(norms[layer], [np.linalg.norm(fh, axis=-1) for fh in f], rtol=1e-6)
    with pytest.raises(ValueError, match="do not fit 3 heads"):
        head_writes.value_norms(v, w_o, 3)


def test_what_the_first_token_heads_write_is_computed_from_the_data_the_lesson_states():
    """The lesson's writes_* numbers, recomputed here from the grid's written array (where the head's scale
    cancels out of each row's share) and the norms, and the weight held to the head's score on the sentences."""
    from lessonpy.course.attention import first_token_writes

    values = first_token_writes.numbers()
    scores = realheads.numbers()
    for name in realheads.MODELS:
        heads = Heads.load(name)
        f = heads.featured_head("first")
        shares, ratios = [], []
        for s in range(len(heads.sentences)):
            written = realheads.grid_payload(heads, s)["arrays"]["written"][f["layer"], f["head"], 1:]
            shares.extend(written[:, 0] / written.sum(-1))
            n = heads.norms(s)[f["layer"], f["head"]]
            ratios.append(n[1:].mean() / n[0])
        key = f"writes_{name}_first"
        assert values[f"{key}_layer"] == str(f["layer"]) and values[f"{key}_head"] == str(f["head"])
        assert values[f"{key}_share"] == f"{np.mean(shares):.2f}"
        assert values[f"{key}_ratio"] == f"{np.mean(ratios):.0f}"
        assert values[f"{key}_weight"] == scores[f"{name}_first_score"]
        # what the prose says of them: the weight on the first token is large, and what it passes on short
        assert float(values[f"{key}_weight"]) > 0.5 and float(values[f"{key}_ratio"]) >= 5
        assert float(values[f"{key}_share"]) < float(values[f"{key}_weight"]) or name == "smollm2"
