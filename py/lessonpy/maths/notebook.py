"""The lesson as a Jupyter notebook: what the downloaded ``.ipynb`` loads with ``%load_ext lessonpy.maths.notebook``.

In the page, :mod:`lessonpy.runtime.pyodide_glue` installs the bridge's sink and the canvases draw the
arrays. Outside the page nothing is installed; this extension is the one place that says
"not in the page" and what to do instead:

* ``show_attention`` (and anything else that emits ``"arrays"``) draws with matplotlib
  (:mod:`lessonpy.maths.show_mpl`) in the cell that called it, with the title and query row of the
  page's view it targets (:func:`page_views`, called by the notebook's first cell); a :class:`~lessonpy.maths.show.ShowError`
  shows as its one-line message, as the page shows it (its ``_render_traceback_``). ``show_lookup``'s
  events (view ``"lookup"``) draw the lookup at a few temperatures (:mod:`lessonpy.maths.lookup_mpl`), and a
  lesson's own view as its module registered in :data:`lessonpy.maths.show.FIGURES` (Lesson 6's
  ``show_residual_stream``: the stream's chart at one position, :mod:`lessonpy.course.block.stream_mpl`).
* Exercises: a cell starting with ``%%exercise ID`` hands its code to the check, without
  running it in the notebook's namespace (the page never does either); the cell after it
  calls :func:`check_exercise`, which grades that code with :func:`lessonpy.maths.grading.grade`:
  the same stages, the same checks, the same messages as the page's "Check my answer".
  The answer is taken from the cell magic rather than from IPython's input history, so it is
  always the exercise's own cell, however often and in whatever order cells were run.
"""

from __future__ import annotations

from ..runtime import bridge
from . import grading, lookup_mpl, show, show_mpl

#: The code of each exercise's ``%%exercise ID`` cell, as last run.
answers: dict[str, str] = {}
#: How the page's views start, by id: {"title": ..., "row": ...} (see :func:`page_views`).
views: dict[str, dict] = {}
#: The payloads drawn by the running cell: a cell that sends the same arrays to two of the page's
#: views (a linked view and a step-through, say) gets one figure, not two identical ones.
_drawn_this_cell: list[tuple] = []


def page_views(settings: dict[str, dict]) -> None:
    """Tell the figures what the page's views say: a view's title, and the query row it starts on."""
    views.update(settings)


def _sink(event_type: str, payload: dict) -> None:
    if event_type == "arrays" and payload.get("view") == "attention":
        key = _figure_key(payload)
        if key in _drawn_this_cell:
            return
        _drawn_this_cell.append(key)
        view = views.get(payload.get("target") or "", {})
        # the inline backend shows the figure when the cell ends
        show_mpl.draw(payload, row=view.get("row") or 0, title=view.get("title"))
    elif event_type == "arrays" and payload.get("view") == "lookup":
        lookup_mpl.draw(payload)  # no slider here: the lookup cell's four temperatures side by side
    elif event_type == "arrays" and payload.get("view") in show.FIGURES:
        show.FIGURES[payload["view"]](payload)  # a lesson's own view, drawn as its module registered


def _figure_key(payload: dict) -> tuple:
    """What makes two figures the same picture: the arrays and tokens (the target only names a page view)."""
    arrays = payload.get("arrays") or {}
    return (tuple(payload.get("tokens") or ()), payload.get("title"),
            tuple((name, getattr(a, "shape", None), getattr(a, "tobytes", lambda: repr(a))())
                  for name, a in sorted(arrays.items())))


def _new_cell(*_args) -> None:
    _drawn_this_cell.clear()


def exercise(line: str, cell: str) -> None:
    """``%%exercise ID``: keep the cell's code as the answer to exercise ID (the next cell checks it)."""
    exercise_id = line.strip()
    if not exercise_id:
        print("Name the exercise: %%exercise ID (the id its check cell uses).")
        return
    answers[exercise_id] = cell
    print(f"Your answer to {exercise_id!r} is ready: run the next cell to check it.")


def check_exercise(exercise_id: str, check: str, timeout: float = 5.0) -> None:
    """Grade the last-run ``%%exercise ID`` cell with the page's checks and print the verdict."""
    code = answers.get(exercise_id)
    if code is None:
        print(f"Run the %%exercise {exercise_id} cell above first: it hands your answer to this check.")
        return
    print(report(grading.grade(code, check, timeout=timeout)))


def report(result: dict) -> str:
    """A graded result as text: a summary line, each check with ✓ or ✗, the error, what the code printed."""
    checks = result["checks"]
    if result["correct"]:
        lines = [f"Solved! All {len(checks)} checks pass."]
    elif result["stage"] == "checks":
        failed = sum(not c["correct"] for c in checks)
        lines = [f"Not yet: {failed} of {len(checks)} checks fail."]
    else:
        lines = [f"Not checked ({result['stage']})."]
    lines += [f"{'✓' if c['correct'] else '✗'} {c['message']}" for c in checks]
    if result["error"]:
        lines.append(result["error"])
    if result["output"]:
        lines += ["Your code printed:", result["output"].rstrip("\n")]
    return "\n".join(lines)


def load_ipython_extension(ipython) -> None:
    """``%load_ext lessonpy.maths.notebook``: draw with matplotlib, ``%%exercise`` and ``check_exercise``."""
    bridge.install_sink(_sink)
    ipython.events.register("pre_run_cell", _new_cell)
    ipython.register_magic_function(exercise, magic_kind="cell", magic_name="exercise")
    ipython.push({"check_exercise": check_exercise, "page_views": page_views})


def unload_ipython_extension(ipython) -> None:
    """``%unload_ext lessonpy.maths.notebook``: back to recording events."""
    bridge.install_sink(None)
    ipython.events.unregister("pre_run_cell", _new_cell)
