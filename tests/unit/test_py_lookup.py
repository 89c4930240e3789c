"""lessonpy.maths.lookup.show_lookup: check the reader's keys, query and values, compute the lookup at every
temperature of the grid, emit one payload for the page's lookup-view; and the ```widget lookup-view fence."""

from __future__ import annotations

import contextlib
import io
import json
import re

import numpy as np
import pytest

from lesson_source import ATTENTION
from lessonpy.runtime import limits
from lessonpy.maths.attention import softmax
from lessonpy.maths.lookup import EXAMPLE, build_lookup_payload, jacobian_norm, show_lookup, temperature_grid
from lessonpy.maths.show import ShowError
from sitebuild.pages.lessons import LessonError, read_lessons
from sitebuild.pages.render import RenderedLesson, render_lesson

KEYS, VALUES, QUERY = np.array(EXAMPLE["keys"]), np.array(EXAMPLE["values"]), np.array(EXAMPLE["query"])


@pytest.fixture(autouse=True)
def events(bridge_events):
    """The events show_lookup emits during one test."""
    return bridge_events


def last_payload(events):
    assert events, "nothing was emitted"
    kind, payload = events[-1]
    assert kind == "arrays"
    return payload


def step_of(temperatures, tau):
    [i] = np.flatnonzero(temperatures == np.float32(tau))
    return int(i)


# -----------------------------------------------------------------------------
# the grid and the payload


def test_the_grid_spans_the_limits_in_equal_ratios_with_the_lessons_spreads_on_it():
    t = temperature_grid()
    lo, hi = limits.WIDGET_LIMITS["lookup-view"]["temperature"]
    assert (t[0], t[-1]) == (lo, hi) == (1 / 64, 4.0)
    np.testing.assert_allclose(t[1:] / t[:-1], 2 ** 0.25)  # log-spaced: four steps per doubling
    for spread in (1, 4, 16, 64):  # the lookup cell's spreads, exactly
        assert 1 / spread in t


def test_payload_structure(events, capsys):
    assert show_lookup(keys=KEYS, query=QUERY, values=VALUES, title="Lookup", target="soft") is None
    assert capsys.readouterr() == ("", "")  # prints nothing
    assert len(events) == 1
    p = last_payload(events)
    assert set(p) == {"view", "title", "target", "arrays", "stats"}
    assert (p["view"], p["title"], p["target"]) == ("lookup", "Lookup", "soft")
    n = len(temperature_grid())
    shapes = {"keys": (3, 2), "query": (2,), "values": (3,), "scores": (3,), "temperatures": (n,),
              "weights": (n, 3), "answers": (n,), "jacobian_norm": (n,)}
    assert {k: a.shape for k, a in p["arrays"].items()} == shapes
    assert all(a.dtype == np.float32 and a.flags.c_contiguous for a in p["arrays"].values())
    assert p["stats"] == {"N": 3, "steps_per_doubling": 4, "best": [0], "hard_answer": 10.0, "plain_average": 20.0}
    json.dumps(p["stats"])  # plain data: it crosses to the page as a JS object


def test_weights_are_the_softmax_of_the_scores_over_each_temperature():
    a = build_lookup_payload(keys=KEYS, query=QUERY, values=VALUES)["arrays"]
    scores = KEYS @ QUERY
    np.testing.assert_allclose(a["scores"], scores, rtol=1e-6)
    for i, tau in enumerate(temperature_grid()):
        p = softmax(scores / tau)
        np.testing.assert_allclose(a["weights"][i], p, atol=1e-6)
        assert a["answers"][i] == pytest.approx(p @ VALUES, rel=1e-6)
    np.testing.assert_allclose(a["weights"].sum(axis=-1), 1, atol=1e-6)


def test_the_jacobians_size_is_the_lookup_cells():
    """The cell prints ‖np.diag(p) - np.outer(p, p)‖ at spreads 1, 4, 16, 64: the same numbers at τ = 1/spread."""
    a = build_lookup_payload(keys=KEYS, query=QUERY, values=VALUES)["arrays"]
    t = a["temperatures"]
    for spread in (1, 4, 16, 64):
        p = softmax(spread * (KEYS @ QUERY))
        i = step_of(t, 1 / spread)
        assert a["jacobian_norm"][i] == pytest.approx(np.linalg.norm(np.diag(p) - np.outer(p, p)), rel=1e-5)
        assert a["answers"][i] == pytest.approx(p @ VALUES, rel=1e-5)
    p = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(jacobian_norm(p), [np.linalg.norm(np.diag(r) - np.outer(r, r)) for r in p])


def test_low_temperature_is_a_hard_lookup_and_high_flattens_toward_the_average():
    a = build_lookup_payload(keys=KEYS, query=QUERY, values=VALUES)["arrays"]
    w, answers, size = a["weights"], a["answers"], a["jacobian_norm"]
    assert w[0].argmax() == 0 and w[0, 0] > 0.999  # τ = 1/64: key 0 alone, like a dict
    assert answers[0] == pytest.approx(10, abs=0.01) and size[0] < 1e-3  # and no gradient
    one = step_of(a["temperatures"], 1)
    assert abs(answers[-1] - 20) < abs(answers[one] - 20)  # τ = 4: nearer the plain average
    assert np.all(np.diff(w[:, 0]) <= 1e-7)  # the best key's weight only falls as τ grows
    assert w[-1].max() - w[-1].min() < w[one].max() - w[one].min()


def test_a_tie_shares_the_hard_lookup():
    p = build_lookup_payload(keys=[[1, 0], [1, 0], [0, 1]], query=[1, 0], values=[10, 30, 50])
    assert p["stats"]["best"] == [0, 1] and p["stats"]["hard_answer"] == 20.0
    assert p["arrays"]["answers"][0] == pytest.approx(20, abs=1e-3)


def test_accepts_lists_ints_and_float32(events):
    show_lookup(keys=[[1, 0], [0, 1]], query=np.array([2, 1], dtype=np.int64), values=np.float32([1.5, 2.5]))
    a = last_payload(events)["arrays"]
    np.testing.assert_array_equal(a["scores"], [2, 1])
    show_lookup(keys=[[3, 4]], query=[1, 1], values=[7])  # one key: always all the weight
    a = last_payload(events)["arrays"]
    np.testing.assert_array_equal(a["weights"], 1)
    np.testing.assert_array_equal(a["jacobian_norm"], 0)


# -----------------------------------------------------------------------------
# what the reader is told when the arrays cannot be drawn


GOOD = {"keys": KEYS, "query": QUERY, "values": VALUES}
MANY = limits.WIDGET_LIMITS["lookup-view"]["keys"][1] + 1


@pytest.mark.parametrize("change, message", [
    ({"keys": [1.0, 0.0, 0.5]}, r"keys: expected an \(N, 2\) array, one 2-D point per row, got shape \(3,\)$"),
    ({"keys": [1.0, 0.0]}, r"got shape \(2,\); one key is \[\[x, y\]\]"),
    ({"keys": np.ones((3, 3))}, r"keys: expected an \(N, 2\) array.*got shape \(3, 3\)"),
    ({"keys": np.ones((MANY, 2)), "values": np.ones(MANY)}, rf"keys: {MANY} keys is more than this picture draws \({MANY - 1}\)"),
    ({"query": [[1.0, 0.2]]}, r"query: expected one 2-D point, shape \(2,\), got shape \(1, 2\) \(query.ravel\(\) makes it one\)"),
    ({"query": [1.0, 0.2, 0.0]}, r"query: expected one 2-D point, shape \(2,\), got shape \(3,\)$"),
    ({"values": [10.0, 20.0]}, r"values: got 2 values for 3 keys; pass one value per key"),
    ({"values": [[10.0], [20.0], [30.0]]}, r"values: expected one number per key, shape \(3,\), got shape \(3, 1\) \(values.ravel"),
    ({"keys": [[1.0, 0.0], [np.nan, 1.0], [0.7, 0.7]]}, r"keys: contains nan at row 1, column 0; pass finite numbers"),
    ({"query": [1.0, np.inf]}, r"query: contains inf at entry 1; pass finite numbers"),
    ({"values": [10.0, 1e39, 30.0]}, r"values: holds values as large as 1e\+39, too large to draw"),
    ({"keys": [[1e30, 0.0], [0.0, 1.0], [0.7, 0.7]], "query": [1e30, 0.0]}, r"keys @ query \(computed from your arrays\): holds values as large as 1e\+60"),
    ({"keys": "abc"}, r"keys: expected numbers, got a str"),
    ({"values": [True, False, True]}, r"values: got True/False values; pass numbers$"),
    ({"keys": [[1.0, 0.0], [0.0]]}, r"keys: rows of different lengths"),
    ({"values": None}, r"nothing to look up without values: pass keys= \(N, 2\), query= \(2,\) and values= \(N,\)"),
    ({"keys": None, "query": None}, r"nothing to look up without keys and query"),
    ({"title": 3}, r"title: expected a string, got int"),
    ({"target": ["soft"]}, r"target: expected a string naming a picture, got list"),
])
def test_bad_arrays_raise_one_line_and_tell_the_page(events, change, message):
    kwargs = {**GOOD, **change}
    with pytest.raises(ShowError, match=message) as info:
        show_lookup(**kwargs)
    text = str(info.value)
    assert "\n" not in text
    payload = last_payload(events)
    assert payload["view"] == "lookup" and payload["error"] == text and "arrays" not in payload
    assert payload["target"] == (kwargs.get("target") if isinstance(kwargs.get("target"), str) else None)


# -----------------------------------------------------------------------------
# the fence and the build's picture


def render(tmp_path, body: str) -> RenderedLesson:
    (tmp_path / "w.md").write_text(f"---\ntitle: W\n---\n\nText.\n\n{body}", encoding="utf-8")
    [lesson] = read_lessons(tmp_path)
    return render_lesson(lesson)


def data_block(rendered: RenderedLesson) -> dict:
    [block] = rendered.widgets.values()
    return json.loads(json.dumps(block))


def test_the_fence_embeds_the_lessons_example_computed_by_show_lookups_code(tmp_path):
    spec = data_block(render(tmp_path, "```widget lookup-view id=soft\ntemperature: 0.0625\n```\n"))
    assert (spec["name"], spec["id"]) == ("lookup-view", "soft")
    assert spec["options"] == {"title": None, "temperature": 0.0625}
    expected = build_lookup_payload(**EXAMPLE, target="soft")["arrays"]
    for name, array in spec["initial"]["arrays"].items():
        assert array["shape"] == list(expected[name].shape), name
        np.testing.assert_array_equal(np.float32(array["data"]), expected[name].ravel())
    assert spec["initial"]["view"] == "lookup" and spec["initial"]["target"] == "soft"
    assert data_block(render(tmp_path, "```widget lookup-view id=soft\n```\n"))["options"]["temperature"] == 1.0


def test_the_fence_refuses_a_temperature_off_the_slider_and_unknown_options(tmp_path):
    with pytest.raises(LessonError, match=r"temperature must be between 0.015625 and 4.0, got 8"):
        render(tmp_path, "```widget lookup-view id=soft\ntemperature: 8\n```\n")
    with pytest.raises(LessonError, match="temperature"):
        render(tmp_path, "```widget lookup-view id=soft\ntemprature: 1\n```\n")


def test_the_build_picture_is_the_lessons_lookup_cell():
    """The picture before Python runs must be what the lesson's cell looks up: EXAMPLE is its keys, values, query."""
    text = ATTENTION.read_text(encoding="utf-8")
    match = re.search(r"^```python run id=lookup\n(.*?)^```$", text, re.S | re.M)
    assert match, "the lesson has no `lookup` cell: lessonpy.maths.lookup.EXAMPLE (the lookup-view's picture) follows it"
    namespace = {"np": np, "softmax": softmax}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(match.group(1), namespace)  # noqa: S102 - the lesson's own cell
    for name in ("keys", "values", "query"):
        np.testing.assert_array_equal(namespace[name], EXAMPLE[name], err_msg=f"lookup.EXAMPLE[{name!r}]")


# -----------------------------------------------------------------------------
# outside the page: the notebook draws the payload with matplotlib


def test_outside_the_page_the_lookup_cells_four_temperatures_are_drawn():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lessonpy.maths import lookup_mpl, notebook

    payload = build_lookup_payload(**EXAMPLE, title="mine")
    fig = lookup_mpl.draw(payload)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["τ = 1 (spread 1)\nanswer 19.36", "τ = 0.25 (spread 4)\nanswer 16.99",
                      "τ = 0.0625 (spread 16)\nanswer 11.44", "τ = 0.015625 (spread 64)\nanswer 10.00"]
    assert fig._suptitle.get_text() == "mine"
    a = payload["arrays"]
    for ax, tau in zip(fig.axes, lookup_mpl.SHOWN):  # each dot's area is its weight at that temperature
        np.testing.assert_allclose(ax.collections[1].get_sizes() / lookup_mpl.FULL,
                                   a["weights"][step_of(a["temperatures"], tau)], rtol=1e-6)
    assert lookup_mpl.draw({"view": "lookup", "title": None, "target": None, "error": "keys: ..."}) is None
    plt.close("all")
    notebook._sink("arrays", payload)  # what %load_ext lessonpy.maths.notebook routes a show_lookup to
    assert len(plt.get_fignums()) == 1
    plt.close("all")
