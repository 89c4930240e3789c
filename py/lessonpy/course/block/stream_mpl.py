"""Draw a ``show_residual_stream`` payload with matplotlib, for Python outside the page (the lesson's notebook).

The page draws it in the residual-stream widget (``static/js/page/widgets/residual-stream/layers.js``); a notebook
has no widget, so :mod:`lessonpy.maths.notebook` routes the ``"arrays"`` events whose view is ``"residual-stream"``
here (:mod:`.show_stream` registers :func:`draw` in :data:`lessonpy.maths.show.FIGURES`). One figure, as the widget's chart: a row per depth (the embedding, then each layer), three bars on one log
scale, the lengths of what the layer's attention and MLP wrote and of the stream after it, at the payload's
position; at the right the logit lens's top token there with its probability, the model's own prediction in bold.
The numbers are the payload's (:func:`lessonpy.course.block.show_stream.build_stream_payload`); this only draws.
"""

from __future__ import annotations

import numpy as np

from ...maths import colormaps

#: one depth's height, in inches: 31 rows of SmolLM2 fit a notebook's screen
ROW = 0.22


def draw(payload: dict):
    """Draw one payload; return the matplotlib Figure (None for an error event: the cell shows the message)."""
    if "error" in payload or "norms" not in payload:
        return None
    import matplotlib.pyplot as plt  # loaded on first use

    at, L = payload["position"], payload["layers"]
    norms, lens = payload["norms"], payload["lens"][str(at)]
    depth = np.arange(L + 1)
    lengths = {"attention wrote": [np.nan, *np.asarray(norms["attn"])[:, at]],
               "MLP wrote": [np.nan, *np.asarray(norms["mlp"])[:, at]],
               "stream's length": np.asarray(norms["stream"])[:, at]}
    colours = colormaps.listed("sequential")([0.25, 0.55, 0.85])
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + ROW * (L + 1)), layout="constrained")
    for k, ((name, values), colour) in enumerate(zip(lengths.items(), colours)):
        ax.barh(depth + (k - 1) * 0.28, values, height=0.26, color=colour, label=name)
    ax.set_xscale("log")
    ax.set_yticks(depth, ["embed", *map(str, range(L))])
    ax.set_ylim(L + 0.6, -0.6)  # the embedding at the top, as on the page
    ax.set_xlabel("length (L2 norm), log scale")
    ax.set_ylabel("layer")
    final = lens["final"]
    for r, row in enumerate(lens["top"]):
        token, p = row[0]
        ax.annotate(f"{token!r} {p:.2f}", (1.01, r), xycoords=("axes fraction", "data"), va="center", fontsize=8,
                    fontweight="bold" if token == final else "normal")
    fig.legend(loc="outside lower center", ncols=3, fontsize=8)  # clear of the bars
    title = payload.get("title") or "Your residual stream"
    ax.set_title(f"{title} at {payload['tokens'][at]!r} (position {at}); lens: top token, p", fontsize=10)
    return fig
