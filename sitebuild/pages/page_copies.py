"""The copies of definitions that live elsewhere, written from Python: static/js/shared/limits.js (every size and
range limit, lessonpy.runtime.limits), static/js/shared/colormaps.js (the colour maps, lessonpy.maths.colormaps),
static/js/page/widgets/index.js (the widgets' name -> module map) and py/lessonpy/runtime/widget_limits.json (their
limits, for lessonpy), both from the widgets' specs (widget_specs.py).

``python3 -m sitebuild.pages.page_copies`` rewrites the repository's copies (which the component fixture and the
node tests load straight from the tree, and lessonpy reads); the build writes the page's into every site, and
refuses to build from a stale Python copy (the wheel is made from the tree).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..project import ROOT, lessonpy
from . import widget_specs

#: The page's copies, by their path under static/: the function that gives the text.
COPIES: dict[Path, Callable[[], str]] = {
    # the widgets' limits from their specs, not from lessonpy's copy of them, which may be the one being rewritten
    Path("js") / "shared" / "limits.js": lambda: lessonpy("runtime.limits").limits_js(widget_specs.widget_limits()),
    Path("js") / "shared" / "colormaps.js": lambda: lessonpy("maths.colormaps").colormaps_js(),
    Path("js") / "page" / "widgets" / "index.js": widget_specs.widgets_index_js,
}
#: lessonpy's copies, by their path under the project's root.
PYTHON_COPIES: dict[Path, Callable[[], str]] = {
    Path("py") / "lessonpy" / "runtime" / "widget_limits.json": widget_specs.widget_limits_json,
}


class StaleCopy(Exception):
    """A copy in the tree that the build reads as it is no longer says what its source says."""


def copy_text(path: Path) -> str:
    """The text of the copy at *path* (a key of COPIES or PYTHON_COPIES)."""
    return {**COPIES, **PYTHON_COPIES}[path]()


def write_page_copies(static_dir: Path) -> list[Path]:
    """Write every page copy under *static_dir* (the repository's static/ or a site's copy of it)."""
    written = []
    for path in COPIES:
        (static_dir / path).write_text(copy_text(path), encoding="utf-8")
        written.append(static_dir / path)
    return written


def check_python_copies(root: Path = ROOT) -> None:
    """Raise StaleCopy when a lessonpy copy in *root* differs from its source (the wheel is built from the tree)."""
    for path in PYTHON_COPIES:
        file = root / path
        if not file.is_file() or file.read_text(encoding="utf-8") != copy_text(path):
            raise StaleCopy(f"{path} is stale (its source changed): run `python3 -m sitebuild.pages.page_copies`")


if __name__ == "__main__":
    for path in PYTHON_COPIES:
        (ROOT / path).write_text(copy_text(path), encoding="utf-8")
        print(f"wrote {ROOT / path}")
    for path in write_page_copies(ROOT / "static"):
        print(f"wrote {path}")
