"""The cell runner in CPython: the same code runs in the page's Pyodide."""

from cell_runner import run
from lessonpy.runtime.runner import INPUT_MESSAGE, defined_names, no_input


def test_cells_share_a_namespace():
    result, ns = run("a = 2")
    assert result.ok and result.value_repr is None
    result, _ = run("b = a * 21\nb", ns)
    assert result.ok and result.value_repr == "42"


def test_last_expression_value_is_shown_but_not_none():
    assert run("1 + 1")[0].value_repr == "2"
    assert run("print('x')")[0].value_repr is None
    assert run("x = 1\nx;")[0].ok  # a trailing semicolon is still an expression statement


def test_traceback_shows_only_the_readers_frames():
    result, _ = run("import json\ndef f():\n    return json.loads('{')\nf()", cell_id="scores")
    assert not result.ok and result.error_name == "JSONDecodeError"
    assert 'Cell "scores", line 4' in result.error
    assert 'Cell "scores", line 3, in f' in result.error
    assert "    return json.loads('{')" in result.error  # the source line is shown
    assert "json/decoder.py" not in result.error and "runner.py" not in result.error


def test_syntax_error_has_line_and_caret():
    result, _ = run("x = (1,\n")
    assert result.error_name == "SyntaxError"
    assert 'Cell "c1", line 1' in result.error and "never closed" in result.error


def test_name_error_reports_the_missing_name():
    result, _ = run("print(W_q)")
    assert result.error_name == "NameError" and result.missing_name == "W_q"


def test_sys_exit_does_not_escape():
    result, _ = run("import sys\nsys.exit(3)")
    assert not result.ok and result.error_name == "SystemExit" and "still running" in result.error


def test_keyboard_interrupt_is_reported_as_stopped():
    result, _ = run("raise KeyboardInterrupt")
    assert result.error_name == "KeyboardInterrupt" and result.error == "Stopped."


def test_top_level_await_works():
    result, _ = run("import asyncio\nawait asyncio.sleep(0)\n'done'")
    assert result.ok and result.value_repr == "'done'"


def test_broken_repr_does_not_break_the_run():
    result, _ = run("class A:\n    def __repr__(self):\n        raise ValueError('no')\nA()")
    assert result.ok and "repr failed" in result.value_repr


def test_huge_repr_is_cut():
    result, _ = run("'x' * 100_000")
    assert result.ok and len(result.value_repr) < 21_000 and "more characters" in result.value_repr


def test_defined_names_finds_assignments_defs_and_imports():
    code = "import numpy as np\nfrom math import sqrt\nT, D = 4, 8\ndef softmax(z):\n    inner = 1\nclass C: pass"
    assert {"np", "sqrt", "T", "D", "softmax", "C"} <= defined_names(code)
    assert defined_names("x = (") == set()


class Hooks:
    """finish/cleanup hooks that record their calls, and raise what they are told to."""

    def __init__(self, finish_raises=None):
        self.calls, self.finish_raises = [], finish_raises

    def finish(self):
        self.calls.append("finish")
        if self.finish_raises:
            raise self.finish_raises

    def cleanup(self):
        self.calls.append("cleanup")


def test_finish_runs_after_the_code_even_when_it_failed_and_cleanup_always():
    hooks = Hooks()
    result, _ = run("x = 1", finish=hooks.finish, cleanup=hooks.cleanup)
    assert result.ok and hooks.calls == ["finish", "cleanup"]
    hooks = Hooks()
    result, _ = run("1 / 0", finish=hooks.finish, cleanup=hooks.cleanup)
    assert result.error_name == "ZeroDivisionError" and hooks.calls == ["finish", "cleanup"]


def test_stop_during_finish_is_a_plain_stop_and_cleanup_still_runs():
    """Stop while the page renders figures: "Stopped.", no machinery frames, figures closed."""
    hooks = Hooks(finish_raises=KeyboardInterrupt())
    result, _ = run("x = 1", finish=hooks.finish, cleanup=hooks.cleanup)
    assert (result.ok, result.error, result.error_name) == (False, "Stopped.", "KeyboardInterrupt")
    assert hooks.calls == ["finish", "cleanup"]


def test_stop_during_the_code_skips_finish_but_not_cleanup():
    hooks = Hooks()
    result, _ = run("raise KeyboardInterrupt", finish=hooks.finish, cleanup=hooks.cleanup)
    assert result.error == "Stopped." and hooks.calls == ["cleanup"]


def test_an_error_in_finish_is_reported_like_the_cells_own():
    hooks = Hooks(finish_raises=ValueError("x and y must be the same size"))
    result, _ = run("x = 1", finish=hooks.finish, cleanup=hooks.cleanup)
    assert not result.ok and result.error_name == "ValueError"
    assert result.error.strip() == "ValueError: x and y must be the same size"
    assert hooks.calls == ["finish", "cleanup"]


def test_input_says_it_is_not_supported_in_the_page():
    ns = {"__builtins__": {**__builtins__, "input": no_input} if isinstance(__builtins__, dict)
          else {**vars(__builtins__), "input": no_input}}
    result, _ = run("name = input('Your name? ')", ns)
    assert result.error_name == "RuntimeError"
    assert result.error.splitlines()[-1] == f"RuntimeError: {INPUT_MESSAGE}"
    assert "Errno" not in result.error and 'Cell "c1", line 1' in result.error


# ---------------------------------------------------------------------------- huge messages stay within the limits

from lessonpy.runtime.limits import MESSAGE_CHARS, OUTPUT_CHARS  # noqa: E402

HUGE = 10**7  # characters: the whole message once reached the page, and 10**8 crashed the tab


def test_a_huge_message_is_clipped_and_the_traceback_kept():
    result, _ = run(f"def f():\n    raise ValueError('m' * {HUGE})\nf()", cell_id="big")
    assert result.error_name == "ValueError"
    assert len(result.error) < 2 * MESSAGE_CHARS
    assert 'Cell "big", line 3' in result.error and 'Cell "big", line 2, in f' in result.error
    assert result.error.rstrip("\n").splitlines()[-1].startswith("ValueError: mmm")
    assert " characters not shown] … mmm" in result.error


def test_a_huge_class_name_and_exit_code_are_clipped():
    result, _ = run(f"raise type('E' * {HUGE}, (Exception,), {{'__module__': 'reader'}})('boom')")
    assert len(result.error_name) <= MESSAGE_CHARS and result.error_name.startswith("EEE")
    assert len(result.error) < 2 * MESSAGE_CHARS and result.error.rstrip().endswith(": boom")
    result, _ = run(f"import sys\nsys.exit('c' * {HUGE})")
    assert result.error_name == "SystemExit" and len(result.error) < 2 * MESSAGE_CHARS


def test_a_widget_calls_traceback_is_clipped_and_an_ordinary_one_whole():
    """format_exception is how lessonpy.runtime.pyodide_glue.call sends what a widget's or grader's call raised."""
    import traceback

    from lessonpy.runtime.runner import format_exception

    try:
        raise KeyError("k") from ValueError("cause")
    except KeyError as exc:
        assert format_exception(exc) == "".join(traceback.format_exception(exc))  # chained, as it was
    try:
        raise RuntimeError("r" * HUGE)
    except RuntimeError as exc:
        text = format_exception(exc)
    assert len(text) < OUTPUT_CHARS and text.startswith("Traceback (most recent call last):\n")
    assert text.splitlines()[-1].startswith("RuntimeError: rrr") and len(text.splitlines()[-1]) <= MESSAGE_CHARS + 20
