#!/usr/bin/env python3
"""Benchmark: SmolLM2's live forward pass (lessonpy.models.smollm2, the 4-bit file dequantised layer by layer) on
32 tokens: the first pass, the next, the last position's logits only, and a step with the KV cache; in CPython,
and with --pyodide in Pyodide 0.27.7 under Node (the page's wasm NumPy, no browser), with the wasm memory it took.

    python3 bench/live_smollm2.py [--pyodide]

Needs the live files in the cache (python3 -m sitebuild.realheads.smollm2_live) and, for --pyodide, Pyodide's
assembled dist in .cache/dist/ (any build makes it). A benchmark, not a test: figures depend on the machine and its
load; docs/speed.md has the record.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "bench"))


def pyodide_dist() -> Path:
    """The newest assembled Pyodide dist folder of the cache that holds numpy's wheel."""
    found = sorted((ROOT / ".cache" / "dist").glob("0.27.7-*/numpy-*.whl"), key=lambda p: p.stat().st_mtime)
    if not found:
        sys.exit("no Pyodide dist in .cache/dist/: run python3 build.py once")
    return found[-1].parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pyodide", action="store_true", help="also time it in Pyodide under Node")
    args = parser.parse_args(argv)

    from live_smollm2_timing import run
    from sitebuild.node import node_and_version
    from sitebuild.realheads.smollm2_live import write_live

    folder = write_live(download=False)
    tracemalloc.start()
    in_cpython = run(folder)
    in_cpython["peak_bytes"] = tracemalloc.get_traced_memory()[1]  # NumPy's arrays, the file's bytes among them
    tracemalloc.stop()
    print("CPython:", json.dumps(in_cpython))
    if args.pyodide:
        done = subprocess.run([node_and_version()[0], str(ROOT / "bench" / "live_smollm2.mjs"), str(pyodide_dist()), str(ROOT / "py"),
                               str(folder), str(ROOT / "bench" / "live_smollm2_timing.py")],
                              capture_output=True, text=True, check=True)
        print("Pyodide (Node):", done.stdout.strip().splitlines()[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
