"""SmolLM2's live weights file: GGUF's own 4-bit and 8-bit blocks, read one tensor at a time.

The file (``smollm2-live.bin``, 96.6 MB) is laid out like safetensors: 8 bytes (little-endian header length), a JSON
header, then the tensors' raw bytes, each starting on a 32-byte boundary. The header's ``__metadata__`` holds
``format`` (:data:`FORMAT`) and the model's hyper-parameters; every other entry is a tensor, ``{"dtype", "shape",
"data_offsets"}`` with the shape in PyTorch's order (out, in). Three dtypes, the blocks exactly as the GGUF file
stores them (so the page's numbers are the build's, bit for bit):

- ``Q4_1``: blocks of 32 weights along a row, 20 bytes each: float16 ``d`` (the step), float16 ``m`` (the
  minimum), then 16 bytes whose low nibbles are weights 0-15 and high nibbles weights 16-31; weight = d * q + m;
- ``Q8_0``: blocks of 32, 34 bytes each: float16 ``d``, then 32 int8 ``q``; weight = d * q;
- ``F32``: plain float32 (the RMSNorm gains, 576 numbers each).

Dequantised to float32 the model would take about 540 MB; :class:`QuantisedFile` keeps the 97 MB of blocks and
dequantises a tensor (one layer's matrices, ~18 MB) when asked, or only some of its rows (the embedding's rows of
the text's tokens).
"""

from __future__ import annotations

import json

import numpy as np

#: what the page's reader understands; the writer puts it in the header, a file without it is refused
FORMAT = "smollm2-live/1"
#: weights per block in both quantised dtypes
BLOCK = 32
#: one block of each dtype as NumPy reads it (GGUF's ``block_q4_1`` and ``block_q8_0``)
BLOCK_DTYPES = {
    "Q4_1": np.dtype([("d", "<f2"), ("m", "<f2"), ("qs", "u1", (BLOCK // 2,))]),
    "Q8_0": np.dtype([("d", "<f2"), ("qs", "i1", (BLOCK,))]),
}
#: where each tensor's bytes start (a multiple of this from the start of the data)
ALIGN = 32
#: a Q4_1 byte's two weights before scaling, (2, 256): its low nibble (weights 0-15 of a block) and its high one
#: (16-31). Looking them up is 4 times faster in NumPy than masking, shifting and converting (measured).
NIBBLES = np.stack([np.arange(256) & 15, np.arange(256) >> 4]).astype(np.float32)


class WeightsFileError(ValueError):
    """The weights file is not one this code reads: cut short, another file, or another format's."""


def nbytes(dtype: str, shape) -> int:
    """The size in bytes of a tensor of *dtype* and *shape* (rows of whole blocks)."""
    count = int(np.prod(shape))
    if dtype == "F32":
        return 4 * count
    if shape[-1] % BLOCK:
        raise WeightsFileError(f"a {dtype} row must hold whole blocks of {BLOCK}, not {shape[-1]} weights")
    return count // BLOCK * BLOCK_DTYPES[dtype].itemsize


def dequantise(dtype: str, raw, shape) -> np.ndarray:
    """The float32 array of *shape* that the bytes *raw* (one tensor, or whole rows of one) of *dtype* hold.
    The arithmetic is gguf-py's (float16 scales to float32, then d * q + m), so the numbers are identical."""
    if dtype == "F32":
        return np.frombuffer(raw, dtype="<f4").reshape(shape)
    blocks = np.frombuffer(raw, dtype=BLOCK_DTYPES[dtype])  # (n_blocks,)
    n = len(blocks)
    if dtype == "Q8_0":
        q = blocks["qs"].astype(np.float32)  # (n_blocks, 32)
    else:
        q = np.empty((n, 2, BLOCK // 2), dtype=np.float32)  # (n_blocks, low/high nibbles, 16)
        for half in (0, 1):
            np.take(NIBBLES[half], blocks["qs"], out=q[:, half])
        q = q.reshape(n, BLOCK)  # weights 0-15, then 16-31
    q *= blocks["d"].astype(np.float32)[:, None]  # in place: no second array of the tensor's size
    if dtype == "Q4_1":
        q += blocks["m"].astype(np.float32)[:, None]
    return q.reshape(shape)


def unpack(dtype: str, raw, shape):
    """The blocks of a Q4_1 or Q8_0 tensor, unpacked: (q, d, m) with q (n_blocks, 32) one byte a weight (Q4_1's
    4-bit values, uint8, weights 0-15 then 16-31 as :func:`dequantise` orders them; Q8_0's int8), d and m
    (n_blocks, 1) float32 (m None for Q8_0). Kept, it saves a step the nibble lookup (a generation keeps its layers
    so: lessonpy.models.generate) for 1 byte a weight instead of float32's 4; :func:`from_unpacked` finishes it."""
    blocks = np.frombuffer(raw, dtype=BLOCK_DTYPES[dtype])
    if dtype == "Q8_0":
        return np.ascontiguousarray(blocks["qs"]), blocks["d"].astype(np.float32)[:, None], None
    qs = blocks["qs"]
    q = np.empty((len(blocks), BLOCK), dtype=np.uint8)
    np.bitwise_and(qs, 15, out=q[:, : BLOCK // 2])
    np.right_shift(qs, 4, out=q[:, BLOCK // 2:])
    return q, blocks["d"].astype(np.float32)[:, None], blocks["m"].astype(np.float32)[:, None]


def from_unpacked(q, d, m, shape) -> np.ndarray:
    """The float32 array of *shape* from :func:`unpack`'s (q, d, m): d * q + m, the numbers :func:`dequantise`
    gives, bit for bit (the same float32 operations in the same order)."""
    w = q.astype(np.float32)
    w *= d
    if m is not None:
        w += m
    return w.reshape(shape)


class QuantisedFile:
    """The tensors of a weights file in memory as bytes; :meth:`array` and :meth:`rows` dequantise on request."""

    def __init__(self, data: bytes, name: str = "the weights file"):
        if len(data) < 8:
            raise WeightsFileError(f"{name} is {len(data)} bytes: it is cut short (download it again)")
        n = int.from_bytes(data[:8], "little")
        if not 2 <= n <= len(data) - 8:
            raise WeightsFileError(f"{name} is not a SmolLM2 live weights file (its first bytes say a header of {n:,} bytes)")
        try:
            header = json.loads(bytes(data[8:8 + n]))
        except ValueError:
            raise WeightsFileError(f"{name} is not a SmolLM2 live weights file (its header is not JSON)") from None
        meta = header.pop("__metadata__", {}) if isinstance(header, dict) else {}
        if meta.get("format") != FORMAT:
            raise WeightsFileError(f"{name} has format {meta.get('format')!r}, not {FORMAT!r}: it is from another "
                                   "build; download it again")
        self.meta, self.tensors = meta, header
        self.body = memoryview(data)[8 + n:]
        end = max((info["data_offsets"][1] for info in header.values()), default=0)
        if len(self.body) < end:
            raise WeightsFileError(f"{name} ends after {8 + n + len(self.body):,} bytes of {8 + n + end:,}: "
                                   "it is cut short (download it again)")

    def _raw(self, name):
        info = self.tensors[name]
        start, end = info["data_offsets"]
        return info["dtype"], self.body[start:end], tuple(info["shape"])

    def unpacked(self, name: str):
        """Tensor *name* as :func:`unpack`'s (q, d, m) and its shape; an F32 tensor as (array, None, None) and its shape."""
        dtype, raw, shape = self._raw(name)
        return (dequantise(dtype, raw, shape), None, None) if dtype == "F32" else unpack(dtype, raw, shape), shape

    def array(self, name: str) -> np.ndarray:
        """Tensor *name* as float32, shape (out, in) for a matrix: a new array of ~4 bytes a weight."""
        dtype, raw, shape = self._raw(name)
        return dequantise(dtype, raw, shape)

    def rows(self, name: str, index) -> np.ndarray:
        """Rows *index* (a 1-d array of row numbers) of matrix *name* as float32 (len(index), in): only those
        rows are dequantised (the embedding of a text's tokens, not all 49,152)."""
        dtype, raw, shape = self._raw(name)
        per_row = nbytes(dtype, shape[1:])
        index = np.asarray(index, dtype=np.int64).reshape(-1)
        table = np.frombuffer(raw, dtype=np.uint8).reshape(shape[0], per_row)
        return dequantise(dtype, table[index].tobytes(), (len(index), *shape[1:]))


def pack(tensors: dict, meta: dict) -> bytes:
    """The file's bytes: *tensors* {name: (dtype, raw bytes, shape)} in order, after the header with *meta*
    (``format`` added). The build's writer; the layout is the one :class:`QuantisedFile` reads."""
    header, offset, blobs = {"__metadata__": {"format": FORMAT, **meta}}, 0, []
    for name, (dtype, raw, shape) in tensors.items():
        if len(raw) != nbytes(dtype, shape):
            raise ValueError(f"{name}: {len(raw)} bytes for a {dtype} tensor of shape {shape}")
        pad = -offset % ALIGN
        blobs += [b"\0" * pad, bytes(raw)]
        offset += pad
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":"), sort_keys=False).encode()
    text += b" " * (-(8 + len(text)) % ALIGN)  # the data starts on a boundary too
    return len(text).to_bytes(8, "little") + text + b"".join(blobs)
