"""SmolLM2's live model without the model wheel: the 4-bit file format (dequantised bit for bit as gguf-py does,
refused with a clear message when short, foreign or stale), and the forward pass on a tiny random model of the same
shape rules (tests/support/smollm2_random.py): the KV cache against the full pass, knock-outs, the reader's own functions
and the one-line errors when theirs return something unusable, the byte-level BPE's pieces. The real model against
transformers: tests/build/test_smollm2_live_model.py."""

from __future__ import annotations

import json

import gguf
import numpy as np
import pytest
from lessonpy.models import bpe, next_token, quantised, smollm2
from lessonpy.models.quantised import QuantisedFile, WeightsFileError

import lesson5_functions as lesson5
from smollm2_random import SIZES, quantise, random_file, random_weights

#: the cache path against the full pass: the same float32 sums in another order
CACHE_TOL = 1e-4
IDS = [3, 17, 5, 39, 0, 22, 17, 5, 8]


@pytest.fixture(scope="module")
def tiny():
    return random_weights()


# ---------------------------------------------------------------------------- the file

@pytest.mark.parametrize("kind", ["Q4_1", "Q8_0"])
def test_blocks_dequantise_as_gguf_does_bit_for_bit(kind):
    array = np.random.default_rng(1).standard_normal((6, 96)).astype(np.float32)
    blocks = gguf.quants.quantize(array, getattr(gguf.GGMLQuantizationType, kind))
    want = gguf.quants.dequantize(blocks, getattr(gguf.GGMLQuantizationType, kind))
    mine = quantised.dequantise(kind, blocks.tobytes(), (6, 96))
    assert mine.dtype == np.float32 and np.array_equal(mine, want)
    assert len(blocks.tobytes()) == quantised.nbytes(kind, (6, 96))
    file = QuantisedFile(quantised.pack({"w": (kind, blocks.tobytes(), (6, 96))}, {}))
    assert np.array_equal(file.array("w"), want)
    assert np.array_equal(file.blocks("w").rows([4, 0, 4]), want[[4, 0, 4]])  # only those rows made


@pytest.mark.parametrize("read_blocks", [quantised.READ_BLOCKS, 5])  # a tensor in one read, and in many
def test_the_kept_tensors_give_the_files_numbers_bit_for_bit_and_are_read_only(tmp_path, read_blocks, monkeypatch):
    monkeypatch.setattr(quantised, "READ_BLOCKS", read_blocks)
    # LiveWeights keeps every tensor as the file's blocks (half a byte a weight) and widens it on request: the
    # float32 numbers of dequantising them, from the file's bytes or read a tensor at a time from its path.
    data = random_file()
    file = QuantisedFile(data)
    (tmp_path / "w.bin").write_bytes(data)
    for m in (smollm2.LiveWeights(data), smollm2.LiveWeights(tmp_path / "w.bin")):
        for i in range(m.layers):
            got = m.layer(i)
            assert all(np.array_equal(got[t], file.array(f"blk.{i}.{t}.weight")) for t in smollm2.LAYER_TENSORS)
        embedding = file.array("token_embd.weight")
        assert np.array_equal(np.concatenate([rows for _, rows in m.unembedding()]), embedding)
        assert np.array_equal(m.embed([[3, 0], [3, 39]]), embedding[[[3, 0], [3, 39]]])
        assert np.array_equal(m.output_norm(), file.array("output_norm.weight"))
        weights = sum(int(np.prod(info["shape"])) for info in file.tensors.values())
        assert m.nbytes < 0.85 * weights  # 4 bits a weight and float32 scales per block of 32, not float32's 32 bits
        with pytest.raises(ValueError, match="read-only"):
            m.kept["blk.0.attn_q.weight"].q[0, 0] = 1


@pytest.mark.parametrize("kind", ["Q4_1", "Q8_0", "F32"])  # F32: a tiny model's embedding may be
@pytest.mark.parametrize("rows", [(96,), (1, 96), (3, 96), (2, 5, 96)])
def test_blocks_multiply_a_text_as_the_widened_matrix_does(kind, rows):
    array = np.random.default_rng(1).standard_normal((12, 96)).astype(np.float32)
    blocks = QuantisedFile(quantised.pack({"w": quantise(array, kind)}, {})).blocks("w")
    x = np.random.default_rng(2).standard_normal(rows).astype(np.float32)
    got = blocks.times(x)
    assert got.dtype == np.float32 and got.shape == (*rows[:-1], 12)
    assert np.allclose(got, x @ blocks.array().T, rtol=1e-5, atol=1e-5)  # the same sums in another order
    assert np.allclose(blocks.part(4, 9).times(x), got[..., 4:9], rtol=1e-5, atol=1e-5)
    assert np.array_equal(blocks.part(4, 9).array(), blocks.array()[4:9])


def test_a_cached_step_multiplies_from_the_blocks_without_widening_a_matrix(tiny, monkeypatch):
    # widening every layer's matrices was most of a cached step's time: one position is multiplied from the blocks
    cache = smollm2.empty_cache(tiny)
    _, cache = smollm2.decode_step(tiny, IDS[0], cache)
    gain = quantised.Blocks.array  # an F32 gain is an array as kept: only the quantised matrices widen
    monkeypatch.setattr(quantised.Blocks, "array",
                        lambda self: gain(self) if self.d is None else pytest.fail("a cached step widened a matrix"))
    monkeypatch.setattr(quantised.Blocks, "rows", lambda self, index: pytest.fail("a cached step widened rows"))
    monkeypatch.setattr(tiny, "embed", lambda ids: np.ones((len(ids), SIZES["width"]), np.float32))  # its one row
    logits, _ = smollm2.decode_step(tiny, IDS[1], cache)
    assert logits.shape == (SIZES["vocab"],)


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_the_output_matrix_comes_in_chunks_that_cover_it_once(chunk, monkeypatch):
    monkeypatch.setattr(smollm2, "UNEMBED_ROWS", chunk)
    m = random_weights()
    chunks = list(m.unembedding())
    assert [start for start, _ in chunks] == list(range(0, m.vocab, chunk))
    assert sum(len(rows) for _, rows in chunks) == m.vocab


def test_the_file_is_aligned_and_the_same_bytes_every_time():
    data = random_file()
    assert data == random_file()
    n = int.from_bytes(data[:8], "little")
    assert (8 + n) % quantised.ALIGN == 0
    header = json.loads(data[8:8 + n])
    assert header["__metadata__"]["format"] == quantised.FORMAT
    assert all(info["data_offsets"][0] % quantised.ALIGN == 0 for name, info in header.items() if name != "__metadata__")


def _stale(data):
    """*data* with its header's format renamed, as a file from another build's format would be."""
    return data.replace(quantised.FORMAT.encode(), b"smollm2-live/0")


@pytest.mark.parametrize("damage, says", [
    (lambda d: d[: len(d) // 2], "is cut short"),
    (lambda d: d[:5], "is cut short"),
    (lambda d: b"<html>404 Not Found</html>" + bytes(100), "is not a SmolLM2 live weights file"),
    (lambda d: d[:8] + b"x" + d[9:], "header is not JSON"),
    (_stale, "from another build"),
])
def test_a_bad_short_or_stale_file_says_what_is_wrong(damage, says):
    with pytest.raises(WeightsFileError, match=says):
        smollm2.LiveWeights(damage(random_file()))


def test_load_names_a_missing_file_and_files_from_different_builds(tmp_path):
    with pytest.raises(FileNotFoundError, match="smollm2-live.bin is not in"):
        smollm2.load(tmp_path)
    (tmp_path / smollm2.WEIGHTS_NAME).write_bytes(random_file())
    tokens = [chr(ord("a") + i) for i in range(SIZES["vocab"] - 1)]  # one token short of the weights' vocabulary
    (tmp_path / smollm2.TOKENIZER_NAME).write_text(json.dumps({"tokens": tokens, "merges": [], "special": []}))
    with pytest.raises(WeightsFileError, match="from different builds"):
        smollm2.load(tmp_path)


# ---------------------------------------------------------------------------- the forward pass

def test_the_forward_pass_has_the_shapes_and_a_causal_mask(tiny):
    T, L, H, G = len(IDS), SIZES["layers"], SIZES["heads"], SIZES["kv_heads"]
    out = smollm2.forward(tiny, IDS, keep=("weights", "q", "k", "v"))
    assert out["logits"].shape == (T, SIZES["vocab"]) and out["weights"].shape == (L, H, T, T)
    assert out["k"].shape == (L, G, T, 16)
    assert np.allclose(out["weights"].sum(-1), 1, atol=1e-5)
    assert not np.triu(out["weights"], k=1).any()  # nothing from the future
    # the logits of a prefix are the prefix's own: position t reads only positions 0..t
    assert np.allclose(smollm2.forward(tiny, IDS[:4])["logits"], out["logits"][:4], atol=CACHE_TOL)
    last = smollm2.forward(tiny, IDS, logits="last")["logits"]
    assert last.shape == (SIZES["vocab"],) and np.allclose(last, out["logits"][-1], atol=1e-6)


def test_a_batchs_kept_arrays_are_each_texts_own_with_the_layers_after_the_batch(tiny):
    ids = np.array([IDS[:5], IDS[4:]])
    both = smollm2.forward(tiny, ids, keep=("weights", "q", "resid"))
    assert both["weights"].shape == (2, SIZES["layers"], SIZES["heads"], 5, 5)
    for i in range(2):
        one = smollm2.forward(tiny, ids[i], keep=("weights", "q", "resid"))
        assert all(np.allclose(both[name][i], one[name], atol=1e-6) for name in one)


def test_the_logits_in_chunks_of_the_vocabulary_are_the_whole_products(tiny, monkeypatch):
    whole = smollm2.forward(tiny, IDS)["logits"]
    monkeypatch.setattr(smollm2, "UNEMBED_ROWS", 16)  # 40 tokens: chunks of 16, 16 and 8
    assert len(list(tiny.unembedding())) == 3
    assert np.allclose(smollm2.forward(tiny, IDS)["logits"], whole, atol=1e-6)


def test_the_kv_cache_gives_the_full_passs_logits_one_token_at_a_time(tiny):
    full = smollm2.forward(tiny, IDS)["logits"]
    cache = smollm2.empty_cache(tiny)
    for t, token in enumerate(IDS):
        logits, cache = smollm2.decode_step(tiny, token, cache)
        assert np.abs(logits - full[t]).max() <= CACHE_TOL
    assert cache[0][0].shape == (SIZES["kv_heads"], len(IDS), 16)  # one key per position, per key/value head


def test_a_knocked_out_head_changes_what_comes_after_it_only(tiny):
    base = smollm2.forward(tiny, IDS, keep=("weights", "z"))
    off = smollm2.forward(tiny, IDS, knock=smollm2.knock_heads({(1, 2): "off"}), keep=("weights", "z"))
    assert not off["z"][1, 2].any() and np.array_equal(off["z"][1, 3], base["z"][1, 3])
    assert np.array_equal(off["weights"], base["weights"])  # its pattern is computed; only its output goes
    assert np.abs(off["logits"] - base["logits"]).max() > 1e-3
    mean = smollm2.forward(tiny, IDS, knock=smollm2.knock_heads({(1, 2): "mean"}), keep=("z",))
    assert np.allclose(mean["z"][1, 2], base["z"][1, 2].mean(0), atol=1e-6)  # every position gets the average
    first = smollm2.forward(tiny, IDS, knock=smollm2.knock_heads({(0, 0): "off"}), keep=("weights",))
    assert np.array_equal(first["weights"][0], base["weights"][0]) and not np.array_equal(first["weights"][1], base["weights"][1])
    assert smollm2.knock_heads({}) is None
    with pytest.raises(ValueError, match="one of"):
        smollm2.knock_heads({(0, 0): "half"})


# ---------------------------------------------------------------------------- the reader's functions

lesson5_causal_attention = lesson5.causal_attention  # Lesson 5's cell: one head, masked
lesson5_decode_step = lesson5.decode_step  # Lesson 5's exercise's solution


def lesson4_attention(Q, K, V):
    s = Q @ K.T / np.sqrt(K.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    return w @ V, w


def test_the_readers_masked_attention_and_decode_step_run_the_model(tiny):
    ours = smollm2.forward(tiny, IDS)
    theirs = smollm2.forward(tiny, IDS, attention=lesson5_causal_attention)
    assert np.abs(theirs["logits"] - ours["logits"]).max() <= CACHE_TOL
    assert "weights" not in theirs  # their function returns its output only: no pattern to draw
    cache = smollm2.empty_cache(tiny)
    for t, token in enumerate(IDS):
        logits, cache = smollm2.decode_step(tiny, token, cache, decode_step=lesson5_decode_step)
        assert np.abs(logits - ours["logits"][t]).max() <= CACHE_TOL


def test_lesson_4s_attention_has_no_mask_so_the_model_reads_the_future(tiny):
    ours = smollm2.forward(tiny, IDS)
    open_ = smollm2.forward(tiny, IDS, attention=lesson4_attention)
    assert open_["weights"].shape == ours["weights"].shape and np.triu(open_["weights"], k=1).any()
    assert np.abs(open_["logits"][0] - ours["logits"][0]).max() > 1e-3  # the first token read the ones after it


@pytest.mark.parametrize("attention, says", [
    (lambda Q, K, V: (Q @ K.T) @ V[:, :3], r"your attention's output for head 0 has shape \(9, 3\): the model needs \(9, 16\)"),
    (lambda Q, K, V: np.full(Q.shape, np.nan), "has NaN or infinite values"),
    (lambda Q, K, V: Q.tolist(), "is list: the model needs a float array of shape"),
    (lambda Q, K, V: 1 / 0, "your attention raised ZeroDivisionError: division by zero"),
    (lambda Q, K, V: (Q, np.ones((2, 2))), r"attention's weights for head 0 has shape \(2, 2\)"),
])
def test_a_readers_attention_that_returns_something_unusable_says_so_in_one_line(tiny, attention, says):
    with pytest.raises(smollm2.ReaderFunctionError, match=says) as raised:
        smollm2.forward(tiny, IDS, attention=attention)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("step, says", [
    (lambda x, Wq, Wk, Wv, K, V: x @ Wq, "your decode_step returned ndarray: the model needs \\(out_t, K_cache, V_cache\\)"),
    (lambda x, Wq, Wk, Wv, K, V: (x @ Wq, K, V), r"decode_step's K_cache has shape \(0, 16\): the model needs \(1, 16\)"),
    (lambda x, Wq, Wk, Wv, K, V: (x, np.vstack([K, x @ Wk]), np.vstack([V, x @ Wv])), r"out_t has shape \(48,\)"),
])
def test_a_readers_decode_step_that_returns_something_unusable_says_so(tiny, step, says):
    with pytest.raises(smollm2.ReaderFunctionError, match=says):
        smollm2.decode_step(tiny, 3, smollm2.empty_cache(tiny), decode_step=step)


# ---------------------------------------------------------------------------- the tokenizer's pieces

@pytest.mark.parametrize("text, pieces", [
    ("Hello, world!", ["Hello", ",", " world", "!"]),
    ("it's 2024  now\n", ["it", "'s", " 2024", " ", " now", "\n"]),  # the space before a word goes with it
    ("naïve café ½", ["naïve", " café", " ½"]),
    ("a\t\tb  ", ["a", "\t", "\t", "b", "  "]),  # white space before a word leaves it its last character
    ("x'S 🤖🚀!", ["x", "'", "S", " 🤖🚀!"]),
])
def test_the_pre_tokens_follow_gpt2s_pattern(text, pieces):
    assert bpe.pre_tokens(text) == pieces


def test_bpe_merges_the_earliest_learned_pair_first_and_maps_every_byte():
    assert len(set(bpe.byte_map().values())) == 256 and bpe.byte_map()[ord(" ")] == "Ġ"
    tokens = ["<|endoftext|>", "a", "b", "c", "Ġ", "ab", "bc", "abc", "Ġa"]
    tok = bpe.BPE(tokens, ["b c", "a b", "a bc", "Ġ a"], special=[0])
    assert tok.encode("abc") == [7]  # b+c first (rank 0), then a+bc: "abc"
    assert tok.encode("ab ab<|endoftext|>c") == [5, 4, 5, 0, 3]  # " ab": a+b (rank 1) before Ġ+a (rank 3)
    assert tok.decode(tok.encode("ab ab<|endoftext|>c")) == "ab ab<|endoftext|>c"
    assert tok.encode("a\x1db") == [1, 2]  # a byte with no token is dropped, as the reference drops it


def test_the_live_files_cache_folder_changes_with_the_conversion_the_format_and_the_brotli_rule(tmp_path, monkeypatch):
    from sitebuild import compress
    from sitebuild.realheads import smollm2_live

    first = smollm2_live.live_dir(tmp_path)
    assert first.parent.name == "smollm2-live"
    for module, name, value in ((smollm2_live, "FORMAT", "changed"), (smollm2_live, "FILE_FORMAT", "smollm2-live/2"),
                                (compress, "QUALITY", compress.QUALITY - 1)):
        with monkeypatch.context() as patch:
            patch.setattr(module, name, value)
            assert smollm2_live.live_dir(tmp_path) != first, name
    assert smollm2_live.live_dir(tmp_path) == first


def write_files(folder, seed=0):
    """The random model's weights and a tokenizer of its vocabulary's size, as the page's worker writes them."""
    (folder / smollm2.WEIGHTS_NAME).write_bytes(random_file(seed))
    tokens = [chr(ord("a") + i) for i in range(SIZES["vocab"])]
    (folder / smollm2.TOKENIZER_NAME).write_text(json.dumps({"tokens": tokens, "merges": [], "special": []}))


def test_once_read_the_pages_copy_of_the_weights_goes_and_files_says_loaded(tmp_path, monkeypatch):
    """The page's file-system copy (the worker's JavaScript memory, 97.7 MB) is removed once Python holds the
    bytes, and files() then tells the page to put nothing there; the model still runs, and a file anywhere else
    than the page's folder (the build's cache, a test's) is never removed."""
    page = tmp_path / "page"
    page.mkdir()
    write_files(page)
    monkeypatch.setattr(smollm2, "FOLDER", str(page))
    monkeypatch.setattr(smollm2, "_loaded", {})
    assert [(f["name"], f["loaded"]) for f in next_token.files()] == [
        (smollm2.WEIGHTS_NAME, False), (smollm2.TOKENIZER_NAME, False)]
    m, _ = smollm2.load(str(page))
    assert not (page / smollm2.WEIGHTS_NAME).exists() and (page / smollm2.TOKENIZER_NAME).exists()
    assert all(f["loaded"] and f["path"] == f"{page}/{f['name']}" for f in next_token.files())
    assert smollm2.load(str(page))[0] is m  # read once: the removed file is not needed again
    assert smollm2.forward(m, [1, 2, 3], keep=())["logits"].shape == (3, SIZES["vocab"])

    elsewhere = tmp_path / "cache"
    elsewhere.mkdir()
    write_files(elsewhere)
    smollm2.load(str(elsewhere))
    assert (elsewhere / smollm2.WEIGHTS_NAME).exists()
