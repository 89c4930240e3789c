"""The page's pure JavaScript logic, tested by Node's own test runner (node --test).

CI runs only pytest, so this test runs the Node tests in tests/js/ and fails with their report.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

JS_TESTS = Path(__file__).resolve().parent / "js"


@pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")
def test_node_unit_tests_pass():
    files = sorted(str(p) for p in JS_TESTS.glob("*.test.mjs"))
    assert files, "no Node tests found"
    out = subprocess.run(["node", "--test", *files], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
