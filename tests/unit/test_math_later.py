"""sitebuild/pages/math_later.py: which formulas wait for the reader, what holds their place, and the file
their MathML goes into beside the page (build.py, LATER_MATHS). In the page: test_maths_later_browser.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import build
from sitebuild.pages import math_later
from sitebuild.pages.lessons import read_lesson
from sitebuild.pages.render import render_lesson
from sites import SITE_BUILD, page_config, quick_build, sw_manifest

ROOT = Path(__file__).resolve().parents[2]
BIG = r"\mathrm{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V"  # 8 elements or more
SMALL = "d_k"


def lesson(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "demo.md"
    path.write_text(f"---\ntitle: Demo\n---\n{body}", encoding="utf-8")
    return path


def test_big_formulas_after_the_opening_section_wait_and_the_rest_are_in_the_page(tmp_path):
    body = (f"## Opening\nFirst ${BIG}$ and ${SMALL}$.\n\n$$\n{BIG}\n$$\n\n"
            f"## Later\nThen ${BIG}$ and ${SMALL}$ < here.\n\n$$\n{BIG}\n$$\n")
    rendered = render_lesson(read_lesson(lesson(tmp_path, body)))
    opening, later = rendered.html.split('<h2 id="later">')
    assert opening.count("<math") == 3 and "math-later" not in opening
    assert later.count("<math") == 1  # the small one
    inline, display = math_later.later_key(BIG, False), math_later.later_key(BIG, True)
    tex = BIG.replace("<", "&lt;")
    assert f'<code class="math-later" data-math="{inline}">{tex}</code>' in later
    assert f'<div class="math-display"><code class="math-later" data-math="{display}">{tex}</code></div>' in later
    # the file has each waiting formula's MathML, as the page would have had it
    assert set(rendered.maths) == {inline, display}
    assert rendered.maths[display].startswith('<math display="block"') and "<mfrac>" in rendered.maths[display]
    assert math_later.elements(rendered.maths[inline]) >= math_later.LATER_ELEMENTS


def test_the_element_count_decides_and_a_formula_just_under_stays(tmp_path):
    seven = "a+b+c+d"  # <math> and 7 tokens: 8 elements
    six = "a+b+c"  # 6 elements
    rendered = render_lesson(read_lesson(lesson(tmp_path, f"## A\nx\n\n## B\n${seven}$ and ${six}$.\n")))
    assert math_later.elements(rendered.maths[math_later.later_key(seven, False)]) == 8
    assert math_later.later_key(six, False) not in rendered.maths and rendered.html.count("<math") == 1


def test_a_lesson_without_far_big_formulas_has_no_maths_file(tmp_path):
    rendered = render_lesson(read_lesson(lesson(tmp_path, f"## Only\n${BIG}$\n\n## Next\n${SMALL}$\n")))
    assert rendered.maths == {} and "math-later" not in rendered.html


def test_keys_tell_inline_from_display_and_tex_apart():
    keys = {math_later.later_key(t, d) for t in ("x", "y", "1x") for d in (False, True)}
    assert len(keys) == 6 and all(re.fullmatch(r"[0-9a-f]{12}", k) for k in keys)
    assert math_later.later_key("x", False) == math_later.later_key("x", False)


def test_drawn_characters_are_the_texts_of_the_mathml():
    assert math_later.drawn_chars("<math><mi>a</mi><mo>&lt;</mo><mspace width='1em'></mspace><mn>2</mn></math>") == 3


@SITE_BUILD
def test_the_build_writes_the_file_beside_the_page_names_it_and_keeps_it_offline(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "one.md").write_text(f"---\ntitle: One\norder: 1\n---\n## A\nx\n\n## B\n${BIG}$\n", encoding="utf-8")
    (lessons / "two.md").write_text(f"---\ntitle: Two\norder: 2\n---\n## A\n${BIG}$\n", encoding="utf-8")
    site = quick_build(tmp_path, lessons)

    def config(slug):
        return page_config((site / "lessons" / slug / "index.html").read_text())

    assert config("one")["maths"] == build.LATER_MATHS
    maths = json.loads((site / "lessons/one" / build.LATER_MATHS).read_text())
    assert list(maths) == [math_later.later_key(BIG, False)]
    assert config("two")["maths"] is None and not (site / "lessons/two" / build.LATER_MATHS).exists()
    manifest = sw_manifest(site)
    assert f"lessons/one/{build.LATER_MATHS}" in manifest["precache"]
    assert f"lessons/two/{build.LATER_MATHS}" not in manifest["precache"]


def test_lesson_4_keeps_its_first_screens_and_small_formulas_in_the_page():
    rendered = render_lesson(read_lesson(ROOT / "lessons" / "attention.md"))
    sections = re.split(r"(?=<h2 )", rendered.html)
    opening, rest = "".join(sections[:2]), "".join(sections[2:])  # what comes before the second heading
    assert "math-later" not in opening
    assert set(re.findall(r'data-math="([0-9a-f]{12})"', rest)) == set(rendered.maths) != set()
    big_after = [m for m in re.findall(r"<math.*?</math>", rest, re.S) if math_later.elements(m) >= math_later.LATER_ELEMENTS]
    assert big_after == []
    # the page's MathML at load is about half of what it was (2,152 elements in 364 formulas)
    assert sum(math_later.elements(m) for m in re.findall(r"<math.*?</math>", rendered.html, re.S)) < 1_100
