"""Python keeps to static/js/shared/protocol.js: it sends only the events defined there, with their fields.

The JavaScript side is held by tests/js/protocol.test.mjs (the checker itself) and by the browser
tests, whose pages record every message protocol.js does not define (runtime.protocolErrors).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from lessonpy.runtime import bridge
from lessonpy.maths.show import ShowError, show_attention

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def protocol():
    """protocol.js's Event names and FIELDS, read by Node from the module itself."""
    script = ('import("./static/js/shared/protocol.js").then((m) => '
              'console.log(JSON.stringify({events: Object.values(m.Event), fields: m.FIELDS})))')
    done = subprocess.run([shutil.which("node") or "node", "-e", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def test_python_sends_only_events_the_protocol_defines(protocol, bridge_events):
    assert set(bridge.EVENTS) <= set(protocol["events"])
    with pytest.raises(ValueError, match="not an event the page knows"):
        bridge.emit("show-error", {"message": "x"})


def test_show_attention_payloads_have_exactly_the_protocols_fields(protocol, bridge_events):
    required, optional = protocol["fields"]["event"]["arrays"]
    show_attention(weights=np.eye(3), tokens=["a", "b", "c"], title="t", target="v")
    with pytest.raises(ShowError):
        show_attention(weights=np.ones((2, 2)))
    assert [kind for kind, _ in bridge_events] == ["arrays", "arrays"]
    for _, payload in bridge_events:
        assert set(required) <= set(payload) <= set(required) | set(optional), sorted(payload)


def test_show_residual_stream_payloads_have_exactly_the_protocols_fields(protocol, bridge_events, tmp_path):
    from lessonpy.course.block.show_stream import show_residual_stream
    from lessonpy.models import smollm2
    from smollm2_random import random_folder

    m, tokenizer = smollm2.load(random_folder(tmp_path))
    rng = np.random.default_rng(0)
    writes = [{"attn": rng.standard_normal((3, m.width)), "mlp": rng.standard_normal((3, m.width))}]
    stream = rng.standard_normal((2, 3, m.width))
    show_residual_stream(stream=stream, writes=writes, tokens=["a", "b", "c"], model=m, tokenizer=tokenizer)
    with pytest.raises(ShowError):
        show_residual_stream(stream=stream[0], writes=writes, tokens=["a", "b", "c"], model=m, tokenizer=tokenizer)
    required, optional = protocol["fields"]["event"]["arrays"]
    assert [kind for kind, _ in bridge_events] == ["arrays", "arrays"]
    for _, payload in bridge_events:
        assert set(required) <= set(payload) <= set(required) | set(optional), sorted(payload)
