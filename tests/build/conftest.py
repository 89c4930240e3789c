"""The build layer's shared fixtures: the pinned model files from the cache, and the models read from them, once
per session (SmolLM2 dequantised takes seconds and 540 MB). Tests never download: a missing file means
``./setup.sh --test`` was not run, and the test fails saying so (SKIP_MODELS=1 skips the files that use them)."""

import pytest

from sitebuild.realheads import weights


def _pinned(get):
    """A pinned model file from the cache; missing means ./setup.sh --test was not run: fail, saying so."""
    try:
        return get(download=False)
    except weights.WeightsError as exc:
        pytest.fail(f"{exc} (or set SKIP_MODELS=1)")


@pytest.fixture(scope="session")
def minilm_folder():
    return _pinned(weights.minilm_dir)


@pytest.fixture(scope="session")
def gguf_path():
    return _pinned(weights.smollm2_gguf)


@pytest.fixture(scope="session")
def minilm_weights(minilm_folder):
    from lessonpy.models.safetensors import read_safetensors

    return read_safetensors((minilm_folder / "model.safetensors").read_bytes())


@pytest.fixture(scope="session")
def smol(gguf_path):
    """SmolLM2's dequantised float32 model (sitebuild.realheads.smollm2.Model)."""
    from sitebuild.realheads import smollm2

    return smollm2.cached(gguf_path)
