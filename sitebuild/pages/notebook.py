"""The lesson as a Jupyter notebook (``lessons/<slug>/<slug>.ipynb``), written with nbformat.

Readers take the lesson home: the notebook has the page's prose as Markdown (maths as its
TeX, ``{{ num.* }}`` filled in), every runnable cell as a code cell in page order, the
quizzes with their answers folded in ``<details>``, each exercise as a ``%%exercise`` cell
plus a cell that runs the page's checks, and the PyTorch files as ``%%writefile`` cells (a runnable
include, ``python run include=FILE``, stays an ordinary code cell).
Widgets become a short note; ``show_attention`` draws with matplotlib in the notebook
(see :mod:`lessonpy.maths.notebook`). The page's "Download with my edits" starts from this same
file and swaps in the reader's saved code (``static/js/page/notebook.js``), using the
``metadata.lesson`` of each cell: ``{"cell": id}`` or ``{"exercise": id}``.

The notebook is made from the lesson's source text, cut along the parsed tokens' lines, so
the Markdown is the author's own, not a re-rendering of it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbformat import v4

from . import aside
from . import math as lesson_math
from . import numbers as lesson_numbers
from .practice import parse_exercise, parse_quiz, quiz_orders, shown_choices
from .lessons import Lesson, LessonError, make_parser, parse_fence_info
from .widget_fence import parse_widget
from . import widget_specs

#: While a prose chunk is parsed, its ``{{ num.* }}`` placeholders are replaced by these slots, to
#: learn which sit in maths (written 2{,}359), in text, or in code (left alone, as on the page).
_SLOT = "lessonnumberslot{}x"
_SLOT_RE = re.compile(r"lessonnumberslot(\d+)x")
#: A Markdown link to a page of the site ([text](../causal-mask/#part): no scheme, not an anchor of this page). A
#: downloaded notebook has no site beside it, so the link would lead nowhere: the notebook keeps its text alone.
_SITE_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\((?![a-zA-Z][a-zA-Z0-9+.-]*:|#)[^)\s]+\)")


def notebook_name(lesson: Lesson) -> str:
    """The notebook's file name, next to the lesson's page."""
    return f"{lesson.slug}.ipynb"


def lesson_notebook(lesson: Lesson, wheel_name: str, data_files: Sequence[str] = ()) -> nbformat.NotebookNode:
    """The notebook of *lesson*; its first cell installs the helpers from *wheel_name* next to it and
    names the *data_files* its cells read from the notebook's folder."""
    builder = _Builder(lesson)
    kinds = {t.info.split(maxsplit=1)[0] for t in lesson.tokens if t.type == "fence" and t.info.strip()}
    intro = ["This notebook is the lesson's page, to keep experimenting in Jupyter, VS Code or Colab "
             "(no Jupyter yet? `python3 -m pip install jupyterlab`, then `jupyter lab` in this folder). "
             "Run the cells in order (or *Run all*)."]
    if "quiz" in kinds:
        intro.append("The quiz answers are folded under each question.")
    if "exercise" in kinds:
        intro.append("Each exercise has a cell for your answer and a cell that checks it.")
    if "widget" in kinds:
        intro.append("The interactive widgets stay on the page: a short note says what each one shows.")
    builder.markdown(f"# {lesson.title}\n\n" + " ".join(intro))
    builder.flush()
    builder.code(_setup_code(wheel_name, _view_settings(lesson), data_files), {"setup": True})
    builder.walk()
    nb = v4.new_notebook(cells=builder.cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
        "lesson": {"slug": lesson.slug, "title": lesson.title},
    })
    nbformat.validate(nb)
    return nb


def write_notebook(lesson: Lesson, folder: Path, wheel_name: str, data_files: Sequence[str] = ()) -> Path:
    """Write the lesson's notebook into *folder* (the lesson page's folder); return its path."""
    path = folder / notebook_name(lesson)
    path.write_text(nbformat.writes(lesson_notebook(lesson, wheel_name, data_files)), encoding="utf-8")
    return path


def _setup_code(wheel_name: str, views: dict[str, dict], data_files: Sequence[str] = ()) -> str:
    data = (f"# The real-heads cells read {', '.join(data_files)}, linked there too: save them beside it.\n"
            if data_files else "")
    code = (
        "# What this notebook needs: numpy, matplotlib and the lesson's own helpers, lessonpy.\n"
        f"# lessonpy is the wheel {wheel_name}, linked next to \"Download notebook\" on the\n"
        "# lesson's page: save it in the same folder as this notebook (in Colab, upload it first).\n"
        f"{data}"
        "# With numpy and matplotlib already installed, this cell works offline.\n"
        "%pip install numpy matplotlib\n"
        f"%pip install --no-deps --force-reinstall {wheel_name}\n"
        "%load_ext lessonpy.maths.notebook"
    )
    if views:
        code += ("\n# the titles and first query rows of the page's views, for show_attention's figures\n"
                 f"page_views({views!r})")
    return code


def _view_settings(lesson: Lesson) -> dict[str, dict]:
    """{view id: {title, row}} of the views that show_attention targets, where the fence sets them."""
    settings = {}
    for token in lesson.tokens:
        if token.type != "fence" or not token.info.startswith("widget"):
            continue
        line = token.map[0] + 1
        _, flags, options = parse_fence_info(token.info, lesson.source_path, line)
        spec = parse_widget(token.content, options, {"path": lesson.source_path, "line": line, "flags": flags})
        if widget_specs.specs()[spec["name"]].receives == "attention":  # the views show_attention targets
            chosen = {key: spec["options"][key] for key in ("title", "row") if spec["options"].get(key) is not None}
            if chosen:
                settings[spec["id"]] = chosen
    return settings


class _Builder:
    """Walks a lesson's top-level tokens and collects notebook cells in page order."""

    def __init__(self, lesson: Lesson):
        self.lesson = lesson
        self.quiz_orders = quiz_orders(lesson.tokens, lesson.slug, lesson.source_path)  # the page's order
        self.lines = lesson.source_path.read_text(encoding="utf-8").splitlines(keepends=True)
        self.cells: list = []
        self.pending: list[str] = []  # Markdown waiting for the next cell boundary
        self.count = itertools.count()
        self.md = make_parser()  # the page's own Markdown rules, to tell maths from text and code
        self.values = None
        module = lesson.meta.get("numbers")
        if module:
            self.values = lesson_numbers.load_numbers(str(module), (lesson.source_path.parent,))

    # -- cells --------------------------------------------------------------------------

    def _id(self, kind: str) -> str:
        # Starts with a digit: lesson ids start with a letter, so the two never collide.
        return f"{next(self.count)}-{kind}"

    def markdown(self, text: str) -> None:
        if text.strip():
            self.pending.append(text.strip("\n"))

    def flush(self) -> None:
        if self.pending:
            self.cells.append(v4.new_markdown_cell("\n\n".join(self.pending), id=self._id("md")))
            self.pending = []

    def code(self, source: str, lesson_meta: dict, cell_id: str | None = None) -> None:
        self.flush()
        self.cells.append(v4.new_code_cell(source.rstrip("\n"), id=cell_id or self._id("code"),
                                           metadata={"lesson": lesson_meta}))

    # -- the walk -----------------------------------------------------------------------

    def walk(self) -> None:
        tokens = self.lesson.tokens
        start = 0  # the first source line not yet used
        level = 0  # the level of the lesson's own blocks: 1 inside an aside, whose blocks are the lesson's too
        closing = 0  # inside an aside: the line of its closing :::
        for token in tokens:
            if token.type == aside.OPEN:
                self.prose(start, token.map[0])
                self.markdown(f"**{self.fill_numbers(aside.title_of(token))}**")  # the page's summary line
                level, start, closing = 1, token.map[0] + 1, token.map[1]
                continue
            if token.type == aside.CLOSE:
                self.prose(start, closing)
                level, start = 0, closing + 1
                continue
            if token.meta.get("cell_id") and token.level != level:
                raise LessonError(self.lesson.source_path, token.map[0] + 1, "a runnable cell inside a list or a quote "
                                  "cannot become a notebook cell: put it on its own, outside the list")
            if token.level != level or not token.map:
                continue
            if token.type == "front_matter":
                start = token.map[1]
            elif token.type == "heading_open" and token.map[0] > start:
                self.prose(start, token.map[0])
                self.flush()  # one Markdown cell per section: Jupyter's outline follows the headings
                start = token.map[0]
            elif token.type == "fence":
                self.prose(start, token.map[0])
                self.fence(token)
                start = token.map[1]
        self.prose(start, len(self.lines))
        self.flush()

    def prose(self, begin: int, end: int) -> None:
        self.markdown(_SITE_LINK.sub(r"\1", self.fill_numbers("".join(self.lines[begin:end]))))

    def fill_numbers(self, text: str) -> str:
        """Fill ``{{ num.* }}`` as the page does: values in prose, ``2{,}359`` in maths, code untouched."""
        found = list(lesson_numbers.PLACEHOLDER.finditer(text))
        if not found or self.values is None:
            return text
        counter = itertools.count()
        marked = lesson_numbers.PLACEHOLDER.sub(lambda _: _SLOT.format(next(counter)), text)
        kinds: dict[int, str] = {}
        for token in self.md.parse(marked):
            for leaf in (token.children or []) if token.type == "inline" else [token]:
                kind = "maths" if leaf.type in lesson_math.MATH_TOKENS else "text" if leaf.type == "text" else "code"
                for slot in _SLOT_RE.findall(leaf.content):
                    kinds[int(slot)] = kind

        def fill(match: re.Match) -> str:
            original = found[int(match.group(1))].group(0)
            kind = kinds.get(int(match.group(1)), "text")
            if kind == "code":
                return original
            return lesson_numbers.substitute(original, self.values, kind == "maths")[0]  # names checked by read_lesson
        return _SLOT_RE.sub(fill, marked)

    def fence(self, token) -> None:
        line = token.map[0] + 1
        lang, flags, options = parse_fence_info(token.info, self.lesson.source_path, line)
        env = {"path": self.lesson.source_path, "line": line, "flags": flags}
        cell_id = token.meta.get("cell_id")
        if cell_id:
            # a runnable include is an ordinary code cell (the file's text), not a %%writefile: it is run, not kept
            include = token.meta.get("include")
            fold = options.get("fold")
            if include or fold:
                self.markdown(" ".join(part for part in (fold and f"**{fold}**", include and f"`{include}`") if part))
            self.code(token.content, {"cell": cell_id}, cell_id=cell_id)
        elif lang == "quiz":
            self.quiz(parse_quiz(token.content, options, env))
        elif lang == "exercise":
            self.exercise(parse_exercise(token.content, options, env))
        elif lang == "widget":
            name = flags[0] if flags else "widget"
            known = widget_specs.specs().get(name)  # what it is on the page: its spec's note
            note = known.note if known else "an interactive picture."
            self.markdown(f"> **On the page:** {note}")
        else:
            self.static_code(token, lang, options)

    def static_code(self, token, lang: str, options: dict) -> None:
        """A Python file the reader is meant to keep becomes ``%%writefile``; other code stays Markdown."""
        include = token.meta.get("include")
        name = (include.rsplit("/", 1)[-1] if include else options.get("title")) or ""
        if lang == "python" and name.endswith(".py") and "lines" not in options and "/" not in name:
            self.code(f"%%writefile {name}\n{token.content}", {"file": name})
            return
        caption = f"**{name}**\n\n" if name else ""
        fence = "~~~~" if "```" in token.content else "```"
        self.markdown(f"{caption}{fence}{lang}\n{token.content}{fence}")

    def quiz(self, quiz: dict) -> None:
        letters = "ABCDEFGHIJ"
        choices = [c for _, c in shown_choices(quiz, {"quiz_orders": self.quiz_orders})]
        parts = [f"**Question.** {quiz['question'].strip()}", ""]
        parts += [f"- **{letters[i]}.** {c['text'].strip()}" for i, c in enumerate(choices)]
        right = ", ".join(letters[i] for i, c in enumerate(choices) if c["correct"])
        answer = [f"**{right}** {'is' if len(right) == 1 else 'are'} right.", ""]
        answer += [f"- **{letters[i]}** ({'right' if c['correct'] else 'wrong'}): {c['why'].strip()}"
                   for i, c in enumerate(choices)]
        if quiz["explain"]:
            answer += ["", quiz["explain"].strip()]
        self.markdown("\n".join(parts) + "\n\n" + _details("Answer", "\n".join(answer)))
        self.flush()

    def exercise(self, ex: dict) -> None:
        parts = [f"### Exercise: {ex['title']}", ex["prompt"].strip(),
                 f"Write your answer in the `%%exercise {ex['id']}` cell below and run it, then run the cell after "
                 "it: it runs the page's checks on your code."]
        parts += [_details(f"Hint {i}", hint.strip()) for i, hint in enumerate(ex["hints"], 1)]
        parts.append(_details("Solution", f"```python\n{ex['solution']}```"))
        for part in parts:
            self.markdown(part)
        self.code(f"%%exercise {ex['id']}\n{ex['starter']}", {"exercise": ex["id"]})
        self.code(f"check_exercise({ex['id']!r}, check={ex['check']!r}, timeout={ex['timeout']!r})", {"check": ex["id"]})


def _details(summary: str, body: str) -> str:
    # Blank lines around the body: Jupyter renders Markdown inside an HTML block only then.
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"
