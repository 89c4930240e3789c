"""The pure JavaScript tests (tests/js/*.test.mjs) under `node --test`, so they count in pytest and CI.

Logic that needs no page (the message protocol, array checks, colour maps) is tested in Node:
in milliseconds, not through a browser. One pytest test runs them all and fails with Node's
report when any fails.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JS_TESTS = sorted((ROOT / "tests" / "js").glob("*.test.mjs"))


def test_node_tests_pass():
    node = shutil.which("node")
    assert node, "Node 20 is needed for the JavaScript tests (./setup.sh installs it)"
    assert JS_TESTS, "no tests/js/*.test.mjs found"
    done = subprocess.run([node, "--test", *map(str, JS_TESTS)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"node --test failed:\n{done.stdout}\n{done.stderr}"
