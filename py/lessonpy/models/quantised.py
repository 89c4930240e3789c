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
tensor at a time from its path) and dequantises a tensor when asked; :class:`Blocks` keeps a tensor's blocks as the
file has them, with their scales widened to float32 once (smollm2.LiveWeights keeps every tensor so: 112 MB), and
either makes the float32 matrix or multiplies one row by it straight from the blocks.
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
#: blocks read from the file at a time when a tensor is kept: 32,768 are 655 kB of Q4_1, 1.1 MB of Q8_0
READ_BLOCKS = 1 << 15
#: where each tensor's bytes start (a multiple of this from the start of the data)
ALIGN = 32
#: the low nibble of each of 8 bytes: a Q4_1 block's 16 bytes read as two uint64 give 16 weights a mask (and a shift)
LOW_NIBBLES = np.uint64(0x0F0F0F0F0F0F0F0F)


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


def codes(dtype: str, qs) -> np.ndarray:
    """The integer codes of blocks *qs* (their ``qs`` field: Q4_1's (n, 16) packed bytes, Q8_0's (n, 32) int8) as
    float32 (n, 32), in the order of the block's weights (Q4_1: the 16 low nibbles, then the 16 high ones).

    Q4_1's nibbles are split 8 bytes at a time (a block's 16 bytes as two uint64, masked and shifted) and put side
    by side as 16-byte pieces; NumPy then widens one contiguous array: 0.6 ms for a 1536 x 576 matrix in Pyodide,
    where a lookup table took 22 ms and a mask and a shift per byte written into the float32 halves 3.6 ms
    (best of 15, docs/speed.md)."""
    qs = np.ascontiguousarray(qs)
    if dtype == "Q8_0":
        return qs.astype(np.float32)
    packed = qs.view(np.uint64)  # (n, 2): 8 bytes, 16 weights, each
    whole = np.empty((len(qs), 2), dtype="V16")  # a block's low nibbles, then its high ones, 16 bytes each
    whole[:, 0] = (packed & LOW_NIBBLES).view("V16")[:, 0]
    whole[:, 1] = ((packed >> np.uint64(4)) & LOW_NIBBLES).view("V16")[:, 0]
    return whole.view(np.uint8).reshape(len(qs), BLOCK).astype(np.float32)


def dequantise(dtype: str, raw, shape) -> np.ndarray:
    """The float32 array of *shape* that the bytes *raw* (one tensor, or whole rows of one) of *dtype* hold.
    The arithmetic is gguf-py's (float16 scales to float32, then d * q + m), so the numbers are identical."""
    if dtype == "F32":
        return np.frombuffer(raw, dtype="<f4").reshape(shape)
    blocks = np.frombuffer(raw, dtype=BLOCK_DTYPES[dtype])  # (n_blocks,)
    return Blocks(dtype, blocks["qs"], blocks["d"], blocks["m"] if dtype == "Q4_1" else None, shape).array()


class Blocks:
    """One tensor kept for a model's passes. A Q4_1 or Q8_0 matrix as its blocks' codes, as the file packs them
    (``q``: (n_blocks, 16) bytes of two 4-bit codes, or (n_blocks, 32) int8), and their scales ``d`` and minimums
    ``m`` (n_blocks, 1) widened from float16 to float32 once (NumPy widens float16 in software: at every use it
    took a fifth of a cached step): 0.75 bytes a weight (1.125 for Q8_0). An F32 tensor is its array (``q``,
    with ``d`` None). Read-only: every pass shares them, and a write would change the model for the rest."""

    def __init__(self, dtype, q, d, m, shape):
        self.dtype, self.shape = dtype, tuple(shape)
        self.q = np.ascontiguousarray(q)  # arrays of their own (unless they are already): the file's bytes can go
        self.d = None if d is None else d.astype(np.float32, copy=False).reshape(-1, 1)
        self.m = None if m is None else m.astype(np.float32, copy=False).reshape(-1, 1)
        for a in (self.q, self.d, self.m):
            if a is not None:
                a.setflags(write=False)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.q, self.d, self.m) if a is not None)

    def _widened(self, blocks, rows) -> np.ndarray:
        """Blocks *blocks* (a slice or an index array) as the float32 matrix of their *rows*: d * q + m, the
        numbers gguf-py gives, bit for bit (the same float32 operations in the same order)."""
        w = codes(self.dtype, self.q[blocks])
        w *= self.d[blocks]
        if self.m is not None:
            w += self.m[blocks]
        return w.reshape(rows, self.shape[-1])

    def array(self) -> np.ndarray:
        """The tensor as float32: a new array of 4 bytes a weight (the same view of an F32 tensor)."""
        if self.d is None:
            return self.q.reshape(self.shape)
        return self._widened(slice(None), self.shape[0]).reshape(self.shape)

    def rows(self, index) -> np.ndarray:
        """Rows *index* of the matrix (a 1-d array of row numbers, or a slice) as float32 (rows, in): only those
        rows are made (a text's embeddings, or a chunk of the output matrix)."""
        if self.d is None:
            return self.q[index]
        if isinstance(index, slice):
            first, stop, _ = index.indices(self.shape[0])
            n = max(stop - first, 0)
            return self._widened(slice(first * self._per_row, (first + n) * self._per_row), n)
        index = np.asarray(index, dtype=np.int64).reshape(-1)
        return self._widened((index[:, None] * self._per_row + np.arange(self._per_row)).reshape(-1), len(index))

    @property
    def _per_row(self) -> int:
        return self.shape[1] // BLOCK  # blocks in a row

    def part(self, first: int, stop: int) -> "Blocks":
        """Rows first .. stop - 1 as a Blocks of their own (views: nothing copied), e.g. a chunk of the output
        matrix to multiply with :meth:`times`."""
        # an F32 tensor's q is its array, rows as they are; a quantised one's is its blocks, a row's after another
        blocks = slice(first, stop) if self.d is None else slice(first * self._per_row, stop * self._per_row)
        pick = lambda a: None if a is None else a[blocks]  # noqa: E731
        return Blocks(self.dtype, pick(self.q), pick(self.d), pick(self.m), (stop - first, self.shape[1]))

    def times(self, x) -> np.ndarray:
        """x (..., in) times the matrix (out, in): x @ W.T, (..., out), from the blocks. Each output is
        sum over blocks of d (q . x_block) + m sum(x_block): the codes are widened (a cast), but the matrix's
        d * q + m is never made. For one row (a cached step's one position) that is faster than widening the
        matrix first (a step 0.26 s against 0.72 in Pyodide, docs/speed.md); at two rows the two are even, and
        beyond, widening once is faster. The sums
        run in another order than x @ W.T's, so the results agree to float32 rounding, not bit for bit."""
        if self.d is None:
            return x @ self.q.T
        out, n = self.shape[0], self._per_row
        xb = x.reshape(-1, n, BLOCK)  # (N, n blocks, 32): x's numbers block by block
        z = np.einsum("obj,Nbj->Nob", codes(self.dtype, self.q).reshape(out, n, BLOCK), xb)  # (N, out, n): q . x
        y = np.einsum("Nob,ob->No", z, self.d.reshape(out, n))  # (N, out)
        if self.m is not None:
            y += xb.sum(-1) @ self.m.reshape(out, n).T  # (N, n) @ (n, out)
        return y.reshape(*x.shape[:-1], out)


class QuantisedFile:
    """The tensors of a weights file: its bytes, or a path whose tensors are read one at a time (so a model that
    keeps them as :class:`Blocks` never holds the whole file too). :meth:`array` dequantises a tensor on
    request, :meth:`blocks` keeps one."""

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

    def blocks(self, name: str) -> Blocks:
        """Tensor *name* as :class:`Blocks`, read :data:`READ_BLOCKS` blocks at a time into the kept arrays: the
        file's bytes of a tensor are never whole in memory beside them (the 30 MB of the embedding's made Python's
        memory, which never shrinks, 40 MB larger, measured)."""
        info = self.tensors[name]
        dtype, shape = info["dtype"], tuple(info["shape"])
        start, end = (self._body + offset for offset in info["data_offsets"])
        if dtype == "F32":
            return Blocks(dtype, dequantise(dtype, self._read(start, end), shape).copy(), None, None, shape)
        kind = BLOCK_DTYPES[dtype]
        n = (end - start) // kind.itemsize
        q = np.empty((n, *kind["qs"].shape), dtype=kind["qs"].base)
        d = np.empty((n, 1), dtype=np.float32)
        m = np.empty((n, 1), dtype=np.float32) if dtype == "Q4_1" else None
        for first in range(0, n, READ_BLOCKS):
            stop = min(first + READ_BLOCKS, n)
            part = np.frombuffer(self._read(start + first * kind.itemsize, start + stop * kind.itemsize), dtype=kind)
            q[first:stop], d[first:stop, 0] = part["qs"], part["d"]
            if m is not None:
                m[first:stop, 0] = part["m"]
        return Blocks(dtype, q, d, m, shape)

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
