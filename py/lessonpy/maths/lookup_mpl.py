"""Draw a ``show_lookup`` payload with matplotlib, for Python outside the page.

The page draws the lookup on a canvas with a temperature slider; a notebook has neither, so
:mod:`lessonpy.maths.notebook` routes the ``"arrays"`` events whose view is ``"lookup"`` here, and one
figure shows the lookup at the lookup cell's four temperatures side by side: keys as points
labelled with their index and value, each dot's area its weight, the query as an arrow, and the
answer above each panel. The payload is the one :func:`lessonpy.maths.lookup.show_lookup` built and
checked (the numbers are its, picked off its grid); this module only draws.
"""

from __future__ import annotations

import numpy as np

from . import colormaps

#: The temperatures drawn: the lookup cell's spreads 1, 4, 16, 64 (τ = 1 / spread), all on the grid.
SHOWN = (1.0, 1 / 4, 1 / 16, 1 / 64)
#: A whole weight of 1 as a marker's area, in points².
FULL = 900.0


def draw(payload: dict):
    """Draw one lookup payload; return the matplotlib Figure (None for an error event)."""
    if "error" in payload or "arrays" not in payload:
        return None  # show_lookup raises ShowError with the message: the cell shows it
    import matplotlib.pyplot as plt  # loaded on first use: pages that never plot never pay for it

    a = {name: np.asarray(v, dtype=np.float64) for name, v in payload["arrays"].items()}
    keys, query, values, temperatures = a["keys"], a["query"], a["values"], a["temperatures"]
    fig, axes = plt.subplots(1, len(SHOWN), figsize=(3.2 * len(SHOWN), 3.4), layout="constrained")
    colour = colormaps.listed("sequential")(0.85)  # the weights' colour map, as the page's heatmaps
    span = np.vstack([keys, query, [0.0, 0.0]])
    lo, hi = span.min(axis=0), span.max(axis=0)
    margin = 0.25 * max(float((hi - lo).max()), 1e-9)
    for ax, tau in zip(axes, SHOWN):
        i = int(np.argmin(np.abs(np.log(temperatures) - np.log(tau))))
        weights = a["weights"][i]
        ax.axhline(0, color="0.85", lw=0.8, zorder=0)
        ax.axvline(0, color="0.85", lw=0.8, zorder=0)
        ax.scatter(keys[:, 0], keys[:, 1], s=FULL, facecolors="none", edgecolors="0.6", linestyles="--")
        ax.scatter(keys[:, 0], keys[:, 1], s=FULL * weights, color=colour)  # area ∝ weight
        ax.scatter(keys[:, 0], keys[:, 1], s=6, color="black")  # where each key is, whatever its weight
        for j, (x, y) in enumerate(keys):
            ax.annotate(f"k{j} → {values[j]:g}\n{weights[j]:.3f}", (x, y), xytext=(19, 0),
                        textcoords="offset points", va="center", fontsize=8)
        ax.annotate("", xy=tuple(query), xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": "black"})
        ax.annotate("q", tuple(query), xytext=(4, 4), textcoords="offset points")
        ax.set_xlim(lo[0] - margin, hi[0] + 2 * margin)  # room for the labels on the right
        ax.set_ylim(lo[1] - margin, hi[1] + margin)
        ax.set_aspect("equal")
        ax.set_title(f"τ = {temperatures[i]:g} (spread {1 / temperatures[i]:g})\nanswer {a['answers'][i]:.2f}",
                     fontsize=9)
    if payload.get("title"):
        fig.suptitle(payload["title"])
    return fig
