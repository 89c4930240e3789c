"""File helpers of the build: hashes, atomic writes, hard links, JSON files the pages read, a tool's error output."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@contextlib.contextmanager
def atomic_target(final: Path) -> Iterator[Path]:
    """Yield a temporary path beside final and move it onto final only if the block succeeds."""
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    # mkstemp makes the file private; the site's files must be readable by whatever serves them.
    tmp.chmod(0o644)
    try:
        yield tmp
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)


def link_or_copy(src: Path, dst: Path) -> None:
    """Replace dst with a hard link to src, or a copy across file systems, never leaving a partial dst."""
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def write_json(path: Path, data) -> Path:
    """Write *data* to *path* as compact JSON (no spaces after separators: nobody reads the site's JSON by eye)."""
    path.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    return path


def tail(text: str, lines: int = 15) -> str:
    """Return the last lines of a tool's output, enough to see its error."""
    return "\n".join(text.strip().splitlines()[-lines:])
