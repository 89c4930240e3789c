"""The lessonpy wheel: byte-identical for identical sources, and readable like the rest of the site."""

from __future__ import annotations

import stat
import zipfile

from sitebuild.project import PY_DIR
from sitebuild.wheel import build_wheel


def test_the_wheel_is_reproducible_readable_by_everyone_and_holds_lessonpy(tmp_path):
    first = build_wheel(PY_DIR, tmp_path / "a")
    second = build_wheel(PY_DIR, tmp_path / "b")
    assert first.read_bytes() == second.read_bytes()
    assert stat.S_IMODE(first.stat().st_mode) == 0o644  # flit leaves 0600: a copying host would refuse it
    names = zipfile.ZipFile(first).namelist()
    assert "lessonpy/__init__.py" in names and any(n.endswith(".dist-info/RECORD") for n in names)
