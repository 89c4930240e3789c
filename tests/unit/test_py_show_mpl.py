"""show_attention outside the page: the payload it checked, drawn with matplotlib (Agg, no display)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from lessonpy.maths import show_mpl  # noqa: E402
from lessonpy.runtime import bridge  # noqa: E402
from lessonpy.maths.show import ShowError, show_attention  # noqa: E402


def payload_of(**arrays):
    """What show_attention emits for *arrays* (recorded: no page, no sink)."""
    bridge.install_sink(None)
    before = len(bridge.recorded)
    show_attention(**arrays)
    assert len(bridge.recorded) == before + 1
    return bridge.recorded[-1][1]


def axis(fig, title):
    return next(ax for ax in fig.axes if ax.get_title().startswith(title))


def test_the_heatmaps_and_the_query_row_show_the_readers_arrays_with_token_labels():
    rng = np.random.default_rng(1)
    Q, K = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    payload = payload_of(Q=Q, K=K, tokens=["a", "cat", "sat"], title="mine")
    fig = show_mpl.draw(payload)
    scores_ax, weights_ax, row_ax = axis(fig, "scores"), axis(fig, "weights"), axis(fig, "query 0 (a)")
    weights = payload["arrays"]["weights"]
    assert [t.get_text() for t in weights_ax.get_xticklabels()] == ["a", "cat", "sat"]
    assert [t.get_text() for t in scores_ax.get_yticklabels()] == ["a", "cat", "sat"]
    np.testing.assert_allclose(weights_ax.images[0].get_array(), weights)
    np.testing.assert_allclose([bar.get_height() for bar in row_ax.patches], weights[0])
    assert fig._suptitle.get_text() == "mine"


def test_weights_alone_draw_without_a_scores_panel_and_another_row_can_be_chosen():
    w = np.array([[0.5, 0.5], [0.1, 0.9]])
    fig = show_mpl.draw(payload_of(weights=w), row=1)
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == ["weights", "query 1 (t1): its weights"]
    np.testing.assert_allclose([bar.get_height() for bar in axis(fig, "query 1").patches], w[1])


def test_an_error_event_draws_nothing_the_error_is_raised_in_the_cell():
    bridge.install_sink(None)
    with pytest.raises(ShowError):
        show_attention(weights=[[2.0, 0.0], [0.0, 1.0]])
    event = bridge.recorded[-1][1]
    assert "error" in event and show_mpl.draw(event) is None


def test_with_values_the_output_gets_a_panel_of_its_own():
    rng = np.random.default_rng(2)
    Q, K, V = rng.standard_normal((4, 8)), rng.standard_normal((4, 8)), rng.standard_normal((4, 3))
    payload = payload_of(Q=Q, K=K, V=V)
    fig = show_mpl.draw(payload)
    out = axis(fig, "out")
    np.testing.assert_allclose(out.images[0].get_array(), payload["arrays"]["out"])
    assert [t.get_text() for t in out.get_yticklabels()] == ["t0", "t1", "t2", "t3"]
    assert sum(ax.get_visible() and bool(ax.get_title()) for ax in fig.axes) == 4


def test_in_a_notebook_the_figure_takes_the_title_and_row_of_the_page_view_it_targets():
    import matplotlib.pyplot as plt
    from lessonpy.maths import notebook

    plt.close("all")
    notebook._new_cell()
    notebook.page_views({"cat": {"title": "Built by hand", "row": 2}})
    bridge.install_sink(notebook._sink)
    try:
        w = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0], [0.1, 0.1, 0.8]])
        show_attention(weights=w, tokens=["a", "b", "c"], target="cat")
    finally:
        bridge.install_sink(None)
        notebook.views.clear()
    fig = plt.gcf()
    assert fig._suptitle.get_text() == "Built by hand"
    np.testing.assert_allclose([bar.get_height() for bar in axis(fig, "query 2 (c)").patches], w[2])


def test_in_a_notebook_the_same_arrays_sent_to_two_views_make_one_figure_per_cell():
    import matplotlib.pyplot as plt
    from lessonpy.maths import notebook

    w = np.array([[0.5, 0.5], [0.2, 0.8]])
    plt.close("all")
    notebook._new_cell()
    bridge.install_sink(notebook._sink)
    try:
        for view in ("view-a", "view-b"):  # the lesson's `show` cell feeds a linked view and a step-through
            show_attention(weights=w, tokens=["a", "b"], target=view)
        assert len(plt.get_fignums()) == 1
        show_attention(weights=w[::-1], tokens=["a", "b"], target="view-a")  # other arrays: another picture
        assert len(plt.get_fignums()) == 2
        notebook._new_cell()  # IPython's pre_run_cell: the next cell draws its own figures again
        show_attention(weights=w, tokens=["a", "b"], target="view-a")
        assert len(plt.get_fignums()) == 3
    finally:
        bridge.install_sink(None)
        notebook._new_cell()
        plt.close("all")


@pytest.mark.parametrize("given", ["masked scores", "weights and causal=True"])
def test_a_causal_heads_future_is_grey_in_the_weights_too(given):
    """A key after its query is masked, not a weight of 0: empty in both heatmaps (drawn in the masked grey),
    with no number written in it."""
    w = np.array([[1.0, 0.0, 0.0], [0.4, 0.6, 0.0], [0.2, 0.3, 0.5]])
    with np.errstate(divide="ignore"):
        scores = np.where(np.tril(np.ones((3, 3), dtype=bool)), np.log(w), -np.inf)
    payload = payload_of(scores=scores) if given == "masked scores" else payload_of(weights=w, causal=True)
    fig = show_mpl.draw(payload)
    weights_ax = axis(fig, "weights")
    shown = weights_ax.images[0].get_array()
    future = np.triu(np.ones((3, 3), dtype=bool), k=1)
    assert np.ma.getmaskarray(np.ma.masked_invalid(shown))[future].all()
    np.testing.assert_allclose(np.asarray(shown)[~future], w[~future], atol=1e-6)
    assert len(weights_ax.texts) == 6  # the 6 weights the queries may give; none in the 3 masked cells
    assert weights_ax.images[0].cmap.get_bad()[:3] == pytest.approx(matplotlib.colors.to_rgb(show_mpl.MASKED))
