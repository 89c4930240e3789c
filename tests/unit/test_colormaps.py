"""The page and the notebook draw one array with one colour map (lessonpy.maths.colormaps): viridis for weights,
exactly matplotlib's, and the diverging map for signed values; a value gets the same colour in both."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib.colors import Normalize

from lessonpy.maths import colormaps

ROOT = Path(__file__).resolve().parents[2]
COLORMAP_JS = ROOT / "static" / "js" / "page" / "components" / "colormap.js"


def test_the_sequential_map_is_matplotlibs_viridis():
    viridis = np.round(np.asarray(matplotlib.colormaps["viridis"].colors) * 255).astype(np.uint8)
    assert np.array_equal(colormaps.table("sequential"), viridis)
    assert colormaps.table("sequential")[[0, 128, 255]].tolist() == [[68, 1, 84], [33, 145, 140], [253, 231, 37]]


def test_the_diverging_map_is_white_at_zero_blue_below_orange_above():
    table = colormaps.table("diverging").astype(int)
    assert table[128].min() > 240 and table[127].min() > 240
    low, high = table[0], table[255]
    assert low[2] > low[0] + 60 and high[0] > high[2] + 100


def page_colours(calls: list[tuple[str, float, float, float]]) -> list[list[int]]:
    """What colormap.js gives: each call (name, value, low, high) -> [r, g, b], run under Node."""
    script = (f"import({json.dumps(COLORMAP_JS.as_uri())}).then((m) => console.log(JSON.stringify("
              f"{json.dumps(calls)}.map(([name, v, lo, hi]) => name === 'sequential' ? m.sequential(v, lo, hi) "
              f": m.diverging(v, hi)))))")
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("name, low, high", [("sequential", 0.0, 1.0), ("diverging", -3.5, 3.5)])
def test_a_value_gets_the_same_colour_in_the_page_and_the_notebook(name, low, high):
    values = np.concatenate([np.linspace(low, high, 41), np.random.default_rng(0).uniform(low, high, 200)])
    notebook = colormaps.listed(name)(Normalize(low, high)(values), bytes=True)[:, :3].tolist()
    assert page_colours([(name, float(v), low, high) for v in values]) == notebook
