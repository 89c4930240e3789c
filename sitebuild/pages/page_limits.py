"""static/js/shared/limits.js: the page's copy of lessonpy.limits, written from Python.

``python3 -m sitebuild.pages.page_limits`` rewrites the repository's copy (which the component
fixture loads straight from the tree); the build writes the same text into every site.
"""

from __future__ import annotations

from pathlib import Path

from ..project import ROOT, lessonpy

#: Where the page's modules import it from, relative to static/.
LIMITS_JS = Path("js") / "shared" / "limits.js"


def limits_js() -> str:
    """The text of static/js/shared/limits.js."""
    return lessonpy("limits").limits_js()


def write_limits_js(static_dir: Path) -> Path:
    """Write limits.js under *static_dir* (the repository's static/ or a site's copy of it)."""
    path = static_dir / LIMITS_JS
    path.write_text(limits_js(), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"wrote {write_limits_js(ROOT / 'static')}")
