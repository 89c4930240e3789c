"""Node.js for the build steps that run Pyodide under it and name their output after its version
(another Node may make other bytes): where it is, and that version."""

from __future__ import annotations

import shutil
import subprocess


class NodeError(Exception):
    """Node cannot be found or does not answer ``--version``."""


def node_and_version() -> tuple[str, str]:
    """The path of ``node`` on PATH and its ``--version``; NodeError says why when either is missing
    (an empty version would key nothing)."""
    node = shutil.which("node")
    if node is None:
        raise NodeError("`node` not found on PATH")
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30,
                                 check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise NodeError(f"`node --version` failed: {exc}") from exc
    if not version:
        raise NodeError("`node --version` printed nothing")
    return node, version
