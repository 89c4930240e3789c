"""lessonpy.runtime.figures in CPython (matplotlib's Agg): what a run's open figures become for the page."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from lessonpy.runtime.figures import close_figures, collect_figures  # noqa: E402
from lessonpy.runtime.limits import FIGURES_PER_RUN  # noqa: E402


@pytest.mark.filterwarnings("ignore:More than 20 figures")  # the point of the test
def test_a_run_shows_at_most_its_figures_and_says_how_many_more_there_were(capsys):
    try:
        for _ in range(FIGURES_PER_RUN + 5):
            plt.figure(figsize=(0.5, 0.5))
        images = collect_figures(dpi=10)
    finally:
        close_figures()
    assert len(images) == FIGURES_PER_RUN and all(png.startswith(b"\x89PNG") for png in images)
    said = capsys.readouterr().err.splitlines()
    assert said == [f"[5 more figures were not shown: a run shows at most {FIGURES_PER_RUN}; "
                    "plt.close() the ones you do not need]"]


def test_a_few_figures_all_reach_the_page(capsys):
    try:
        plt.figure(figsize=(0.5, 0.5))
        images = collect_figures(dpi=10)
    finally:
        close_figures()
    assert len(images) == 1 and capsys.readouterr().err == ""
