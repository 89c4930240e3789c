"""Sites the tests build: one shared by the whole session (build_once), and small ones of fixture lessons
(quick_build). A plain module, so that every layer imports it and none imports another's test module."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

CDN = "https://cdn.example.org/pyodide/v0.27.7/full/"
# A test that builds a site (quick_build's too: bundles, the wheel, the maths font, sidecars) takes seconds to tens
# of seconds on a busy machine: it is in the slow layer, so that the fast one stays CPython and Node unit tests.
SITE_BUILD = pytest.mark.slow


def session_folder(tmp_path_factory) -> Path:
    """A folder every worker of this test session shares (pytest-xdist gives each worker a temporary folder
    of its own, inside this one; without xdist it is the session's own)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(tmp_path_factory, name: str, make) -> Path:
    """The site `make(out_dir)` builds, built once for the whole test session into <session folder>/<name>/site:
    the first worker to ask builds it, the others wait for it and serve the same files (read-only)."""
    from filelock import FileLock

    folder = session_folder(tmp_path_factory) / name
    out, done = folder / "site", folder / "built"
    with FileLock(str(folder) + ".lock"):
        if not done.exists():
            folder.mkdir(exist_ok=True)
            make(out)
            done.touch()
    return out


def make_lessons(folder: Path, body: str = "```python run id=a\nx = 1\n```\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "one.md").write_text(f"---\ntitle: One\norder: 1\n---\n## Part\n{body}", encoding="utf-8")
    (folder / "course.yml").write_text(
        "title: Test course\nlessons:\n  - slug: zero\n    title: Zero\n  - slug: one\n  - slug: two\n    title: Two\n")
    return folder


def quick_build(tmp_path, lessons=None, **kwargs) -> Path:
    """Build with Pyodide from a (never contacted) CDN URL, so no Pyodide files are copied."""
    import build

    lessons = lessons or make_lessons(tmp_path / "lessons")
    opts = build.Options(lessons_dir=lessons, out_dir=tmp_path / "site", pyodide_url=CDN, log=lambda *_: None, **kwargs)
    return build.build(opts)


def sw_manifest(site: Path) -> dict:
    """The service worker's manifest in a built site (templates/sw.js)."""
    return json.loads(re.search(r"const MANIFEST = (\{.*?\});\n", (site / "sw.js").read_text()).group(1))


def page_config(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="page-config">(.*?)</script>', html, re.S)
    return json.loads(match.group(1))
