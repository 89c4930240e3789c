"""The lesson's notebook (sitebuild/pages/notebook.py): valid nbformat, and everything of the page in it, in order.

Whatever the lesson holds: the expected cells, numbers, quizzes and exercises are read from the
lesson itself (and its numbers module), never typed in here. tests/build/test_notebook_run.py runs it.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import nbformat
import pytest

from sitebuild.pages.practice import parse_exercise, parse_quiz, quiz_orders
from lesson_source import fences_of
from sitebuild.pages.lessons import LessonError, read_lesson
from sitebuild.pages.numbers import PLACEHOLDER, load_numbers
from sitebuild.pages.notebook import lesson_notebook, write_notebook
from sitebuild.pages.widget_fence import parse_widget
from sitebuild.pages.widget_specs import specs

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "lessons" / "attention.md"
WHEEL = "lessonpy-0.1.0-py3-none-any.whl"


@pytest.fixture(scope="module")
def lesson():
    return read_lesson(LESSON, maths=False)


@pytest.fixture(scope="module")
def nb(lesson):
    return lesson_notebook(lesson, WHEEL)


def markdown(nb):
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_the_notebook_is_valid_nbformat_and_survives_a_round_trip(nb, tmp_path, lesson):
    nbformat.validate(nb)
    path = write_notebook(lesson, tmp_path, WHEEL)
    again = nbformat.read(path, as_version=4)
    nbformat.validate(again)
    assert [c.source for c in again.cells] == [c.source for c in nb.cells]
    assert len({c.id for c in nb.cells}) == len(nb.cells), "cell ids must be unique"


def test_every_runnable_cell_is_a_code_cell_in_page_order_with_the_same_code(nb, lesson):
    cells = [c for c in nb.cells if c.cell_type == "code" and "cell" in c.metadata["lesson"]]
    assert [c.metadata["lesson"]["cell"] for c in cells] == [cell.id for cell in lesson.cells]
    assert [c.source for c in cells] == [cell.code for cell in lesson.cells]


def test_the_first_code_cell_installs_numpy_matplotlib_and_the_wheel_then_loads_the_extension(nb):
    first = next(c for c in nb.cells if c.cell_type == "code")
    lines = [l for l in first.source.splitlines() if not l.startswith("#")]
    assert lines[:3] == ["%pip install numpy matplotlib", f"%pip install --no-deps --force-reinstall {WHEEL}",
                         "%load_ext lessonpy.maths.notebook"]
    assert WHEEL in first.source.split("%pip")[0], "the comment says where the wheel comes from"


def test_the_first_cell_tells_the_figures_the_title_and_row_each_view_starts_with(nb, lesson):
    expected = {}
    for fence in fences_of(lesson, "widget"):
        spec = parse_widget(*fence)
        chosen = {k: spec["options"][k] for k in ("title", "row") if spec["options"].get(k) is not None}
        if spec["name"] in ("attention-view", "step-through") and chosen:
            expected[spec["id"]] = chosen
    lines = next(c for c in nb.cells if c.cell_type == "code").source.splitlines()
    calls = [l for l in lines if l.startswith("page_views(")]
    if not expected:
        assert not calls
        return
    assert len(calls) == 1 and ast.literal_eval(calls[0][len("page_views("):-1]) == expected


def test_numbers_are_filled_in_and_maths_stays_tex(nb, lesson):
    text = markdown(nb)
    assert not PLACEHOLDER.search(text)
    values = load_numbers(lesson.meta["numbers"], (LESSON.parent,))
    used = set(PLACEHOLDER.findall(LESSON.read_text(encoding="utf-8")))
    for name in used:
        value = values[name]
        assert value in text or value.replace(",", "{,}") in text, name
    assert "$$" in text and r"\sqrt{d_k}" in text, "display and inline maths keep their TeX for Jupyter"
    assert 'class="katex' not in text


def test_placeholders_in_maths_get_tex_commas_and_code_is_left_alone(tmp_path):
    (tmp_path / "nbnums.py").write_text("def numbers():\n    return {'big': 2359296, 'std': '0.93'}\n")
    source = tmp_path / "tiny.md"
    source.write_text(textwrap.dedent("""\
        ---
        title: Tiny
        numbers: nbnums
        ---
        ## One

        In prose {{ num.big }} and {{ num.std }}; in maths $4C^2 = {{ num.big }}$; in code `{{ num.big }}`.
        """))
    nb = lesson_notebook(read_lesson(source, maths=False), WHEEL)
    text = markdown(nb)
    assert "In prose 2,359,296 and 0.93; in maths $4C^2 = 2{,}359{,}296$; in code `{{ num.big }}`." in text


def test_quizzes_keep_every_choice_in_the_pages_order_and_fold_the_answers(nb, lesson):
    cells = [c.source for c in nb.cells if c.cell_type == "markdown"]
    quizzes = [parse_quiz(*fence) for fence in fences_of(lesson, "quiz")]
    orders = quiz_orders(lesson.tokens, lesson.slug, lesson.source_path)
    assert quizzes
    for quiz in quizzes:
        cell = next(s for s in cells if quiz["question"].strip() in s)
        shown, answer = cell.split("<details>", 1)
        for choice in quiz["choices"]:
            assert choice["text"].strip() in shown
            assert choice["why"].strip() in answer, "each choice's explanation is in the folded answer"
        # listed as the page shows them (practice.shown_choices), lettered in that order
        page_order = [quiz["choices"][i]["text"].strip() for i in orders[quiz["id"]]]
        assert re.findall(r"^- \*\*[A-J]\.\*\* (.*)$", shown, re.M) == page_order
        letters = [f"**{'ABCDEFGHIJ'[shown_at]}**" for shown_at, i in enumerate(orders[quiz["id"]])
                   if quiz["choices"][i]["correct"]]
        assert answer.split("\n\n")[1].startswith(letters[0])


def test_each_exercise_is_a_starter_cell_and_a_check_cell_with_hints_and_solution_folded(nb, lesson):
    exercises = [parse_exercise(*fence) for fence in fences_of(lesson, "exercise")]
    assert exercises
    cells = list(nb.cells)
    for ex in exercises:
        i = next(i for i, c in enumerate(cells) if c.metadata.get("lesson", {}).get("exercise") == ex["id"])
        assert cells[i].source == f"%%exercise {ex['id']}\n{ex['starter'].rstrip()}"
        assert cells[i + 1].source == f"check_exercise({ex['id']!r}, check={ex['check']!r}, timeout={ex['timeout']!r})"
        prompt = cells[i - 1].source
        assert ex["prompt"].strip() in prompt and f"```python\n{ex['solution']}```" in prompt
        assert prompt.count("<summary>Hint") == len(ex["hints"])


def test_included_python_files_become_writefile_cells_with_the_files_text(nb, lesson):
    includes = [t.meta["include"] for t in lesson.tokens if t.type == "fence" and "include" in t.meta
                and "cell_id" not in t.meta]  # runnable includes are run, not written: the next test
    assert includes
    for rel in includes:
        name = rel.rsplit("/", 1)[-1]
        cell = next(c for c in nb.cells if c.source.startswith(f"%%writefile {name}\n"))
        assert cell.source == f"%%writefile {name}\n" + (ROOT / rel).read_text(encoding="utf-8").rstrip("\n")


def test_a_runnable_include_is_an_ordinary_code_cell_with_the_files_text(nb, lesson):
    runnable = [t for t in lesson.tokens if t.type == "fence" and "include" in t.meta and "cell_id" in t.meta]
    assert runnable
    for token in runnable:
        i = next(i for i, c in enumerate(nb.cells) if c.metadata.get("lesson", {}).get("cell") == token.meta["cell_id"])
        assert nb.cells[i].source == (ROOT / token.meta["include"]).read_text(encoding="utf-8").rstrip("\n")
        assert not nb.cells[i].source.startswith("%%")
        assert f"`{token.meta['include']}`" in nb.cells[i - 1].source  # says which file it is


def test_each_widget_leaves_a_note_saying_what_it_shows_on_the_page(nb, lesson):
    widgets = fences_of(lesson, "widget")
    text = markdown(nb)
    assert text.count("> **On the page:**") == len(widgets)
    for _, _, env in widgets:
        assert specs()[env["flags"][0]].note in text


def test_the_built_site_has_the_notebook_and_the_page_links_it(built_site, lesson):
    folder = built_site / "lessons" / lesson.slug
    built = nbformat.read(folder / f"{lesson.slug}.ipynb", as_version=4)
    nbformat.validate(built)
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert f'href="{lesson.slug}.ipynb" download>Download notebook</a>' in page
    wheel = re.search(r'href="\.\./\.\./(assets/[^"]+\.whl)" download', page)
    assert wheel and (built_site / wheel.group(1)).is_file()
    setup = next(c for c in built.cells if c.cell_type == "code")
    assert Path(wheel.group(1)).name in setup.source


def test_python_files_are_written_whole_other_code_stays_markdown(tmp_path):
    (tmp_path / "py").mkdir()
    (tmp_path / "py" / "helper.py").write_text("a = 1\nb = 2\nc = 3\n")
    source = tmp_path / "files.md"
    source.write_text(textwrap.dedent("""\
        ---
        title: Files
        ---
        ```python include=py/helper.py
        ```

        ```python include=py/helper.py lines=2-3
        ```

        ```python copy title=hello.py
        print("hello")
        ```

        ```sh
        pip install torch
        ```
        """))
    nb = lesson_notebook(read_lesson(source, root=tmp_path, maths=False), WHEEL)
    code = [c.source for c in nb.cells if c.cell_type == "code"][1:]  # after the setup cell
    assert code == ["%%writefile helper.py\na = 1\nb = 2\nc = 3", '%%writefile hello.py\nprint("hello")']
    text = markdown(nb)
    assert "**helper.py**\n\n```python\nb = 2\nc = 3\n```" in text
    assert "```sh\npip install torch\n```" in text
    assert "quiz" not in text.split("\n\n")[1], "the introduction mentions only what the lesson has"
    assert "no Jupyter yet? `python3 -m pip install jupyterlab`" in text.split("\n\n")[1]  # the reader at home


def test_a_runnable_cell_inside_a_list_is_refused_with_its_line(tmp_path):
    source = tmp_path / "nested.md"
    source.write_text("---\ntitle: Nested\n---\n- a step:\n\n  ```python run id=inside\n  print(1)\n  ```\n")
    with pytest.raises(LessonError, match=r"nested\.md:6: a runnable cell inside a list"):
        lesson_notebook(read_lesson(source, maths=False), WHEEL)


def test_an_aside_becomes_a_bold_title_its_prose_and_ordinary_cells(tmp_path):
    source = tmp_path / "aside.md"
    source.write_text("---\ntitle: Aside\n---\nBefore.\n\n::: aside A side road\nInside.\n\n"
                      "```python run id=inside\nx = 1\n```\n\nStill inside.\n:::\n\nAfter.\n")
    nb = lesson_notebook(read_lesson(source, maths=False), WHEEL)
    cells = [(c.cell_type, c.source) for c in nb.cells]
    text = "\n".join(s for kind, s in cells if kind == "markdown")
    assert "**A side road**" in text and ":::" not in text
    assert [s for kind, s in cells if kind == "code"][1:] == ["x = 1"]  # after the setup cell
    code_at = next(i for i, (kind, s) in enumerate(cells) if s == "x = 1")
    before = "\n".join(s for kind, s in cells[:code_at])
    after = "\n".join(s for kind, s in cells[code_at + 1:])
    assert "Before." in before and "Inside." in before and "Still inside." in after and "After." in after


def test_links_to_the_sites_pages_keep_their_text_and_the_others_their_targets(tmp_path):
    """A downloaded notebook has no site beside it: a link to another lesson keeps only its words; a link to
    another site, and an anchor of the page itself, stay links."""
    source = tmp_path / "tiny.md"
    source.write_text(textwrap.dedent("""\
        ---
        title: Tiny
        ---
        ## One

        See [*the panel*](../causal-mask/#what-comes-next), [the paper](https://arxiv.org/abs/1706.03762) and [above](#one).
        """))
    text = markdown(lesson_notebook(read_lesson(source, maths=False), WHEEL))
    assert "See *the panel*, [the paper](https://arxiv.org/abs/1706.03762) and [above](#one)." in text
