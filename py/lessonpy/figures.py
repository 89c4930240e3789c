"""Hand matplotlib figures made in a cell to the page as PNG bytes.

The worker has no DOM, so matplotlib uses the Agg backend there and every figure a cell
leaves open is rendered to PNG after the cell runs, then closed (a notebook's "inline"
behaviour). The worker renders them inside the cell's run, where Stop can interrupt,
and closes them whatever happened (see :func:`lessonpy.runner.run_cell`). Nothing is
imported here unless the cell itself imported matplotlib, so pages that never plot never
pay for loading it.
"""

from __future__ import annotations

import io
import sys
import warnings


def quiet_show() -> None:
    """Let plt.show() do nothing quietly: figures reach the page after the cell anyway.

    Under Agg, matplotlib warns "FigureCanvasAgg is non-interactive, and thus cannot be shown",
    which would only confuse a reader who wrote plt.show() as every tutorial does.
    """
    warnings.filterwarnings("ignore", message=r"FigureCanvasAgg is non-interactive", category=UserWarning)


def collect_figures(dpi: int = 100) -> list[bytes]:
    """Render every open pyplot figure to PNG and return the bytes (close_figures closes them)."""
    if "matplotlib.pyplot" not in sys.modules:
        return []
    plt = sys.modules["matplotlib.pyplot"]
    images = []
    for number in plt.get_fignums():
        buffer = io.BytesIO()
        plt.figure(number).savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        images.append(buffer.getvalue())
    return images


def close_figures() -> None:
    """Close every open pyplot figure, so the next cell starts without them."""
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
