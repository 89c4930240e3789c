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

Dequantised to float32 the model would take about 540 MB. :class:`QuantisedFile` reads the file (its bytes, or a
tensor at a time from its path) and dequantises a tensor when asked; :class:`Unpacked`
keeps a tensor's blocks at a byte a weight, which a model's passes widen to float32 faster than the blocks
dequantise (smollm2.LiveWeights keeps every tensor so: 165 MB).
"""

from __future__ import annotations

import json
from pathlib import Path

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
    (n_blocks, 1) float32 (m None for Q8_0; widened from the file's float16 once, not at every use: NumPy
    converts float16 in software, and a cached step would spend a fifth of its time on it). New arrays: *raw* can go.
    :func:`from_unpacked` finishes them."""
    blocks = np.frombuffer(raw, dtype=BLOCK_DTYPES[dtype])
    d = blocks["d"].astype(np.float32)[:, None]
    if dtype == "Q8_0":
        return np.ascontiguousarray(blocks["qs"]), d, None
    qs = blocks["qs"]
    q = np.empty((len(blocks), BLOCK), dtype=np.uint8)
    np.bitwise_and(qs, 15, out=q[:, : BLOCK // 2])
    np.right_shift(qs, 4, out=q[:, BLOCK // 2:])
    return q, d, blocks["m"].astype(np.float32)[:, None]


def from_unpacked(q, d, m, shape) -> np.ndarray:
    """The float32 array of *shape* from :func:`unpack`'s (q, d, m): d * q + m, the numbers :func:`dequantise`
    gives, bit for bit (the same float32 operations in the same order)."""
    w = q.astype(np.float32)
    w *= d
    if m is not None:
        w += m
    return w.reshape(shape)


class Unpacked:
    """One tensor kept for a model's passes: a Q4_1 or Q8_0 matrix as :func:`unpack`'s (q, d, m), 1.25 bytes a
    weight (1.125 for Q8_0), which :meth:`array` turns into float32 with a cast, a product and a sum (3 times faster than
    :func:`dequantise`'s nibble lookup, measured: docs/speed.md); an F32 tensor as its array (q, with d None).
    Read-only: every pass shares them, and a write would change the model for the rest."""

    def __init__(self, q, d, m, shape):
        for a in (q, d, m):
            if a is not None:
                a.setflags(write=False)
        self.q, self.d, self.m, self.shape = q, d, m, tuple(shape)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.q, self.d, self.m) if a is not None)

    def array(self) -> np.ndarray:
        """The tensor as float32: a new array of 4 bytes a weight (the same view of an F32 tensor)."""
        return self.q if self.d is None else from_unpacked(self.q, self.d, self.m, self.shape)

    def rows(self, index) -> np.ndarray:
        """Rows *index* of the matrix (a 1-d array of row numbers, or a slice) as float32 (rows, in): only those
        rows are made (a text's embeddings, or a chunk of the output matrix)."""
        if self.d is None:
            return self.q[index]
        per_row = self.shape[1] // BLOCK  # blocks in a row
        if isinstance(index, slice):
            first, stop, _ = index.indices(self.shape[0])
            blocks = slice(first * per_row, stop * per_row)
            n = max(stop - first, 0)
        else:
            index = np.asarray(index, dtype=np.int64).reshape(-1)
            blocks = (index[:, None] * per_row + np.arange(per_row)).reshape(-1)
            n = len(index)
        return from_unpacked(self.q[blocks], self.d[blocks], None if self.m is None else self.m[blocks],
                             (n, self.shape[1]))


class QuantisedFile:
    """The tensors of a weights file: its bytes, or a path whose tensors are read one at a time (so a model that
    keeps them unpacked never holds the whole file too). :meth:`array` dequantises a tensor on request,
    :meth:`unpacked` unpacks one."""

    def __init__(self, source, name: str = "the weights file"):
        if isinstance(source, (str, Path)):
            self._file = open(source, "rb")  # noqa: SIM115 - read tensor by tensor; close() ends it
            size = self._file.seek(0, 2)
            self._file.seek(0)
            head = self._file.read(8)
        else:
            self._file, self._data = None, memoryview(source)
            size, head = len(source), bytes(self._data[:8])
        if size < 8:
            raise WeightsFileError(f"{name} is {size} bytes: it is cut short (download it again)")
        n = int.from_bytes(head, "little")
        if not 2 <= n <= size - 8:
            raise WeightsFileError(f"{name} is not a SmolLM2 live weights file (its first bytes say a header of {n:,} bytes)")
        try:
            header = json.loads(self._read(8, 8 + n))
        except ValueError:
            raise WeightsFileError(f"{name} is not a SmolLM2 live weights file (its header is not JSON)") from None
        meta = header.pop("__metadata__", {}) if isinstance(header, dict) else {}
        if meta.get("format") != FORMAT:
            raise WeightsFileError(f"{name} has format {meta.get('format')!r}, not {FORMAT!r}: it is from another "
                                   "build; download it again")
        self.meta, self.tensors, self._body = meta, header, 8 + n
        end = max((info["data_offsets"][1] for info in header.values()), default=0)
        if size - self._body < end:
            raise WeightsFileError(f"{name} ends after {size:,} bytes of {self._body + end:,}: "
                                   "it is cut short (download it again)")

    def _read(self, start, end) -> bytes:
        if self._file is None:
            return bytes(self._data[start:end])
        self._file.seek(start)
        return self._file.read(end - start)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def _raw(self, name):
        info = self.tensors[name]
        start, end = info["data_offsets"]
        return info["dtype"], self._read(self._body + start, self._body + end), tuple(info["shape"])

    def unpacked(self, name: str) -> Unpacked:
        """Tensor *name* unpacked (:class:`Unpacked`), its bytes read once and let go."""
        dtype, raw, shape = self._raw(name)
        if dtype == "F32":
            return Unpacked(dequantise(dtype, raw, shape).copy(), None, None, shape)
        return Unpacked(*unpack(dtype, raw, shape), shape)

    def array(self, name: str) -> np.ndarray:
        """Tensor *name* as float32, shape (out, in) for a matrix: a new array of ~4 bytes a weight."""
        dtype, raw, shape = self._raw(name)
        return dequantise(dtype, raw, shape)


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
