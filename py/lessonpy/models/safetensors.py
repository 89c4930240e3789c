"""Read a safetensors file (MiniLM's weights) into NumPy arrays, without the safetensors package
(Pyodide does not ship it, and the format is simple enough to read in a dozen lines)."""

from __future__ import annotations

import json

import numpy as np

DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(data: bytes) -> dict:
    """safetensors: 8 bytes (little-endian header length), a JSON header, then raw little-endian buffers.
    Returns name -> float32 array (float16 files too: the sums are done in float32)."""
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    body = memoryview(data)[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(body[start:end], dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
        # compute in fp32 whatever the file stores (integer buffers such as position ids stay as they are)
        out[name] = array.astype(np.float32) if array.dtype.kind == "f" else array
    return out
