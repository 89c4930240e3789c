"""Hand matplotlib figures made in a cell to the page as PNG bytes.

The worker has no DOM, so matplotlib uses the Agg backend there and every figure a cell
leaves open is rendered to PNG after the cell runs, then closed (a notebook's "inline"
behaviour). The worker renders them inside the cell's run, where Stop can interrupt,
and closes them whatever happened (see :func:`lessonpy.runtime.runner.run_cell`). Nothing is
imported here unless the cell itself imported matplotlib, so pages that never plot never
pay for loading it.
"""

from __future__ import annotations

import io
import sys
import warnings

from .limits import FIGURES_PER_RUN


def quiet_show() -> None:
    """Let plt.show() do nothing quietly: figures reach the page after the cell anyway.

    Under Agg, matplotlib warns "FigureCanvasAgg is non-interactive, and thus cannot be shown",
    which would only confuse a reader who wrote plt.show() as every tutorial does.
    """
    warnings.filterwarnings("ignore", message=r"FigureCanvasAgg is non-interactive", category=UserWarning)


def collect_figures(dpi: int = 100) -> list[bytes]:
    """Render the open pyplot figures to PNG and return the bytes (close_figures closes them): the first
    FIGURES_PER_RUN of them, and one line on stderr says how many more were left out (a loop of plt.figure()
    made hundreds of images of a MB each, every one rendered and sent)."""
    if "matplotlib.pyplot" not in sys.modules:
        return []
    plt = sys.modules["matplotlib.pyplot"]
    numbers = plt.get_fignums()
    if len(numbers) > FIGURES_PER_RUN:
        print(f"[{len(numbers) - FIGURES_PER_RUN:,} more figures were not shown: a run shows at most "
              f"{FIGURES_PER_RUN}; plt.close() the ones you do not need]", file=sys.stderr)
    images = []
    for number in numbers[:FIGURES_PER_RUN]:
        buffer = io.BytesIO()
        plt.figure(number).savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        images.append(buffer.getvalue())
    return images


def close_figures() -> None:
    """Close every open pyplot figure, so the next cell starts without them."""
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
