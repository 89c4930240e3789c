"""The page's copies of definitions that live in lessonpy, written from Python: static/js/shared/limits.js
(every size and range limit, lessonpy.runtime.limits) and static/js/shared/colormaps.js (the colour maps,
lessonpy.maths.colormaps).

``python3 -m sitebuild.pages.page_copies`` rewrites the repository's copies (which the component fixture
loads straight from the tree); the build writes the same text into every site.
"""

from __future__ import annotations

from pathlib import Path

from ..project import ROOT, lessonpy

#: Where the page's modules import each copy from, relative to static/: the lessonpy module and its function
#: that gives the text.
COPIES = {
    Path("js") / "shared" / "limits.js": ("runtime.limits", "limits_js"),
    Path("js") / "shared" / "colormaps.js": ("maths.colormaps", "colormaps_js"),
}


def copy_text(path: Path) -> str:
    """The text of the copy at *path* (a key of COPIES)."""
    module, function = COPIES[path]
    return getattr(lessonpy(module), function)()


def write_page_copies(static_dir: Path) -> list[Path]:
    """Write every copy under *static_dir* (the repository's static/ or a site's copy of it)."""
    written = []
    for path in COPIES:
        (static_dir / path).write_text(copy_text(path), encoding="utf-8")
        written.append(static_dir / path)
    return written


if __name__ == "__main__":
    for path in write_page_copies(ROOT / "static"):
        print(f"wrote {path}")
