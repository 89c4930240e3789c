"""Where the project's parts are, computed once: its root folder and the browser's Python.

``ROOT`` is the default of ``build.Options.root``; the build passes its root down (includes,
Temml, templates, Pyodide's files are found from it) rather than each module working it out.
``py/`` (lessonpy, scaffold) is the builder's one way into the Python the page runs: the build
computes widget pictures, reads the shared limits and lists the exercise checks with that very
code, imported here in CPython (lesson numbers run it in a child process with PY_DIR on its path).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

#: The project folder (build.py, lessons/, py/, static/, templates/ ...).
ROOT = Path(__file__).resolve().parent.parent
#: The browser's Python: lessonpy and scaffold.
PY_DIR = ROOT / "py"
#: The environment that Python runs in, in the page and in the build's Pyodide under Node (which imports it).
PYTHON_ENV_MODULE = ROOT / "static" / "js" / "shared" / "python-env.mjs"
# The page's hooks into Pyodide's internals, which the build's snapshot and trace steps import too: in their keys.
PYODIDE_SEAMS_MODULE = ROOT / "static" / "js" / "shared" / "pyodide-seams.mjs"



def lesson_folder(slug: str) -> str:
    """Where a lesson's page is in the site (its index.html, notebook and data files beside it)."""
    return f"lessons/{slug}/"


#: From a lesson page back to the site's root: the pages' and their config's URLs are relative to the page.
PAGE_TO_ROOT = "../" * lesson_folder("slug").count("/")


def use_py() -> None:
    """Make py/ importable (lessonpy, scaffold), once."""
    if str(PY_DIR) not in sys.path:
        sys.path.insert(0, str(PY_DIR))


def lessonpy(name: str) -> ModuleType:
    """Import ``lessonpy.<name>`` from py/ (``lessonpy("maths.show")``)."""
    use_py()
    return importlib.import_module(f"lessonpy.{name}")
