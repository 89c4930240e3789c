"""What bench/live_smollm2.py times, in CPython and in Pyodide: SmolLM2's live forward pass on 32 tokens (the
first, which reads the file, and the next), the last position's logits only, and steps with the KV cache.
The value of the last expression is a JSON string of seconds."""

import json
import sys
import time

sys.path.insert(0, "/home/pyodide")  # Pyodide: lessonpy copied there (CPython: on the path already)
from lessonpy.models import smollm2  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def run(folder=smollm2.FOLDER, steps=4):
    load, (W, tokenizer) = timed(lambda: smollm2.load(folder))
    ids = (tokenizer.encode("The cat sat on the mat because it was tired. " * 4))[:32]
    first, _ = timed(lambda: smollm2.forward(W, ids))
    tokenize, _ = timed(lambda: tokenizer.encode("A new text to tokenise, every word of it unseen so far."))
    nxt, _ = timed(lambda: smollm2.forward(W, ids))
    last, _ = timed(lambda: smollm2.forward(W, ids, keep=(), logits="last"))
    cache = smollm2.empty_cache(W)
    for token in ids[:8]:  # a prompt of 8 through the cache, then time the steps after it
        _, cache = smollm2.decode_step(W, token, cache)
    start = time.perf_counter()
    for token in ids[8:8 + steps]:
        _, cache = smollm2.decode_step(W, token, cache)
    step = time.perf_counter() - start
    return {"tokens": len(ids), "load": load, "first_forward": first, "next_forward": nxt, "tokenize": tokenize,
            "forward_last_logits_only": last, "decode_step": step / steps}


json.dumps(run()) if sys.platform == "emscripten" else None  # the Node script reads this value
