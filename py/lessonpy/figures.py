"""Hand matplotlib figures made in a cell to the page as PNG bytes.

The worker has no DOM, so matplotlib uses the Agg backend there and every figure a cell
leaves open is rendered to PNG after the cell runs, then closed (a notebook's "inline"
behaviour). Nothing is imported here unless the cell itself imported matplotlib, so
pages that never plot never pay for loading it.
"""

from __future__ import annotations

import io
import sys


def collect_figures(dpi: int = 100) -> list[bytes]:
    """Render every open pyplot figure to PNG, close them all, return the bytes."""
    if "matplotlib.pyplot" not in sys.modules:
        return []
    plt = sys.modules["matplotlib.pyplot"]
    images = []
    for number in plt.get_fignums():
        buffer = io.BytesIO()
        plt.figure(number).savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        images.append(buffer.getvalue())
    plt.close("all")
    return images
