"""Package ``py/`` as a wheel the page unpacks into site-packages (and a laptop installs with pip)."""

from __future__ import annotations

import os
from pathlib import Path

from flit_core.wheel import make_wheel_in


def build_wheel(py_dir: Path, out_dir: Path) -> Path:
    """Build the lessonpy wheel from ``py_dir/pyproject.toml`` into *out_dir*; return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # A fixed timestamp makes the wheel byte-identical for identical sources, so the
    # content hash in the asset URL only changes when the Python really changed.
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    info = make_wheel_in(py_dir / "pyproject.toml", out_dir)
    path = Path(out_dir) / info.file.name
    # flit writes through a private temporary file (mode 0600); a host that copies permissions
    # would refuse to serve the wheel, so make it readable like every other file of the site.
    path.chmod(0o644)
    return path
