"""Run each lesson's notebook top to bottom in Jupyter's machinery, the way a reader does: every lesson
course.yml lists with a page (tests/support/lesson_checks.py), with no test code of its own.

The reader saves the notebook and the lessonpy wheel in one folder, opens the notebook and
runs all. Here: the built wheel and notebook go into a temporary folder, a kernel runs in a
fresh virtual environment that sees this machine's numpy, matplotlib and ipykernel but not
lessonpy, and nbclient executes every cell with that folder as the working directory, so the
first cell's ``%pip install`` really installs the wheel. pip gets no index (PIP_NO_INDEX): the
notebook must run offline. Expected numbers come from the lesson's numbers module (its CELL_PRINTS,
the needs=page cells' too: the notebook has the data files beside it), and the exercise verdicts from
lessonpy.maths.grading run here on the same code.
"""

from __future__ import annotations

import json
import site
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from lesson_checks import course_lessons, numbers_of
from lessonpy.maths import grading
from lessonpy.maths.notebook import report
from lessonpy.maths.show import ShowError, show_attention  # noqa: F401 (show_attention: BAD_SHOW calls it)

from lesson_source import fences_of
from sitebuild.pages.practice import parse_exercise
from sitebuild.pages.notebook import lesson_notebook
from sitebuild.wheel import build_wheel

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LESSONS = course_lessons(ROOT / "lessons")
# A bad array, as a reader might pass it: show_attention must refuse it with the page's message.
BAD_SHOW = "show_attention(weights=[[0.5, 0.6], [0.5, 0.5]], tokens=['a', 'b'])"


def exercise_cells(nb):
    """(exercise id, its %%exercise cell, its check cell) in notebook order."""
    cells = list(nb.cells)
    return [(c.metadata["lesson"]["exercise"], c, cells[i + 1]) for i, c in enumerate(cells)
            if "exercise" in c.metadata.get("lesson", {})]


def kernel_environment(tmp_path: Path) -> str:
    """A kernel spec (in tmp_path/jupyter) running a new venv's Python that sees this interpreter's
    packages; return its name."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # this interpreter's site-packages (numpy, matplotlib, ipykernel, pip), behind the venv's own;
    # py/ is not among them, so lessonpy is importable only once the notebook installed its wheel
    shared = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib) / "shared-with-tests.pth").write_text("\n".join(shared) + "\n")
    spec = tmp_path / "jupyter" / "kernels" / "lesson-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "lesson test", "language": "python",
        # offline pip; nothing of this test run leaks in (a PYTHONPATH to py/, an Agg backend):
        # the kernel sees what a reader's Jupyter gives it
        "env": {"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONNOUSERSITE": "1",
                "PYTHONPATH": "", "MPLBACKEND": "module://matplotlib_inline.backend_inline"},
    }))
    return "lesson-test"


@pytest.fixture(scope="module", params=LESSONS, ids=lambda lesson: lesson.slug)
def executed(request, tmp_path_factory):
    """The notebook as a reader runs it, plus cells a reader would add: solutions, a bad array."""
    lesson = request.param
    tmp = tmp_path_factory.mktemp("notebook")
    folder = tmp / "download"
    wheel = build_wheel(ROOT / "py", folder)  # the reader's folder: the wheel next to the notebook
    # ... and the real-heads data files the page links beside it
    data = lesson.data
    for f in data:
        shutil.copy(f, folder / f.name)
    nb = lesson_notebook(lesson, wheel.name, [f.name for f in data])
    # What a reader does next: answer each exercise with its solution and check it again,
    # look at where lessonpy came from, and pass show_attention a bad array.
    solutions = {ex["id"]: ex["solution"] for ex in _exercises(lesson)}
    for ex_id, starter, check in exercise_cells(nb):
        nb.cells.append(nbformat.v4.new_code_cell(f"%%exercise {ex_id}\n{solutions[ex_id]}",
                                                  metadata={"test": {"solution": ex_id}}))
        nb.cells.append(nbformat.v4.new_code_cell(check.source, metadata={"test": {"solved": ex_id}}))
    nb.cells.append(nbformat.v4.new_code_cell("import lessonpy\nprint(lessonpy.__file__)", metadata={"test": {"where": 1}}))
    # imported here: a lesson that draws no attention (Lesson 6) never imports show_attention itself
    nb.cells.append(nbformat.v4.new_code_cell(f"from lessonpy.maths.show import show_attention\n{BAD_SHOW}",
                                              metadata={"test": {"bad": 1}, "tags": ["raises-exception"]}))
    nbformat.validate(nb)
    (folder / "lesson.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")

    kernel = kernel_environment(tmp)
    client = NotebookClient(nb, kernel_name=kernel, timeout=120, resources={"metadata": {"path": str(folder)}})
    with pytest.MonkeyPatch.context() as env:
        env.setenv("JUPYTER_PATH", str(tmp / "jupyter"))
        client.execute()  # raises CellExecutionError on any error a cell did not declare
    return nb, lesson, tmp


def _exercises(lesson):
    return [parse_exercise(*fence) for fence in fences_of(lesson, "exercise")]


def stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def by_lesson_cell(nb):
    return {c.metadata["lesson"]["cell"]: c for c in nb.cells if "cell" in c.metadata.get("lesson", {})}


def test_every_lesson_cell_ran_without_error(executed):
    nb, lesson, _ = executed
    cells = by_lesson_cell(nb)
    assert list(cells) == [c.id for c in lesson.cells]
    for cell in cells.values():
        assert cell.execution_count, cell.metadata
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source


def test_the_printed_numbers_equal_the_pages(executed):
    nb, lesson, _ = executed
    cells, numbers = by_lesson_cell(nb), numbers_of(lesson)
    missing = [(cell_id, key) for cell_id, keys in lesson.prints.items() for key in keys
               if numbers[key] not in stdout(cells[cell_id])]
    assert not missing, missing


def test_show_attention_draws_a_matplotlib_figure_where_the_cell_runs(executed):
    nb, _, _ = executed
    showing = [c for c in by_lesson_cell(nb).values() if "show_attention(" in c.source]
    if not showing:
        pytest.skip("no cell of this lesson calls show_attention")
    for cell in showing:
        images = [o for o in cell.outputs if o.output_type == "display_data" and "image/png" in o.data]
        assert images, cell.source


def test_one_call_per_picture_one_figure_even_when_a_cell_feeds_two_page_views(executed):
    nb, lesson, _ = executed
    if lesson.slug != "attention":
        pytest.skip("Lesson 4's show cell")
    cell = by_lesson_cell(nb)["show"]  # sends the same arrays to the linked view and the step-through
    assert cell.source.count("show_attention(") == 1 and "for view in" in cell.source
    images = [o for o in cell.outputs if o.output_type == "display_data" and "image/png" in o.data]
    assert len(images) == 1, len(images)


def test_a_bad_array_gets_the_pages_one_line_message(executed):
    nb, _, _ = executed
    cell = next(c for c in nb.cells if c.metadata.get("test", {}).get("bad"))
    with pytest.raises(ShowError) as expected:
        eval(BAD_SHOW)  # noqa: S307 (the same call, here, for the message the page shows)
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert errors and errors[0].ename == "ShowError"
    assert errors[0].traceback == [f"ShowError: {expected.value}"]
    assert not any(o.output_type == "display_data" for o in cell.outputs)


def test_lessonpy_came_from_the_wheel_next_to_the_notebook(executed):
    nb, _, tmp = executed
    cell = next(c for c in nb.cells if c.metadata.get("test", {}).get("where"))
    assert stdout(cell).strip().startswith(str(tmp / "venv")), stdout(cell)
    setup = next(c for c in nb.cells if c.cell_type == "code")
    assert "Successfully installed lessonpy" in stdout(setup)


def test_exercise_checks_run_the_pages_checks_with_the_same_messages(executed):
    nb, lesson, _ = executed
    exercises = {ex["id"]: ex for ex in _exercises(lesson)}
    solved = {c.metadata["test"]["solved"]: c for c in nb.cells if "solved" in c.metadata.get("test", {})}
    for ex_id, _, check in exercise_cells(nb):
        ex = exercises[ex_id]
        starter = grading.grade(ex["starter"], ex["check"], timeout=ex["timeout"])
        assert stdout(check).strip() == report(starter).strip()
        solution = grading.grade(ex["solution"], ex["check"], timeout=ex["timeout"])
        assert solution["correct"], ex_id
        assert stdout(solved[ex_id]).strip() == report(solution).strip()
