"""The lesson's practice blocks: ```quiz and ```exercise fences with a YAML body.

A quiz (one question; radio buttons when one choice is correct, checkboxes when several are)::

    ```quiz id=scale
    question: Why divide the scores by **√d_k**?
    choices:
      - text: To keep their variance near 1
        correct: true
        why: A dot product of d_k unit-variance terms has variance d_k.
      - text: To make the softmax faster
        why: It costs the same either way.
    explain: Optional, shown once the answer is right.
    ```

An exercise (starter code in an editor, hidden checks in the lesson's ``py/lessonpy/course/<slug>/exercises.py``)::

    ```exercise id=split-qkv
    title: Split the fused projection into heads
    prompt: Markdown…
    starter: |
      code with ____ blanks
    hints: [Markdown, …]           # optional, revealed one at a time
    solution: |
      the reference solution
    check: split_qkv               # optional: default the id with - replaced by _
    timeout: 5                     # optional: seconds the reader's code may run
    ```

Everything is validated strictly; a mistake is a LessonError naming the line in the lesson
file. The HTML works as a static page (a quiz is a real fieldset, the code is all there,
coloured near the screen by highlight.js); quiz.js brings a quiz to life from its attributes, exercises.js an
exercise from its HTML and a JSON data block.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import html
import json
import re
from typing import Any

import yaml

from markdown_it.token import Token

from .lessons import CELL_ID_PATTERN, LessonError, make_parser, parse_fence_info
from ..project import lessonpy
from .markup import code_standin, highlighted_pre, json_for_script
from .quiz_order import option_key, shuffled, spread_orders

QUIZ_KEYS = {"question": True, "choices": True, "explain": False}  # key -> required
CHOICE_KEYS = {"text": True, "correct": False, "why": True}
EXERCISE_KEYS = {"title": True, "prompt": True, "starter": True, "hints": False, "solution": True,
                 "check": False, "timeout": False, "wrong": False}
#: An item of an exercise's ``wrong:`` list: a plausible wrong answer and the words its feedback must hold.
WRONG_KEYS = {"code": True, "says": True}
MAX_TIMEOUT = 60

_MD = make_parser()


# ---------------------------------------------------------------------------- reading a block

class Block:
    """A fence's YAML body, with the line of every key and list item for error messages."""

    def __init__(self, kind: str, content: str, options: dict[str, str], env: dict):
        self.kind, self.env = kind, env
        self.path, self.fence_line = env.get("path", "?"), env.get("line", 1)
        self.lines: dict[tuple, int] = {}
        extra = set(options) - {"id"}
        if extra:
            self.error(f"unknown option {sorted(extra)[0]!r} on the ```{kind} line (only id=NAME)")
        self.id = options.get("id", "")
        if not self.id:
            self.error(f"a {kind} needs an id=NAME on its ``` line (the page keeps the reader's work under it)")
        if not CELL_ID_PATTERN.match(self.id):
            self.error(f"{kind} id {self.id!r} must start with a letter and use letters, digits, - or _")
        self._check_unique_id()
        try:
            node = yaml.compose(content, Loader=yaml.SafeLoader)
            self.data = yaml.safe_load(content)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            self.error(f"{kind} {self.id!r} is not valid YAML: {getattr(exc, 'problem', None) or exc}",
                       mark.line if mark else None)
        if not isinstance(self.data, dict):
            self.error(f"the body of {kind} {self.id!r} must be YAML 'key: value' lines")
        self._map_lines(node, ())

    def line_of(self, path: tuple = ()) -> int:
        """The lesson file's line of the YAML key or item at *path* (the fence line if unknown)."""
        offset = self.lines.get(path)
        return self.fence_line if offset is None else self.fence_line + 1 + offset

    def error(self, message: str, offset: int | tuple | None = None):
        """Raise a LessonError at a YAML line offset, a key path, or the fence line."""
        if isinstance(offset, tuple):
            line = self.line_of(offset)
        else:
            line = self.fence_line if offset is None else self.fence_line + 1 + offset
        raise LessonError(self.path, line, message)

    def _map_lines(self, node, path: tuple) -> None:
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, value in node.value:
                name = key.value
                if name in seen:
                    self.error(f"{self.kind} {self.id!r}: key {name!r} appears twice "
                               f"(first on line {self.fence_line + 1 + seen[name]})", key.start_mark.line)
                seen[name] = key.start_mark.line
                self.lines[path + (name,)] = key.start_mark.line
                self._map_lines(value, path + (name,))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self.lines[path + (i,)] = item.start_mark.line
                self._map_lines(item, path + (i,))

    def _check_unique_id(self) -> None:
        # Fences render in page order and share env["fence_ids"], so the first one keeps its id.
        seen = self.env.get("fence_ids")
        if seen is None:
            return  # a renderer called on its own: no page to compare with
        line = seen.setdefault((self.kind, self.id), self.fence_line)
        if line != self.fence_line:
            self.error(f"{self.kind} id {self.id!r} is already used by the {self.kind} on line {line}")

    # -- typed access ---------------------------------------------------------------------

    def check_keys(self, mapping: dict, allowed: dict[str, bool], path: tuple, what: str) -> None:
        """Refuse unknown keys (suggesting the closest known one) and missing required ones."""
        for key in mapping:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else f" (known keys: {', '.join(allowed)})"
                self.error(f"{what}: unknown key {key!r}{hint}", path + (key,))
        for key, required in allowed.items():
            if required and key not in mapping:
                self.error(f"{what}: {key!r} is missing", path or None)

    def text(self, mapping: dict, key: str, path: tuple, what: str, required: bool = True) -> str | None:
        """A non-empty string value (numbers and the like are refused: quote them)."""
        value = mapping.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            self.error(f"{what}: {key!r} must be non-empty text", path + (key,))
        return value


def inline(text: str) -> str:
    """Markdown of one line or phrase (emphasis, code, links) as HTML."""
    return _MD.renderInline(text.strip())


def block(text: str) -> str:
    """Markdown paragraphs as HTML."""
    return _MD.render(text)


# ---------------------------------------------------------------------------- quiz

def parse_quiz(content: str, options: dict[str, str], env: dict) -> dict:
    """Validate a quiz fence; return {id, question, choices: [{text, correct, why}], explain}."""
    b = Block("quiz", content, options, env)
    what = f"quiz {b.id!r}"
    b.check_keys(b.data, QUIZ_KEYS, (), what)
    question = b.text(b.data, "question", (), what)
    choices = b.data["choices"]
    if not isinstance(choices, list) or len(choices) < 2:
        b.error(f"{what}: 'choices' must be a list of at least two choices", ("choices",))
    parsed = []
    for i, choice in enumerate(choices):
        where, label = ("choices", i), f"{what}, choice {i + 1}"
        if not isinstance(choice, dict):
            b.error(f"{label} must have 'text:', 'why:' and optionally 'correct: true'", where)
        b.check_keys(choice, CHOICE_KEYS, where, label)
        correct = choice.get("correct", False)
        if not isinstance(correct, bool):
            b.error(f"{label}: 'correct' must be true or false, not {correct!r}", where + ("correct",))
        parsed.append({"text": b.text(choice, "text", where, label), "correct": correct,
                       "why": b.text(choice, "why", where, label)})
    if not any(c["correct"] for c in parsed):
        b.error(f"{what}: no choice is marked 'correct: true'", ("choices",))
    texts = [c["text"].strip() for c in parsed]
    for i, text in enumerate(texts):
        if texts.index(text) != i:
            b.error(f"{what}: choice {i + 1} repeats choice {texts.index(text) + 1}", ("choices", i))
    return {"id": b.id, "question": question, "choices": parsed, "explain": b.text(b.data, "explain", (), what, False)}


def quiz_orders(tokens: list[Token], slug: str, path) -> dict[str, list[int]]:
    """{quiz id: the order its choices are shown in} for a lesson's tokens (quiz_order.py); the page and the
    notebook both show this order."""
    quizzes = []
    for token in tokens:
        if token.type != "fence" or token.meta.get("cell_id"):
            continue
        line = (token.map[0] + 1) if token.map else 1
        lang, flags, options = parse_fence_info(token.info, path, line)
        if lang == "quiz":
            quizzes.append((parse_quiz(token.content, options, {"path": path, "line": line, "flags": flags}), line))
    first = {quiz["id"]: (quiz, line) for quiz, line in reversed(quizzes)}  # a repeated id: render_quiz refuses it
    return spread_orders(slug, sorted(first.values(), key=lambda q: q[1]), path)


def shown_choices(quiz: dict, env: dict) -> list[tuple[int, dict]]:
    """The quiz's (lesson-order index, choice) pairs in the order the reader sees them: the lesson's
    ``env["quiz_orders"]`` (quiz_orders), or for a quiz rendered on its own its shuffle in no lesson."""
    order = env.get("quiz_orders", {}).get(quiz["id"]) or shuffled("", quiz["id"], len(quiz["choices"]))
    return [(i, quiz["choices"][i]) for i in order]


def render_quiz(content: str, options: dict[str, str], env: dict) -> str:
    """A quiz: fieldset, legend, native radios or checkboxes, Check, a live feedback area.

    Not a ``<form>``: when a page has loaded, Chromium's autofill visits each form and lays out its
    controls, content-visibility or not; Lesson 4's 12 quiz forms cost one forced style and layout
    pass each, in one 200-800 ms task on a phone's CPU. quiz.js gives Enter its form meaning (Check)."""
    quiz = parse_quiz(content, options, env)
    qid = html.escape(quiz["id"])
    multiple = sum(c["correct"] for c in quiz["choices"]) > 1
    kind = "checkbox" if multiple else "radio"
    # what quiz.js needs beyond the form itself, as the quiz's attributes (a quiz's own data script was 12 of
    # Lesson 4's elements): the right choices' keys; every key in the lesson's order, as saved answers name
    # choices by that index (they did before the shuffle); and the version a saved answer must have been given to
    keys = [option_key(quiz["id"], c["text"]) for c in quiz["choices"]]
    correct = " ".join(key for key, c in zip(keys, quiz["choices"]) if c["correct"])
    parts = [f'<div class="quiz" data-quiz="{qid}" id="quiz-{qid}" data-correct="{correct}" '
             f'data-authored="{" ".join(keys)}" data-version="{_version(quiz)}">\n<fieldset>\n'
             f'<legend class="quiz-question">{inline(quiz["question"])}</legend>\n']
    if multiple:
        parts.append('<p class="quiz-instructions">Choose every answer that applies.</p>\n')
    parts.append('<ul class="quiz-choices">\n')
    for i, choice in shown_choices(quiz, env):
        cid = f"quiz-{qid}-{keys[i]}"
        parts.append(f'<li class="quiz-choice"><input type="{kind}" name="quiz-{qid}" id="{cid}" value="{keys[i]}">'
                     f'<label for="{cid}">{inline(choice["text"])}</label>'
                     f'<template class="quiz-why">{inline(choice["why"])}</template></li>\n')
    parts.append("</ul>\n")
    if quiz["explain"]:
        parts.append(f'<template class="quiz-explain">{block(quiz["explain"])}</template>\n')
    parts.append('<div class="quiz-actions"><button type="button" class="quiz-check" disabled>Check</button></div>\n'
                 '<div class="quiz-feedback" aria-live="polite"></div>\n</fieldset>\n</div>\n')
    return "".join(parts)


def _version(data: Any) -> str:
    """A short fingerprint of a block's content: saved answers of an older version are dropped."""
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]


# ---------------------------------------------------------------------------- exercise

def known_checks() -> frozenset[str]:
    """Names of the course's check functions: the registry py/lessonpy/course/checks.py lists."""
    return frozenset(lessonpy("course.checks").__all__)


def _code(b: Block, key: str, what: str) -> str:
    code = b.text(b.data, key, (), what)
    try:
        ast.parse(code)
    except SyntaxError as exc:
        # A block scalar (key: |) starts on the line after its key.
        b.error(f"{what}: the {key} code does not parse: {exc.msg} (its line {exc.lineno})",
                b.lines.get((key,), -1) + (exc.lineno or 1))
    return code.rstrip("\n") + "\n"


def parse_exercise(content: str, options: dict[str, str], env: dict) -> dict:
    """Validate an exercise fence; return {id, title, prompt, starter, hints, solution, check, timeout, wrong}.
    ``wrong`` ([{code, says, line}]) is for the tests alone (tests/unit/test_every_lesson.py grades each and expects
    a failure whose feedback holds ``says``); the page never gets it."""
    b = Block("exercise", content, options, env)
    what = f"exercise {b.id!r}"
    b.check_keys(b.data, EXERCISE_KEYS, (), what)
    hints = b.data.get("hints", []) or []
    if not isinstance(hints, list):
        b.error(f"{what}: 'hints' must be a list of Markdown texts", ("hints",))
    for i, hint in enumerate(hints):
        if not isinstance(hint, str) or not hint.strip():
            b.error(f"{what}: hint {i + 1} must be non-empty text (quote it if it holds ': ')", ("hints", i))
    check = b.data.get("check", b.id.replace("-", "_"))
    if not isinstance(check, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", check):
        b.error(f"{what}: 'check' must name a function, not {check!r}", ("check",))
    names = known_checks()
    if check not in names:
        close = difflib.get_close_matches(check, names, n=1)
        b.error(f"{what}: no check function {check!r} in py/lessonpy/course/checks.py"
                + (f" (did you mean {close[0]!r}?)" if close else ""), ("check",) if "check" in b.data else None)
    timeout = b.data.get("timeout", 5)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT:
        b.error(f"{what}: 'timeout' must be a number of seconds between 0 and {MAX_TIMEOUT}", ("timeout",))
    wrong = b.data.get("wrong", []) or []
    if not isinstance(wrong, list):
        b.error(f"{what}: 'wrong' must be a list of {{code: ..., says: ...}}: wrong answers and what their "
                "feedback says", ("wrong",))
    for i, item in enumerate(wrong):
        if not isinstance(item, dict):
            b.error(f"{what}: wrong answer {i + 1} must be 'code: ...' and 'says: ...'", ("wrong", i))
        b.check_keys(item, WRONG_KEYS, ("wrong", i), what)
        for key in WRONG_KEYS:
            b.text(item, key, ("wrong", i), what)
    return {"id": b.id, "title": b.text(b.data, "title", (), what).strip(), "prompt": b.text(b.data, "prompt", (), what),
            "starter": _code(b, "starter", what), "hints": hints, "solution": _code(b, "solution", what),
            "check": check, "timeout": timeout,
            "wrong": [{"code": item["code"], "says": item["says"], "line": b.line_of(("wrong", i))}
                      for i, item in enumerate(wrong)]}


def render_exercise(content: str, options: dict[str, str], env: dict) -> str:
    """An exercise: heading, prompt, starter code (an editor once the page starts), buttons, feedback."""
    ex = parse_exercise(content, options, env)
    eid = html.escape(ex["id"])
    # the starter and the solution are in the HTML below, once (exercises.js reads them there)
    data = {key: ex[key] for key in ("id", "title", "check", "timeout")}
    hints = "".join(f'<li class="exercise-hint" hidden>{block(h)}</li>' for h in ex["hints"])
    hint_button = ('<button type="button" class="exercise-hint-button" disabled>Hint</button>'
                   if ex["hints"] else "")
    return (
        f'<section class="exercise" data-exercise="{eid}" id="exercise-{eid}" aria-labelledby="exercise-{eid}-title">\n'
        f'<h3 class="exercise-title" id="exercise-{eid}-title"><span class="exercise-kicker">Exercise</span> '
        f'{html.escape(ex["title"])}<span class="exercise-badge" hidden>Solved</span></h3>\n'
        f'<div class="exercise-prompt">{block(ex["prompt"])}</div>\n'
        f'<div class="exercise-editor">{code_standin(ex["starter"])}</div>\n'
        '<div class="exercise-toolbar">'
        '<button type="button" class="exercise-check" disabled title="Check my answer (Shift+Enter)">Check my answer</button>'
        f'{hint_button}'
        '<button type="button" class="exercise-solution-button" disabled aria-expanded="false" '
        'title="Available after your first attempt">Show solution</button>'
        '<button type="button" class="exercise-reset" hidden title="Put back the starter code">Reset</button>'
        '<span class="exercise-state" aria-live="polite"></span></div>\n'
        f'<ol class="exercise-hints" aria-label="Hints" hidden>{hints}</ol>\n'
        '<div class="exercise-feedback" aria-live="polite" hidden></div>\n'
        f'<div class="exercise-solution" id="exercise-{eid}-solution" hidden>'
        '<p class="exercise-solution-title">A solution</p>'
        f'{highlighted_pre(ex["solution"], "python")}'
        '<button type="button" class="exercise-use-solution">Use this code</button></div>\n'
        f'<script type="application/json" class="exercise-data">{json_for_script(data)}</script>\n'
        "</section>\n"
    )
