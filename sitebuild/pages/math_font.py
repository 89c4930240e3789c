"""The site's maths font: STIX Two Math, cut down at build time to what the lessons' formulas draw.

MathML Core needs an OpenType font with a MATH table (stretchy brackets, radicals, big operators,
script sizes). A reader's system may have none, so the site carries its own: STIX Two Math from
``@fontsource/stix-two-math`` (SIL Open Font License 1.1; npm pins it). Whole, it is 400 KB of
woff2; the lessons use about a hundred characters, so the build keeps those (and the Latin and
Greek letters in every form MathML draws them: a one-letter ``<mi>`` is drawn from the
Mathematical Italic block), with the MATH table's variants and assemblies for them (fontTools'
subsetter follows the table). That is about 40 KB. The cut is cached by its inputs, so only a
build whose formulas use a new character makes a new one (a few seconds).

A cut-down font is a "Modified Version" under the OFL, which may not carry a Reserved Font Name, so
the cut is renamed (``FAMILY``), keeps the copyright and licence-URL records and gets the licence's
name in its licence record (Fontsource's copy has none); the site's NOTICE credits it too.
"""

from __future__ import annotations

import hashlib
import html
import io
import re
from collections.abc import Iterable
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

from sitebuild.files import atomic_target, link_or_copy

#: The whole font, below the project root (``npm ci`` puts it there).
SOURCE_IN_ROOT = Path("node_modules") / "@fontsource" / "stix-two-math" / "files" / "stix-two-math-latin-400-normal.woff2"
#: The cut's family (CSS and the font's own name records), its file and the maths stylesheet in css/.
FAMILY = "Lesson Math"
FILE_NAME = "math-font.woff2"
STYLESHEET = "maths.css"
#: Bump when the cut is made differently (a new cache key).
RECIPE = 2

# Always kept, whatever the formulas say: printable ASCII, the Greek letters, their Mathematical Italic
# forms (MathML's automatic italic for a one-letter <mi>; U+210E is the italic h, which the block
# leaves out), and the radical sign <msqrt> draws without writing it.
_RANGES = ((0x20, 0x7E), (0x391, 0x3A9), (0x3B1, 0x3C9), (0x1D434, 0x1D467), (0x1D6E2, 0x1D71B))
ALWAYS = frozenset(c for low, high in _RANGES for c in range(low, high + 1)) | {0x210E, 0x221A}
# name records: 0 (copyright) and 14 (the licence's URL) stay; these name the family and are replaced.
_NAMES = {1: FAMILY, 3: f"{FAMILY} (cut of STIX Two Math)", 4: FAMILY, 6: FAMILY.replace(" ", "") + "-Regular",
          16: FAMILY, 17: "Regular"}
LICENCE = ("A cut of STIX Two Math, licensed under the SIL Open Font License, Version 1.1 "
           "(https://openfontlicense.org).")


def characters(mathml: Iterable[str]) -> frozenset[int]:
    """The code points a set of rendered formulas draw (their text, entities decoded), plus ``ALWAYS``."""
    text = "".join(html.unescape(re.sub(r"<[^>]*>", "", m)) for m in mathml)
    return ALWAYS | {ord(ch) for ch in text if not ch.isspace()}


def cut(source: bytes, codepoints: Iterable[int]) -> bytes:
    """*source* (an OpenType maths font) kept to *codepoints*, renamed ``FAMILY``, as woff2."""
    font = TTFont(io.BytesIO(source))
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]  # ssty (script-size glyphs), the MATH table's friends
    options.name_IDs = ["*"]  # keep the copyright and licence records
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(codepoints))
    subsetter.subset(font)
    if "MATH" not in font:  # pragma: no cover (fontTools keeps it; without it MathML is drawn badly)
        raise RuntimeError("the cut maths font lost its MATH table")
    names = font["name"]
    for record in list(names.names):
        if record.nameID in _NAMES:
            names.setName(_NAMES[record.nameID], record.nameID, record.platformID, record.platEncID, record.langID)
    names.setName(LICENCE, 13, 3, 1, 0x409)
    font.flavor = "woff2"
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()


def stylesheet(temml_css: str) -> str:
    """Temml's stylesheet (its fixes for MathML Core) and then the site's font for ``<math>``.

    ``font-display: optional``: the page preloads the font, so it is there at first paint on any
    usual link; when it is not (a slow first visit), the formulas keep the reader's own maths font for
    that view instead of moving the text when it arrives. ``local()`` first: a system that has STIX Two
    Math (macOS, iOS) draws the same glyphs without the download."""
    # Temml's own face (primes, script capitals) says no font-display: the same rule as ours, so a late
    # file never moves the text. Its text is matched exactly: a Temml that words it otherwise fails the build.
    face = "font-family: 'Temml';"
    if face not in temml_css:
        raise ValueError(f"Temml's stylesheet no longer declares {face!r}: check font-display in math_font.py")
    temml_css = temml_css.replace(face, face + "\n  font-display: optional;", 1)
    return (f"{temml_css.rstrip()}\n\n/* The site's maths font (sitebuild/pages/math_font.py) */\n"
            f'@font-face {{ font-family: "{FAMILY}"; src: local("STIX Two Math"), local("STIXTwoMath-Regular"), '
            f'url("{FILE_NAME}") format("woff2"); font-display: optional; }}\n'
            f'math {{ font-family: "{FAMILY}", math; }}\n')


def write_math_font(root: Path, cache_dir: Path, mathml: Iterable[str], target: Path) -> Path:
    """Write the cut for these formulas to *target* (through the cache under ``<cache>/mathfont/``)."""
    source = (root / SOURCE_IN_ROOT).read_bytes()
    codepoints = sorted(characters(mathml))
    key = hashlib.sha256(source + repr((RECIPE, codepoints)).encode()).hexdigest()[:20]
    cached = cache_dir / "mathfont" / f"{key}.woff2"
    if not cached.exists():
        with atomic_target(cached) as tmp:
            tmp.write_bytes(cut(source, codepoints))
    target.parent.mkdir(parents=True, exist_ok=True)
    link_or_copy(cached, target)  # the project's one way to put a cached file into a site
    return target
