"""SmolLM2-135M (a Llama-style causal decoder) in plain NumPy: the page's live model, and the build's.

Per layer: RMSNorm, then 9 query heads that share 3 key/value heads (grouped-query attention), with rotary
position embeddings (RoPE) on Q and K and a causal mask; RMSNorm, then a SwiGLU MLP. The output layer shares
the token embedding matrix (tied embeddings). Shapes: T tokens, C = 576 channels, H = 9 query heads, G = 3
key/value heads, D = 64 per head, F = 1536 in the MLP, V = 49,152 tokens in the vocabulary.

The weights are anything with the methods of :class:`LiveWeights`: ``layer(i, widen=True)`` (one layer's
matrices as float32, PyTorch's (out, in) layout, Q and K rows in Hugging Face's order; widen=False: as kept),
``embed(ids)``, ``output_norm()``, ``unembedding(widen=True)`` (the tied matrix in chunks of rows) and the
hyper-parameters as attributes. The page's :class:`LiveWeights` keeps GGUF's 4-bit blocks as the file packs them
(:mod:`lessonpy.models.quantised`, 112 MB): :func:`linear` widens a matrix to float32 only while it multiplies a
text by it, and multiplies a cached step's one position straight from the blocks, so Python's memory stays near
230 MB in Pyodide (measured: docs/speed.md), not the 540 MB of the whole model in float32. The build's
``sitebuild.realheads.smollm2.Model`` holds all of it dequantised. Both run the same functions below.

The reader's own functions can replace the lesson's (``attention=``, ``decode_step=``): their results are
checked, and one that returns the wrong shape, a non-array or NaN raises :class:`ReaderFunctionError` saying
so in one line.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from lessonpy.maths.attention import softmax

from . import page_files
from .bpe import BPE
from .quantised import Blocks, QuantisedFile, WeightsFileError

#: where the page writes the downloaded files in Pyodide's file system
FOLDER = "/home/pyodide/smollm2-live"
WEIGHTS_NAME = "smollm2-live.bin"
TOKENIZER_NAME = "smollm2-tokenizer.json"
#: one layer's tensors, by their GGUF names after ``blk.<i>.``
LAYER_TENSORS = ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                 "ffn_norm", "ffn_gate", "ffn_up", "ffn_down")
#: rows of the tied embedding widened at a time for the logits: 4,096 x 576 float32 is 9.4 MB, no more than a
#: 32-token pass's other arrays (Python's memory never shrinks, so its largest array sets what the page keeps)
UNEMBED_ROWS = 4096
#: the knock-outs a head may have: its output replaced by zeros, or by its mean over the text's positions
KNOCKS = ("off", "mean")


class LiveWeights:
    """The weights in the live file (*source*: its bytes, or its path, read a tensor at a time), every tensor kept
    as its blocks (:class:`lessonpy.models.quantised.Blocks`: 112 MB for SmolLM2, half a byte a weight and its
    block's scales) and made float32 on request: one layer's matrices (~14 MB), the rows of a text's tokens, a
    chunk of the output matrix."""

    def __init__(self, source, name: str = WEIGHTS_NAME):
        file = QuantisedFile(source, name)
        try:
            meta = file.meta
            try:
                self.layers, self.heads, self.kv_heads = int(meta["layers"]), int(meta["heads"]), int(meta["kv_heads"])
                self.width, self.vocab = int(meta["width"]), int(meta["vocab"])
                self.theta, self.eps = float(meta["theta"]), float(meta["eps"])
            except (KeyError, TypeError, ValueError):
                raise WeightsFileError(f"{name} does not state the model's sizes: download it again") from None
            self.head_dim = self.width // self.heads
            missing = [n for n in self.names() if n not in file.tensors]
            if missing:
                raise WeightsFileError(f"{name} lacks {len(missing)} tensors ({missing[0]}, ...): download it again")
            # Read once, here, each tensor's bytes let go as soon as its blocks are kept: never the whole file.
            self.kept = {n: file.blocks(n) for n in self.names()}
        finally:
            file.close()

    @property
    def nbytes(self) -> int:
        """The bytes the kept tensors take."""
        return sum(t.nbytes for t in self.kept.values())

    def names(self):
        yield from ("token_embd.weight", "output_norm.weight")
        for i in range(self.layers):
            yield from (f"blk.{i}.{t}.weight" for t in LAYER_TENSORS)

    def layer(self, i: int, widen: bool = True) -> dict:
        """Layer *i*'s weights as float32 arrays, {short name: array}: ~14 MB, made anew at each call. With
        widen=False its matrices as kept (:class:`Blocks`, nothing made), which :func:`linear` multiplies."""
        kept = {t: self.kept[f"blk.{i}.{t}.weight"] for t in LAYER_TENSORS}
        return {t: w.array() if widen or w.d is None else w for t, w in kept.items()}

    def embed(self, ids) -> np.ndarray:
        """The embedding rows of *ids* (any shape): (*ids.shape, C) float32; only those rows are made."""
        ids = np.asarray(ids)
        return self.kept["token_embd.weight"].rows(ids.reshape(-1)).reshape(*ids.shape, self.width)

    def output_norm(self) -> np.ndarray:
        return self.kept["output_norm.weight"].array()

    def unembedding(self, widen: bool = True):
        """The tied output matrix (V, C) in chunks: (first row, float32 rows) pairs of :data:`UNEMBED_ROWS` rows
        (widen=False: the rows as kept, :class:`Blocks`, as :meth:`layer` gives them)."""
        kept = self.kept["token_embd.weight"]
        for start in range(0, self.vocab, UNEMBED_ROWS):
            stop = min(start + UNEMBED_ROWS, self.vocab)
            yield start, kept.rows(slice(start, stop)) if widen else kept.part(start, stop)


_loaded: dict = {}  # folder -> (weights, tokenizer): read once per interpreter


def load(folder=FOLDER):
    """SmolLM2's :class:`LiveWeights` and :class:`lessonpy.models.bpe.BPE` tokenizer, read from *folder* once.
    A missing, short or foreign file raises :class:`WeightsFileError` (or FileNotFoundError) saying which."""
    folder = str(folder)
    if folder not in _loaded:
        path = Path(folder)
        for name in (WEIGHTS_NAME, TOKENIZER_NAME):
            if not (path / name).is_file():
                raise FileNotFoundError(f"{name} is not in {folder}: download SmolLM2's weights first")
        weights = LiveWeights(path / WEIGHTS_NAME)  # a tensor at a time: never the whole file in memory
        tokenizer = BPE.from_json((path / TOKENIZER_NAME).read_text(encoding="utf-8"))
        if len(tokenizer.tokens) != weights.vocab:
            raise WeightsFileError(f"{TOKENIZER_NAME} has {len(tokenizer.tokens):,} tokens, the weights "
                                   f"{weights.vocab:,}: the two files are from different builds; download them again")
        _loaded[folder] = (weights, tokenizer)
        page_files.release(path / WEIGHTS_NAME, FOLDER)  # Python holds the bytes now: the page's copy goes
    return _loaded[folder]


def loaded(folder=None) -> bool:
    """Whether :func:`load` has read the files of *folder* (the page's, :data:`FOLDER`, if None) in this interpreter."""
    return str(FOLDER if folder is None else folder) in _loaded


# ---------------------------------------------------------------------------- the pieces

def rms_norm(x, w, eps):
    """Each row of x (..., C) divided by its root mean square, then scaled by the learned gain w (C,)."""
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def rope(x, theta, start=0):
    """Rotary embedding of x (..., T, D) at positions start .. start + T - 1: rotate the pair (i, i + D/2) at
    position t by the angle t * theta^(-2i/D). Q and K both turn, so q . k depends on their distance only."""
    T, D = x.shape[-2:]
    freq = theta ** (-np.arange(0, D, 2, dtype=np.float64) / D)  # (D/2,)
    angle = np.arange(start, start + T)[:, None] * freq[None, :]  # (T, D/2)
    cos, sin = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
    a, b = x[..., : D // 2], x[..., D // 2:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


def split_heads(a, n):
    """(..., T, n * D) -> (..., n, T, D)."""
    return a.reshape(*a.shape[:-1], n, a.shape[-1] // n).swapaxes(-2, -3)


def merge_heads(z):
    """(..., n, T, D) -> (..., T, n * D): the heads side by side again."""
    return np.swapaxes(z, -2, -3).reshape(*z.shape[:-3], z.shape[-2], z.shape[-3] * z.shape[-1])


#: Pyodide's NumPy has no BLAS: there einsum's loop multiplies a text by a matrix 1.5 times faster than matmul's
#: (float32, 32 x 576 by 576 x 1536: 19 ms against 29; docs/speed.md); with BLAS (CPython, the build) @ is faster.
_EINSUM_PRODUCTS = sys.platform == "emscripten"


def linear(x, W):
    """x (..., in) times the weight W (out, in), PyTorch's layout: (..., out), i.e. x @ W.T. W is a float32
    array, or a matrix kept as 4-bit or 8-bit blocks (``m.layer(i, widen=False)``)."""
    if isinstance(W, Blocks):
        if x.size == x.shape[-1]:  # one position (a cached step): from the blocks, twice as fast (docs/speed.md)
            return W.times(x)
        W = W.array()  # a text: widened once for all its positions, and let go when this returns
    return np.einsum("...i,oi->...o", x, W) if _EINSUM_PRODUCTS else x @ W.T


def silu(x):
    return x / (1.0 + np.exp(-x))


def swiglu(h, gate, up, down):
    """The SwiGLU MLP of h (..., C): silu(h W_gate) times h W_up, elementwise (..., F), back to C through W_down.
    Weights in PyTorch's (out, in) layout: gate and up (F, C), down (C, F)."""
    return linear(silu(linear(h, gate)) * linear(h, up), down)


class ReaderFunctionError(ValueError):
    """The reader's own function (attention, decode_step) raised or returned something the model cannot use."""


def _checked(what, value, shape):
    """*value* as float32 if it is a finite array of *shape*, else ReaderFunctionError in one line."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fiu":
        raise ReaderFunctionError(f"your {what} is {type(value).__name__}: the model needs a float array of shape {shape}")
    if value.shape != shape:
        raise ReaderFunctionError(f"your {what} has shape {value.shape}: the model needs {shape}")
    if not np.isfinite(value).all():
        raise ReaderFunctionError(f"your {what} has NaN or infinite values: the model needs finite numbers")
    return value.astype(np.float32, copy=False)


def _call(name, fn, *args):
    try:
        return fn(*args)
    except ReaderFunctionError:
        raise
    except Exception as exc:  # noqa: BLE001 - the reader's code: one line, not a traceback into the model
        raise ReaderFunctionError(f"your {name} raised {type(exc).__name__}: {' '.join(str(exc).split())}") from None


def attend(q, k, v, start=0, attention=None):
    """Causal grouped-query attention. q (..., H, T, D) at positions start .. start + T - 1; k, v (..., G, S, D)
    at positions 0 .. S - 1 (S = start + T: the cached past, then these T). Returns z (..., H, T, D), each head's
    output, and the weights (..., H, T, S), zero where a query would see the future (None from a reader's
    function that returns only its output).

    *attention*: the reader's function instead of the lesson's, called once per query head with that head's
    Q (T, D) and its group's K, V (S, D): Lesson 5's ``causal_attention(Q, K, V) -> out`` or Lesson 4's
    ``attention(Q, K, V) -> (out, weights)`` (which has no mask: the model then reads the future)."""
    H, G, T, D = q.shape[-3], k.shape[-3], q.shape[-2], q.shape[-1]
    k_h, v_h = np.repeat(k, H // G, axis=-3), np.repeat(v, H // G, axis=-3)  # query head i uses kv head i // (H/G)
    if attention is None:
        future = np.triu(np.ones((T, start + T), dtype=bool), k=start + 1)  # (T, S): key after the query
        # a float32 scale: NumPy's float64 sqrt(D) would turn the rest of the pass into float64 (every weight cast)
        scores = q @ k_h.swapaxes(-1, -2) / np.float32(np.sqrt(D))  # (..., H, T, S)
        weights = softmax(np.where(future, -np.inf, scores))
        return weights @ v_h, weights
    if q.ndim != 3:
        raise ValueError("the reader's attention runs one text at a time, not a batch")
    S = k.shape[-2]
    outs, all_weights = [], []
    for h in range(H):
        got = _call("attention", attention, q[h], k_h[h], v_h[h])
        out, w = got if isinstance(got, tuple) and len(got) == 2 else (got, None)
        outs.append(_checked(f"attention's output for head {h}", out, (T, D)))
        if w is not None:
            all_weights.append(_checked(f"attention's weights for head {h}", np.asarray(w), (T, S)))
    return np.stack(outs), (np.stack(all_weights) if len(all_weights) == H else None)


def block(m, layer, x, knock=None, W=None, attention=None, past=None):
    """Layer *layer* on the residual stream x (..., T, C). Returns the new x and the layer's arrays: ``weights``
    (..., H, T, S), ``q`` (..., H, T, D), ``k``, ``v`` (..., G, S, D) (the cache after this step) and ``z``
    (..., H, T, D), each head's output before the output projection.

    *knock*, if given, is called as knock(layer, z) and returns the z to use instead (:func:`knock_heads`).
    *W*: the layer's weights if the caller has them, else ``m.layer(layer, widen=False)``: :func:`linear` then
    widens one matrix at a time as it uses it, never the layer's seven at once. *past*: the cached (k, v) of the
    positions before x's, (..., G, P, D) each, or None: x's first row is then position 0."""
    W = m.layer(layer, widen=False) if W is None else W
    H, G = m.heads, m.kv_heads
    start = 0 if past is None else past[0].shape[-2]
    h = rms_norm(x, W["attn_norm"], m.eps)  # (..., T, C)
    q = rope(split_heads(linear(h, W["attn_q"]), H), m.theta, start)  # (..., H, T, D)
    k = rope(split_heads(linear(h, W["attn_k"]), G), m.theta, start)  # (..., G, T, D)
    v = split_heads(linear(h, W["attn_v"]), G)  # (..., G, T, D)
    if past is not None:
        k, v = np.concatenate([past[0], k], axis=-2), np.concatenate([past[1], v], axis=-2)  # (..., G, S, D)
    z, weights = attend(q, k, v, start, attention)
    if knock is not None:
        z = knock(layer, z)
    x = x + linear(merge_heads(z), W["attn_output"])
    x = x + swiglu(rms_norm(x, W["ffn_norm"], m.eps), W["ffn_gate"], W["ffn_up"], W["ffn_down"])
    return x, {"weights": weights, "q": q, "k": k, "v": v, "z": z}


def unembed(m, x):
    """Logits (..., V) of the final residual stream x (..., C): its RMSNorm times the tied embedding, one chunk
    of the vocabulary at a time (:meth:`LiveWeights.unembedding`). The chunks come as kept and :func:`linear`
    widens each as it uses it (chunks made by the loop itself kept two alive at once: the next was made before
    the last was let go)."""
    h = rms_norm(x, m.output_norm(), m.eps)
    return np.concatenate([linear(h, rows) for _, rows in m.unembedding(widen=False)], axis=-1)


def forward(m, ids, knock=None, keep=("weights", "q", "k", "v"), attention=None, logits="all"):
    """Run the decoder on token ids (T,), or a batch (B, T). Returns float32 arrays, with a leading B for a
    batch: ``logits`` (T, V), or (V,) of the last position only with logits="last" (a ninth of the pass's time
    saved when only the next token matters); and each of :func:`block`'s arrays that *keep* names, stacked over
    the layers: ``weights`` (L, H, T, T), zero above the diagonal; ``q`` (L, H, T, D), ``k``, ``v`` (L, G, T, D)
    with RoPE applied to q and k; ``z``; and ``resid`` (L, T, C), each layer's input, if it names that.
    *knock*: see :func:`block` and :func:`knock_heads`; *attention*: see :func:`attend`."""
    x = m.embed(np.asarray(ids))  # (T, C)
    # Each kept array is made whole at the first layer and filled layer by layer. Kept a layer at a time (a list
    # stacked at the end), these small arrays that live on landed between each layer's widened matrices, which
    # then no longer fit where the last ones were: Python's memory, which never shrinks, grew by 35 MB a pass.
    out, missing = {}, set()
    for layer in range(m.layers):
        before = x
        x, arrays = block(m, layer, x, knock, attention=attention)
        for name in keep:
            value = before if name == "resid" else arrays[name]
            if value is None:  # a reader's attention that returns no weights
                missing.add(name)
                continue
            lead = x.ndim - 2  # a batch's axis (1) or none (0): the layers' axis comes after it
            if name not in out:
                out[name] = np.empty((*value.shape[:lead], m.layers, *value.shape[lead:]), dtype=np.float32)
            np.moveaxis(out[name], lead, 0)[layer] = value
    out = {name: value for name, value in out.items() if name not in missing}
    out["logits"] = unembed(m, x if logits == "all" else x[..., -1, :])
    return out


def knock_heads(changes):
    """The knock function of :func:`block` for *changes*, {(layer, head): "off" or "mean"} (None for none):
    "off" replaces the head's output by zeros, as if the head were removed (its output projection gets
    nothing from it); "mean" by its mean over the text's positions, which keeps the head's average
    contribution (that the layers after it may rely on: a constant is not information) and takes away only
    what depends on the token, so a loss that rises measures the head's token-specific work. The mean is over
    the positions present, so in :func:`decode_step` (one position) "mean" changes nothing: use "off" there."""
    changes = dict(changes or {})
    for (layer, head), change in changes.items():
        if change not in KNOCKS:
            raise ValueError(f"layer {layer}, head {head}: a knock-out is one of {KNOCKS}, not {change!r}")
    if not changes:
        return None

    def knock(layer, z):  # z (..., H, T, D)
        mine = {head: change for (at, head), change in changes.items() if at == layer}
        if not mine:
            return z
        z = z.copy()
        for head, change in mine.items():
            z[..., head, :, :] = 0.0 if change == "off" else z[..., head, :, :].mean(-2, keepdims=True)
        return z

    return knock


# ---------------------------------------------------------------------------- generation with a cache

def empty_cache(m):
    """The KV cache before the first token: for each layer, (k, v) of shape (G, 0, D)."""
    nothing = np.zeros((m.kv_heads, 0, m.head_dim), dtype=np.float32)
    return [(nothing, nothing) for _ in range(m.layers)]


def _with_reader_decode_step(decode_step):
    """An *attention* for :func:`attend` of one new position that runs the reader's Lesson 5
    ``decode_step(x_t, W_q, W_k, W_v, K_cache, V_cache) -> (out_t, K_cache, V_cache)`` for each query head.
    RoPE turns q and k after the projection, so the model hands it x_t = [q, k, v] (3D,) and W_q, W_k, W_v that
    select each third: x_t @ W_k is then this position's rotated key, which their step appends to the cache."""

    def attention(q, k_all, v_all):  # one head: q (1, D), k_all and v_all (S, D) with the new row last
        D = q.shape[-1]
        eye, zero = np.eye(D, dtype=np.float32), np.zeros((D, D), dtype=np.float32)
        W_q, W_k, W_v = (np.concatenate(parts) for parts in ((eye, zero, zero), (zero, eye, zero), (zero, zero, eye)))
        x_t = np.concatenate([q[0], k_all[-1], v_all[-1]])  # (3D,)
        got = _call("decode_step", decode_step, x_t, W_q, W_k, W_v, k_all[:-1], v_all[:-1])
        if not (isinstance(got, tuple) and len(got) == 3):
            raise ReaderFunctionError(f"your decode_step returned {type(got).__name__}: the model needs "
                                      "(out_t, K_cache, V_cache)")
        out_t = _checked("decode_step's out_t", got[0], (D,))
        _checked("decode_step's K_cache", got[1], k_all.shape)
        _checked("decode_step's V_cache", got[2], v_all.shape)
        return out_t[None, :]

    return attention


def decode_step(m, token, cache, knock=None, decode_step=None):
    """One new token through the model with the KV cache: its id *token*, *cache* as :func:`empty_cache` or
    this function returned it (the keys and values of every earlier position). Returns (logits (V,), cache with
    this position appended): each layer computes q, k, v for the one new position only and reads the cached
    keys and values, so a step costs one position's work, not the whole text's again. *decode_step*: the
    reader's Lesson 5 function for the attention (see :func:`_with_reader_decode_step`)."""
    attention = None if decode_step is None else _with_reader_decode_step(decode_step)
    x = m.embed(np.asarray([token]))  # (1, C)
    new_cache = []
    for layer in range(m.layers):  # one position: linear() multiplies it from the kept blocks, widening nothing
        x, arrays = block(m, layer, x, knock, attention=attention, past=cache[layer])
        new_cache.append((arrays["k"], arrays["v"]))  # (G, S, D) each
    return unembed(m, x[-1]), new_cache
