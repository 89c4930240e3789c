"""Maths, computed numbers and included files in lessons; and the authoring fixture built into a page."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

import build
from sitebuild.pages import math as lesson_math
from sitebuild.pages import math_font
from sitebuild.pages import numbers as lesson_numbers
from sitebuild.pages.lessons import LessonError, read_lesson, read_lessons
from sitebuild.pages.render import render_lesson_body

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "authoring"
CDN = "https://cdn.example.org/pyodide/v0.27.7/full/"  # never fetched: skips copying Pyodide


def write(tmp_path: Path, body: str, front: str = "", name: str = "demo.md") -> Path:
    path = tmp_path / name
    path.write_text(f"---\ntitle: Demo\n{front}---\n{body}", encoding="utf-8")
    return path


def render(path: Path) -> str:
    return render_lesson_body(read_lesson(path))


# ---------------------------------------------------------------------------- maths

def test_inline_and_display_maths_become_mathml_only(tmp_path):
    html = render(write(tmp_path, "Scale by $\\sqrt{d_k}$ here.\n\n$$\n\\frac{QK^\\top}{\\sqrt{d_k}}\n$$\n"))
    assert html.count("<math") == 2 and html.count('display="block"') == 1
    assert '<div class="math-display"><math display="block"' in html
    assert "<msqrt><msub><mi>d</mi><mi>k</mi></msub></msqrt>" in html and "<mfrac>" in html
    # one form of each formula: no HTML typesetting beside it, and no TeX (not even as an annotation)
    assert "katex" not in html and "<span" not in html and "<annotation" not in html
    assert "$" not in html and "\\sqrt" not in html


@pytest.mark.parametrize(("temml", "page"), [
    ("<math><mrow><mi>T</mi><mo>×</mo><mn>768</mn></mrow></math>", "<math><mi>T</mi><mo>×</mo><mn>768</mn></math>"),
    ('<math display="block"><mrow><msub><mi>W</mi><mrow><mi>i</mi><mi>j</mi></mrow></msub></mrow></math>',
     '<math display="block"><msub><mi>W</mi><mrow><mi>i</mi><mi>j</mi></mrow></msub></math>'),
    ("<math><mrow><mrow><mi>a</mi></mrow><mi>b</mi></mrow></math>", "<math><mrow><mi>a</mi></mrow><mi>b</mi></math>"),
    # not the only child, or no row at all: as Temml wrote it
    ("<math><mrow><mi>a</mi></mrow><mrow><mi>b</mi></mrow></math>", None),
    ("<math><mi>X</mi></math>", None),
])
def test_a_row_that_is_a_formulas_only_child_is_left_out(temml, page):
    assert lesson_math.without_outer_mrow(temml) == (page or temml)


def test_dollars_that_are_money_or_code_stay_text(tmp_path):
    html = render(write(tmp_path, "It costs $5 and $6 today.\n\n`$x$` is code.\n\n```python\nprint('$y$')\n```\n"))
    assert "<math" not in html
    assert "$5 and $6" in html and "<code>$x$</code>" in html


def test_bad_maths_is_reported_at_its_line(tmp_path):
    path = write(tmp_path, "Fine $a$ here,\nand on this line $\\frac{1}{$ is broken.\n")
    with pytest.raises(LessonError) as err:
        read_lesson(path)
    assert err.value.line == 5  # the second line of the paragraph (3 lines of front matter)
    assert str(err.value).startswith(f"{path}:5: bad maths:")


def test_bad_display_maths_names_the_opening_line(tmp_path):
    path = write(tmp_path, "Text.\n\n$$\n\\notacommand{x}\n$$\n")
    with pytest.raises(LessonError, match=r":6: bad maths: .*notacommand"):
        read_lesson(path)


def test_formulas_of_all_lessons_are_typeset_in_one_node_call(tmp_path, monkeypatch):
    calls = []
    real = lesson_math.render_tex
    monkeypatch.setattr(lesson_math, "render_tex", lambda items, *a: calls.append(len(items)) or real(items, *a))
    for i in range(3):
        write(tmp_path, f"$x_{i}$ and $y$ and $x_{i}$\n", name=f"l{i}.md", front=f"slug: l{i}\n")
    started = time.perf_counter()
    lessons = read_lessons(tmp_path)
    assert calls == [4]  # x_0, x_1, x_2, y: duplicates rendered once, in a single Node run
    for lesson in lessons:
        render_lesson_body(lesson)
    assert calls == [4]  # rendering the pages does not run Node again
    assert time.perf_counter() - started < 10


@pytest.mark.slow  # the build's maths font, cut from the STIX font (a build step)
def test_the_maths_font_keeps_what_the_formulas_draw_and_its_math_table(tmp_path):
    from fontTools.ttLib import TTFont

    mathml = lesson_math.render_tex([("\\sqrt{\\sum_{j} e^{s_j}} \\in \\mathbb{R}", False)], ROOT / lesson_math.TEMML_IN_ROOT)
    mathml = [item["html"] for item in mathml]
    chars = math_font.characters(mathml)
    assert {ord("∑"), ord("ℝ"), ord("√"), 0x1D452} <= chars  # drawn, the radical <msqrt> draws, italic e
    out = math_font.write_math_font(ROOT, tmp_path / "cache", mathml, tmp_path / "site" / math_font.FILE_NAME)
    font = TTFont(out)
    assert "MATH" in font  # what MathML Core needs to stretch, stack and shrink
    cmap = font.getBestCmap()
    assert ord("∑") in cmap and ord("ℝ") in cmap and ord("∫") not in cmap  # cut to the formulas
    names = {r.nameID: r.toUnicode() for r in font["name"].names if r.langID in (0, 0x409)}
    assert names[1] == math_font.FAMILY and "STIX" not in names[1] + names[4] + names[6]  # OFL: no reserved name
    assert "STIX" in names[0] and "Open Font License" in names[13]  # the copyright and licence stay
    assert out.stat().st_size < 50_000
    # made once: the same formulas take the cached cut, byte for byte
    again = math_font.write_math_font(ROOT, tmp_path / "cache", mathml, tmp_path / "again.woff2")
    assert again.read_bytes() == out.read_bytes() and len(list((tmp_path / "cache" / "mathfont").iterdir())) == 1


# ---------------------------------------------------------------------------- numbers

def test_number_placeholders_fill_prose_and_maths(tmp_path):
    (tmp_path / "demo_numbers_a.py").write_text("def numbers():\n    return {'n': 2359296, 'std': '1.02'}\n")
    html = render(write(tmp_path, "Std {{ num.std }}, count {{num.n}}, $N = {{ num.n }}$.\n\n"
                                  "`{{ num.std }}` stays code.\n", front="numbers: demo_numbers_a\n"))
    assert "Std 1.02, count 2,359,296," in html
    assert "<mi>N</mi><mo>=</mo><mn>2,359,296</mn>" in html
    assert "<code>{{ num.std }}</code>" in html


def test_unknown_number_is_reported_at_its_line(tmp_path):
    (tmp_path / "demo_numbers_b.py").write_text("def numbers():\n    return {'known': '1'}\n")
    path = write(tmp_path, "Fine {{ num.known }}.\n\nBut {{ num.typo }} is not.\n", front="numbers: demo_numbers_b\n")
    with pytest.raises(LessonError, match=r"demo\.md:7: unknown number \{\{ num\.typo \}\}.*it has: known"):
        read_lesson(path)


def test_placeholder_without_a_numbers_module_is_an_error(tmp_path):
    with pytest.raises(LessonError, match=r":5: .*needs a 'numbers: module.name' line"):
        read_lesson(write(tmp_path, "\nValue {{ num.x }}.\n"))


def test_a_broken_numbers_module_is_reported(tmp_path):
    (tmp_path / "demo_numbers_c.py").write_text("def numbers():\n    return {'x': 1.5}\n")
    with pytest.raises(LessonError, match=r"demo\.md:3: number 'x' is a float"):
        read_lesson(write(tmp_path, "{{ num.x }}\n", front="numbers: demo_numbers_c\n"))
    with pytest.raises(LessonError, match=r"cannot import the numbers module 'no_such_module'"):
        read_lesson(write(tmp_path, "{{ num.x }}\n", front="numbers: no_such_module\n"))


@pytest.mark.parametrize("module", [
    "def numbers():\n    while True:\n        pass\n",  # a loop in numbers()
    "import time\ntime.sleep(3600)\n",  # or at import
])
def test_a_numbers_module_that_never_returns_fails_the_build_in_time(tmp_path, monkeypatch, module):
    monkeypatch.setattr(lesson_numbers, "TIMEOUT_S", 1)
    (tmp_path / "demo_numbers_d.py").write_text(module)
    started = time.perf_counter()
    with pytest.raises(LessonError) as info:
        read_lesson(write(tmp_path, "{{ num.x }}\n", front="numbers: demo_numbers_d\n"))
    assert str(info.value) == f"{tmp_path / 'demo.md'}:3: numbers module 'demo_numbers_d' did not return within 1 s"
    assert time.perf_counter() - started < 30


def test_a_numbers_module_may_print_and_its_failures_keep_their_message(tmp_path):
    (tmp_path / "demo_numbers_e.py").write_text("print('importing')\ndef numbers():\n    print('{}')\n"
                                                "    return {'x': 'ok'}\n")
    assert "Value ok." in render(write(tmp_path, "Value {{ num.x }}.\n", front="numbers: demo_numbers_e\n"))
    (tmp_path / "demo_numbers_f.py").write_text("def numbers():\n    raise KeyError('n_head')\n")
    with pytest.raises(LessonError, match=r"demo\.md:3: demo_numbers_f\.numbers\(\) failed: KeyError: 'n_head'"):
        read_lesson(write(tmp_path, "{{ num.x }}\n", front="numbers: demo_numbers_f\n"))
    (tmp_path / "demo_numbers_g.py").write_text("import os\nos._exit(3)\n")
    with pytest.raises(LessonError, match=r"numbers module 'demo_numbers_g' stopped without an answer \(exit code 3\)"):
        read_lesson(write(tmp_path, "{{ num.x }}\n", front="numbers: demo_numbers_g\n"))


def test_substitute_reports_the_first_unknown_name():
    assert lesson_numbers.substitute("a {{ num.x }} b", {"x": "1,000"}) == ("a 1,000 b", None)
    assert lesson_numbers.substitute("{{ num.x }}", {"x": "1,000"}, in_maths=True) == ("1{,}000", None)
    assert lesson_numbers.substitute("{{ num.y }}", {"x": "1"})[1] == "y"
    assert lesson_numbers.substitute("f'{{num}}' {{ x }}", {}) == ("f'{{num}}' {{ x }}", None)


# ---------------------------------------------------------------------------- includes and copy buttons

def test_include_shows_the_file_with_a_copy_button(tmp_path):
    html = render(write(tmp_path, "```python include=py/scaffold/config.py\n```\n"))
    assert 'data-copy data-source="py/scaffold/config.py"' in html
    assert '<span class="code-title">config.py</span>' in html
    assert 'class="copy-button" hidden aria-label="Copy config.py"' in html
    assert "GPTConfig" in html and re.search(r'data-tokens="[^"]*\bk:5 ', html)  # coloured ("class": k:5)
    assert 'aria-live="polite"' in html


def test_include_with_lines_cuts_the_file(tmp_path):
    lesson = read_lesson(write(tmp_path, "```python include=py/scaffold/config.py lines=9-10\n```\n"))
    fence = next(t for t in lesson.tokens if t.type == "fence")
    expected = (ROOT / "py/scaffold/config.py").read_text().splitlines(keepends=True)[8:10]
    assert fence.content == "".join(expected)


def test_a_runnable_include_is_a_cell_whose_code_is_the_file(tmp_path):
    path = write(tmp_path, '```python run id=config include=py/scaffold/config.py fold="The config, folded"\n```\n')
    lesson = read_lesson(path)
    text = (ROOT / "py/scaffold/config.py").read_text()
    assert [(c.id, c.code, c.include, c.fold) for c in lesson.cells] == [
        ("config", text.rstrip("\n"), "py/scaffold/config.py", "The config, folded")]
    html = render(path)
    assert html.startswith('<details class="cell-fold">\n<summary>The config, folded</summary>\n<div class="cell" ')
    assert 'data-cell="config"' in html and 'data-source="py/scaffold/config.py"' in html
    assert '<span class="code-title">py/scaffold/config.py</span>' in html
    assert "%%writefile" not in html and "copy-button" not in html  # a cell, not a file to keep


def test_an_unfolded_runnable_include_is_a_plain_cell_with_its_file_named(tmp_path):
    html = render(write(tmp_path, "```python run id=config include=py/scaffold/config.py\n```\n"))
    assert html.startswith('<div class="cell" ') and "<details" not in html
    assert '<span class="code-title">py/scaffold/config.py</span>' in html


@pytest.mark.parametrize("fence, fragment", [
    ('```python run id=c include=py/scaffold/config.py fold=""\n```', "fold= needs the summary"),
    ("```python run id=c include=py/scaffold/config.py\nx = 1\n```", "must be empty"),
    ("```python include=py/scaffold/nope.py\n```", "include=py/scaffold/nope.py: no such file"),
    ("```python include=../etc/passwd\n```", "points outside the project folder"),
    ("```python include=py/scaffold/config.py\nx = 1\n```", "must be empty"),
    ("```python include=py/scaffold/config.py lines=5-1\n```", "lines=5-1 must be A-B"),
])
def test_include_mistakes_are_reported_at_the_fence(tmp_path, fence, fragment):
    path = write(tmp_path, f"Text.\n\n{fence}\n")
    with pytest.raises(LessonError) as err:
        read_lesson(path)
    assert err.value.line == 6 and fragment in err.value.message


def test_plain_code_blocks_are_unchanged_and_copy_is_opt_in(tmp_path):
    html = render(write(tmp_path, "```python\nx = 1\n```\n\n```python copy title=run.py\ny = 2\n```\n"))
    assert ('<pre class="highlight" tabindex="0" data-lang="python" data-tokens="n:1 :1 o:1 :1 mi:1 w:1">'
            '<code>x = 1\n</code></pre>') in html.split("<figure")[0]
    assert html.count("<figure") == 1 and "run.py" in html


# ---------------------------------------------------------------------------- the authoring fixture, built

@pytest.mark.slow
def test_the_authoring_fixture_builds_into_a_page(tmp_path):
    out = build.build(build.Options(lessons_dir=FIXTURE, out_dir=tmp_path / "site", pyodide_url=CDN,
                                    log=lambda *_: None))
    index = (out / "index.html").read_text()
    assert "A fixture course" in index and 'href="lessons/mean/"' in index and "Variance" in index
    page = (out / "lessons" / "mean" / "index.html").read_text()
    assert page.count('data-cell="') == 2 and 'data-cell="mean"' in page and 'data-cell="sum"' in page
    assert page.count("<math") >= 3 and "katex" not in page
    assert "For the numbers one to ten it is 5.5, and their sum is 55." in page
    assert 'data-source="tests/fixtures/authoring/helper.py"' in page and "The arithmetic mean" in page
    assert "hello.py" in page and page.count("data-copy") == 2
    assert 'data-lang="widget"' in page or "data-widget" in page  # a widget fence: rendered either way
    assert "css/page.css" in page and 'href="../../assets/' in page  # the maths' rules are in it (test_build.py)
    css = next((out / "assets").glob("*/css/maths.css"))
    assert '@font-face { font-family: "Lesson Math"' in css.read_text() and ".tml-display" in css.read_text()
    assert css.read_text().count("font-display: optional") == 2  # ours and Temml's: a late font moves nothing
    assert f'href="../../assets/{css.parent.parent.name}/css/math-font.woff2" as="font"' in page  # preloaded
    assert (css.parent / "math-font.woff2").stat().st_size < 60_000  # cut to the fixture's formulas


def test_the_fixture_cells_run(tmp_path):
    import contextlib
    import io

    lesson = read_lesson(FIXTURE / "mean.md")
    namespace, printed = {}, io.StringIO()
    with contextlib.redirect_stdout(printed):
        for cell in lesson.cells:
            exec(cell.code, namespace)  # noqa: S102 (running the lesson is the test)
    assert printed.getvalue() == "mean: 5.5\nsum: 55\n"
