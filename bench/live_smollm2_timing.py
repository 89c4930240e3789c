"""What bench/live_smollm2.py times, in CPython and in Pyodide: SmolLM2's live forward pass on 32 tokens (the
first, which reads the file, and the next), the last position's logits only, and steps with the KV cache
(smollm2.decode_step), and a step without the cache (the pass over the text so far).
The value of the last expression is a JSON string of seconds."""

import json
import sys
import time

sys.path.insert(0, "/home/pyodide")  # Pyodide: lessonpy copied there (CPython: on the path already)
from lessonpy.models import smollm2  # noqa: E402


try:
    from node_cpu import seconds as cpu_seconds  # Pyodide under Node: the process's CPU time (live_smollm2.mjs)
except ImportError:
    cpu_seconds = time.process_time  # CPython: this process's
#: wall and CPU seconds of each step: on a shared machine the CPU time is the figure that does not depend on the load
FIGURES = {}


def timed(name, fn):
    wall, cpu = time.perf_counter(), cpu_seconds()
    out = fn()
    FIGURES[name] = {"wall": round(time.perf_counter() - wall, 3), "cpu": round(cpu_seconds() - cpu, 3)}
    return out


def run(folder=smollm2.FOLDER, steps=4):
    W, tokenizer = timed("load", lambda: smollm2.load(folder))
    ids = (tokenizer.encode("The cat sat on the mat because it was tired. " * 4))[:32]
    timed("first_forward_32", lambda: smollm2.forward(W, ids))
    timed("tokenize", lambda: tokenizer.encode("A new text to tokenise, every word of it unseen so far."))
    timed("next_forward_32", lambda: smollm2.forward(W, ids))
    timed("forward_32_last_logits_only", lambda: smollm2.forward(W, ids, keep=(), logits="last"))
    cache = smollm2.empty_cache(W)
    for token in ids[:8]:  # a prompt of 8 through the cache, then time the steps after it
        _, cache = smollm2.decode_step(W, token, cache)

    def steps_():
        nonlocal cache
        for token in ids[8:8 + steps]:
            _, cache = smollm2.decode_step(W, token, cache)

    timed(f"{steps}_decode_steps", steps_)
    FIGURES["kept_bytes"] = W.nbytes
    timed("one_step_without_cache", lambda: smollm2.forward(W, ids[:8 + steps + 1], keep=(), logits="last"))
    return {"tokens": len(ids), **FIGURES}


json.dumps(run()) if sys.platform == "emscripten" else None  # the Node script reads this value
