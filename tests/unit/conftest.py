"""The unit layer: CPython tests of py/ and sitebuild/ (and the lessons' numbers), no browser. A few of their
tests need the real site or a fresh Python and say so (slow); the rest is the fast layer."""

import sys

import pytest


@pytest.fixture
def bridge_events():
    """The events lessonpy.runtime.bridge records during one test (no page, so no sink: kept in a list)."""
    from lessonpy.runtime import bridge

    bridge.install_sink(None)
    bridge.recorded.clear()
    yield bridge.recorded
    bridge.recorded.clear()


@pytest.fixture
def x():
    """The scaffold tests' input (Lessons 4 and 5's modules): a (2, 8, 768) batch, GPT-2 small's width."""
    import torch

    return torch.randn(2, 8, 768, generator=torch.Generator().manual_seed(1))


@pytest.fixture(autouse=True)
def no_figure_left_open():
    """No test leaves a matplotlib figure open for the next: one left open (test_py_show_mpl.py's are)
    would count among the next test's run's figures, in whichever file a worker happens to run next."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
