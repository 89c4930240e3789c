"""The builder's one way into the browser's Python (``py/``: lessonpy), imported in CPython.

The build computes widget pictures, reads the shared limits, lists the exercise checks and
loads lesson numbers with the very code the page runs. py/ belongs to this project's code (the
builder always uses the lessonpy beside it), so it goes on ``sys.path`` once, here.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

#: The folder holding lessonpy (and scaffold): the browser's Python.
PY_DIR = Path(__file__).resolve().parent.parent / "py"


def lessonpy(name: str) -> ModuleType:
    """Import ``lessonpy.<name>`` from py/ (``lessonpy("widgets")``)."""
    if str(PY_DIR) not in sys.path:
        sys.path.insert(0, str(PY_DIR))
    return importlib.import_module(f"lessonpy.{name}")
