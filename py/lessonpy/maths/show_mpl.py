"""Draw a ``show_attention`` payload with matplotlib, for Python outside the page.

The page draws the arrays on canvases; a Jupyter notebook (or any CPython) has no
canvas, so :mod:`lessonpy.maths.notebook` routes the same ``"arrays"`` events here. The
payload is the one :func:`lessonpy.maths.show.show_attention` built and checked, so the
validation and its messages stay in one place; this module only draws.

One figure per call, like the page's linked view: the weights as a heatmap with the
tokens on both axes, the scores and the output beside it when there are any, and one
query's row of weights as bars.
Nothing here picks a backend: in Jupyter the figure shows inline, under Agg it is
simply made, and :func:`draw` returns it either way.
"""

from __future__ import annotations

import numpy as np

from . import colormaps

#: Write each weight in its cell while the heatmap is this small (beyond, the numbers crowd).
ANNOTATE_MAX_T = 8
#: Masked cells: the page's grey (--attn-masked in static/css/components.css, light theme).
MASKED = "#8c959f"


def draw(payload: dict, row: int = 0, title: str | None = None):
    """Draw one attention payload; return the matplotlib Figure (None for an error event).

    *row* is the query whose weights become bars (the page lets the reader click one);
    *title* is the caption when the call gave none (the page's view has one).
    """
    if "error" in payload or "arrays" not in payload:
        return None  # show_attention raises ShowError with the message: the cell shows it
    import matplotlib.pyplot as plt  # loaded on first use: pages that never plot never pay for it

    arrays, tokens = payload["arrays"], payload["tokens"]
    weights = np.asarray(arrays["weights"], dtype=np.float64)  # (T, T)
    row = min(max(row, 0), weights.shape[0] - 1)
    # the page's linked view: scores, weights, the output, and one query's row
    heatmaps = [(name, np.asarray(arrays[name], dtype=np.float64)) for name in ("scores", "weights", "out")
                if name in arrays]
    panels = len(heatmaps) + 1
    nrows = 1 if panels <= 3 else 2
    ncols = -(-panels // nrows)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.8 * ncols, 3.4 * nrows), layout="constrained", squeeze=False)
    axes = list(axes.ravel())
    for ax, (name, values) in zip(axes, heatmaps):
        if name == "weights":  # a masked key's weight is 0 because its score is -inf: grey, as in the scores
            values = np.where(_hidden(payload, values.shape[0]) & (values == 0), -np.inf, values)
        _heatmap(fig, ax, name, values, tokens)
    _query_row(axes[len(heatmaps)], weights[row], tokens, row)
    for ax in axes[panels:]:
        ax.set_visible(False)
    caption = payload.get("title") or title or (f"show_attention → {payload['target']}" if payload.get("target") else None)
    if caption:
        fig.suptitle(caption)
    return fig


def _hidden(payload: dict, T: int) -> np.ndarray:
    """(T, T) True where a mask hides key j from query i: the scores' -inf, and the future of a causal head."""
    scores = payload["arrays"].get("scores")
    hidden = np.isneginf(np.asarray(scores)) if scores is not None else np.zeros((T, T), dtype=bool)
    if payload.get("causal"):
        hidden |= np.triu(np.ones((T, T), dtype=bool), k=1)
    return hidden


def _heatmap(fig, ax, name: str, values: np.ndarray, tokens: list[str]) -> None:
    """A matrix whose rows are the positions: (T, T) scores or weights (columns: the keys), or (T, d_v) out."""
    rows, cols = values.shape
    shown = np.where(np.isfinite(values), values, np.nan)  # a masked cell (-inf) shows in the masked grey
    # The page's maps and ranges (lessonpy.maths.colormaps): weights on viridis from 0 to 1; scores and outputs, signed,
    # on the diverging map, symmetric about 0 (white), as the page's views draw them.
    if name == "weights":
        cmap, vmin, vmax = colormaps.listed("sequential"), 0.0, 1.0
    else:
        finite = np.abs(values[np.isfinite(values)])
        span = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        cmap, vmin, vmax = colormaps.listed("diverging"), -span, span
    image = ax.imshow(shown, cmap=cmap.with_extremes(bad=MASKED), vmin=vmin, vmax=vmax,
                      aspect="auto" if rows != cols else None)
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_title(name)
    ax.set_yticks(range(rows), tokens)
    ax.set_ylabel("position" if name == "out" else "query")
    if name == "out":
        ax.set_xlabel("feature")
    else:
        ax.set_xticks(range(cols), tokens, rotation=90 if cols > 6 else 0)
        ax.set_xlabel("key")
    if rows <= ANNOTATE_MAX_T and cols <= ANNOTATE_MAX_T:
        for i in range(rows):
            for j in range(cols):
                if np.isfinite(values[i, j]):  # dark text on a light colour, light on a dark one
                    r, g, b, _ = image.cmap(image.norm(values[i, j]))
                    ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=7,
                            color="black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white")


def _query_row(ax, weights_row: np.ndarray, tokens: list[str], row: int) -> None:
    """Where one query sends its attention: one bar per key."""
    T = len(weights_row)
    ax.bar(range(T), weights_row, color="#3b6ea8")
    ax.set_ylim(0, 1)
    ax.set_xticks(range(T), tokens, rotation=90 if T > 6 else 0)
    ax.set_title(f"query {row} ({tokens[row]}): its weights")
    ax.set_ylabel("weight")
