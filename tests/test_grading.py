"""lessonpy.grading and the attention exercises' checks, in CPython (the page runs the same code).

The reference solutions come from the exercise fences themselves
(lessons/attention.md), so the lesson and the tests share one source.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lessonpy.grading import grade
from lesson_source import ATTENTION, exercise_fences
from sitebuild.pages.practice import parse_exercise

ROOT = Path(__file__).resolve().parent.parent


def read_exercises() -> dict[str, dict]:
    """The exercise fences of the lesson, parsed exactly as the build parses them."""
    found = {}
    for ident, body, line in exercise_fences():
        ex = parse_exercise(body, {"id": ident}, {"path": ATTENTION, "line": line})
        found[ex["id"]] = ex
    return found


EXERCISES = read_exercises()


def grade_exercise(exercise_id: str, code: str, **kwargs) -> dict:
    ex = EXERCISES[exercise_id]
    return grade(code, ex["check"], timeout=kwargs.pop("timeout", ex["timeout"]), **kwargs)


def failed_messages(result: dict) -> str:
    return "\n".join(c["message"] for c in result["checks"] if not c["correct"]) + (result["error"] or "")


def test_the_lesson_has_the_three_exercises():
    assert set(EXERCISES) == {"attention-params", "split-qkv", "stable-attention"}
    assert [EXERCISES[e]["check"] for e in sorted(EXERCISES)] == ["attention_params", "split_qkv", "attention"]


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_reference_solution_passes_every_check(exercise_id):
    result = grade_exercise(exercise_id, EXERCISES[exercise_id]["solution"])
    assert result["correct"], failed_messages(result)
    assert result["stage"] == "checks" and result["error"] is None
    assert len(result["checks"]) >= 2 and all(c["correct"] for c in result["checks"])
    json.dumps(result)  # plain data, as the page receives it


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_starter_code_has_blanks_and_is_not_run(exercise_id):
    result = grade_exercise(exercise_id, EXERCISES[exercise_id]["starter"])
    assert result["stage"] == "blanks" and not result["correct"]
    assert "Fill in the blanks" in result["error"] and result["output"] == ""


# ---------------------------------------------------------------------------- wrong answers

PARAMS = "def attention_params(n_embd, n_head):\n    {body}\n"

WRONG_PARAMS = {
    "forgot W_O": ("return 3 * n_embd * n_embd", "3·C²", "forgot the output projection W_O"),
    "per-head size": ("return 4 * n_embd * (n_embd // n_head)", "depends on n_head"),
    "divided by heads": ("return 4 * n_embd * n_embd // n_head", "depends on n_head"),
    "biases": ("return 4 * n_embd * n_embd + 4 * n_embd", "counts biases"),
    "qkv biases": ("return 4 * n_embd * n_embd + 3 * n_embd", "counts biases"),
    "float": ("return 4 * n_embd ** 2 / 1", "a float"),
    "true division": ("return 4 * n_embd * (n_embd / n_head) * n_head", "a float"),
    "hard-coded": ("return 2359296", "hard-coded"),
    "numpy float": ("import numpy as np\n    return np.float64(4 * n_embd ** 2)", "a float"),
}


@pytest.mark.parametrize("name", sorted(WRONG_PARAMS))
def test_attention_params_rejects(name):
    body, *expected = WRONG_PARAMS[name]
    result = grade_exercise("attention-params", PARAMS.format(body=body))
    assert not result["correct"] and result["stage"] == "checks"
    for text in expected:
        assert text in failed_messages(result), failed_messages(result)


def test_attention_params_missing_function_is_named():
    result = grade_exercise("attention-params", "def params(n_embd, n_head):\n    return 4 * n_embd ** 2\n")
    assert "define a function named `attention_params`" in failed_messages(result)


def test_attention_params_accepts_a_numpy_integer():
    code = "import numpy as np\n" + PARAMS.format(body="return np.int64(4) * n_embd * n_embd")
    assert grade_exercise("attention-params", code)["correct"]


SPLIT = """\
import numpy as np

def split_qkv(qkv, n_head):
    B, T, C3 = qkv.shape
    C = C3 // 3
    D = C // n_head
{body}
"""

WRONG_SPLIT = {
    "order k, q, v": (
        "    k, q, v = np.split(qkv, 3, axis=-1)\n"
        "    return [x.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in (q, k, v)]",
        "q holds what should be k"),
    "no transpose": (
        "    q, k, v = np.split(qkv, 3, axis=-1)\n"
        "    return [x.reshape(B, T, n_head, D) for x in (q, k, v)]",
        "q has shape (2, 8, 12, 64) where (2, 12, 8, 64) was expected", "transpose"),
    "straight reshape": (
        "    q, k, v = np.split(qkv, 3, axis=-1)\n"
        "    return [x.reshape(B, n_head, T, D) for x in (q, k, v)]",
        "right shape but wrong values: did you reshape straight to (B, H, T, D) instead of (B, T, H, D) then transpose?"),
    "wrong axis": (
        "    q, k, v = np.split(qkv, 3, axis=1)\n"
        "    return [x.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in (q, k, v)]",
        "wrong axis"),
    "wrong axis, divisible T": (  # T=8 fails loudly; this one reshapes the wrong rows quietly
        "    axis = -1 if T % 3 else 1  # wrong only where T allows it (T = 6)\n"
        "    q, k, v = np.split(qkv, 3, axis=axis)\n"
        "    return [x.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in (q, k, v)]",
        "right shape but wrong values"),
    "unsplit heads": (
        "    q, k, v = np.split(qkv, 3, axis=-1)\n"
        "    return q, k, v",
        "q has shape (2, 8, 768) where (2, 12, 8, 64) was expected"),
    "one stacked array, heads not split": (  # unpacks into q, k, v, so it is judged like three arrays
        "    return np.stack(np.split(qkv, 3, axis=-1))",
        "q has shape (2, 8, 768) where (2, 12, 8, 64) was expected: q is still (B, T, C)"),
    "two arrays": (
        "    q, k, v = np.split(qkv, 3, axis=-1)\n"
        "    return q, k",
        "should return three arrays (q, k, v); it returned tuple of length 2"),
    "hard-coded heads": (
        "    q, k, v = np.split(qkv, 3, axis=-1)\n"
        "    return [x.reshape(B, T, 12, 64).transpose(0, 2, 1, 3) for x in (q, k, v)]",
        "split_qkv(qkv of shape (1, 6, 36), n_head=3) raised ValueError"),
    "interleaved split": (
        "    parts = qkv.reshape(B, T, C, 3)\n"
        "    q, k, v = parts[..., 0], parts[..., 1], parts[..., 2]\n"
        "    return [x.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in (q, k, v)]",
        "right shape but wrong values: split the last axis into q, k, v"),
    "interleaved heads (B, T, D, H)": (
        "    q, k, v = np.split(qkv, 3, axis=-1)\n"
        "    return [x.reshape(B, T, D, n_head).transpose(0, 3, 1, 2) for x in (q, k, v)]",
        "split_qkv(qkv of shape (2, 8, 2304), n_head=12): right shape but wrong values: you reshaped each "
        "position's features to (D, n_head), so head h took every n_head-th feature; reshape to "
        "(B, T, n_head, D) instead, so head h holds features h·D to (h+1)·D − 1, then transpose to (B, H, T, D)"),
}


def test_split_qkv_accepts_one_array_of_shape_3_B_H_T_D():
    """`q, k, v = split_qkv(...)` unpacks a (3, B, H, T, D) array as well as a tuple."""
    code = SPLIT.format(body="    return qkv.reshape(B, T, 3, n_head, D).transpose(2, 0, 3, 1, 4)")
    result = grade_exercise("split-qkv", code)
    assert result["correct"], failed_messages(result)


@pytest.mark.parametrize("name", sorted(WRONG_SPLIT))
def test_split_qkv_rejects(name):
    body, *expected = WRONG_SPLIT[name]
    result = grade_exercise("split-qkv", SPLIT.format(body=body))
    assert not result["correct"] and result["stage"] == "checks", result
    for text in expected:
        assert text in failed_messages(result), failed_messages(result)


ATTENTION = """\
import numpy as np

def softmax(z):
{softmax}

def attention(Q, K, V):
{body}
"""
STABLE = ("    z = z - z.max(axis=-1, keepdims=True)\n"
          "    e = np.exp(z)\n"
          "    return e / e.sum(axis=-1, keepdims=True)")
UNSTABLE = "    e = np.exp(z)\n    return e / e.sum(axis=-1, keepdims=True)"
BODY = "    d_k = K.shape[-1]\n    weights = softmax({scores})\n    return {ret}"

WRONG_ATTENTION = {
    "no scaling": (STABLE, BODY.format(scores="Q @ K.T", ret="weights @ V, weights"),
                   "you forgot to divide the scores by √d_k"),
    "scaled by d_k": (STABLE, BODY.format(scores="Q @ K.T / d_k", ret="weights @ V, weights"),
                      "you divided the scores by d_k"),
    "scaled by sqrt(T)": (STABLE, BODY.format(scores="Q @ K.T / np.sqrt(Q.shape[0])", ret="weights @ V, weights"),
                          "√T"),
    "softmax over axis 0": (
        "    z = z - z.max(axis=0, keepdims=True)\n    e = np.exp(z)\n    return e / e.sum(axis=0, keepdims=True)",
        BODY.format(scores="Q @ K.T / np.sqrt(d_k)", ret="weights @ V, weights"),
        "your weights' rows do not sum to 1", "axis=-1"),
    "transposed scores": (STABLE, BODY.format(scores="K @ Q.T / np.sqrt(d_k)", ret="weights @ V, weights"),
                          "transposed"),
    "out not weighted": (STABLE, BODY.format(scores="Q @ K.T / np.sqrt(d_k)", ret="V + 0 * weights[:, :3], weights"),
                         "out should be weights @ V"),
    "returns one array": (STABLE, BODY.format(scores="Q @ K.T / np.sqrt(d_k)", ret="weights @ V"),
                          "should return two arrays, (out, weights)"),
}


OVERFLOW = ("overflow: with scores near 100,000 np.exp returns inf (float64 overflows past 709, np.longdouble "
            "past about 11,356) and inf / inf is nan — subtract each row's max before np.exp (the softmax does "
            "not change)")
RIGHT = BODY.format(scores="Q @ K.T / np.sqrt(d_k)", ret="weights @ V, weights")

#: Wrong answers and the one failing message each must get, word for word.
EXACT_ATTENTION = {
    "global max": (
        "    e = np.exp(z - z.max())\n    return e / e.sum(axis=-1, keepdims=True)", RIGHT,
        "underflow: you subtracted the largest score of the whole array (z.max()), not each row's own: in a row "
        "whose scores all lie far below it np.exp gives 0 everywhere, and 0 / 0 is nan. Subtract each row's max: "
        "z - z.max(axis=-1, keepdims=True)"),
    "returns (weights, out)": (
        STABLE, BODY.format(scores="Q @ K.T / np.sqrt(d_k)", ret="weights, weights @ V"),
        "attention(Q, K, V) returned (weights, out): the first array has the weights' shape (5, 5) and the second "
        "out's (5, 3). Return them the other way round: return out, weights"),
    "multiplied by sqrt(d_k)": (
        STABLE, BODY.format(scores="Q @ K.T * np.sqrt(d_k)", ret="weights @ V, weights"),
        "you multiplied the scores by √d_k: divide by it instead, Q @ K.T / np.sqrt(d_k)"),
    "hard-coded d_k": (
        STABLE, "    weights = softmax(Q @ K.T / np.sqrt(8))\n    return weights @ V, weights",
        "you divided the scores by √8: 8 is d_k in the starter's example, hard-coded; read it from the arrays, "
        "d_k = K.shape[-1] (16 here)"),
    "scaled after the softmax": (
        STABLE, BODY.format(scores="Q @ K.T", ret="weights @ V, weights").replace(
            "weights = softmax(Q @ K.T)", "weights = softmax(Q @ K.T) / np.sqrt(d_k)"),
        "you scaled after the softmax: each row of your weights sums to 0.25 (1/√d_k) instead of 1. Divide the "
        "scores before the softmax: softmax(Q @ K.T / np.sqrt(d_k))"),
    "divided by d_k after the softmax": (
        STABLE, "    weights = softmax(Q @ K.T) / K.shape[-1]\n    return weights @ V, weights",
        "you scaled after the softmax: each row of your weights sums to 0.0625 (1/d_k) instead of 1. Divide the "
        "scores before the softmax: softmax(Q @ K.T / np.sqrt(d_k))"),
    "naive softmax in np.longdouble": (
        "    e = np.exp(np.asarray(z, dtype=np.longdouble))\n"
        "    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float64)", RIGHT, OVERFLOW),
    "unstable softmax": (UNSTABLE, RIGHT, OVERFLOW),
    "divided by an unrecognised constant": (
        STABLE, BODY.format(scores="Q @ K.T / 3", ret="weights @ V, weights"),
        "your scores are divided by 3, where √d_k = √16 = 4 was expected: d_k is the size of each key, K.shape[-1]"),
}


def test_the_hard_coded_d_k_the_check_recognises_is_the_starters():
    """The check names √STARTER_D_K as "d_k of the starter's example": the starter must still use it."""
    import re
    from lessonpy.exercises import STARTER_D_K
    sizes = re.findall(r"size=\((\d+), (\d+)\)", EXERCISES["stable-attention"]["starter"])
    assert sizes and int(sizes[0][1]) == STARTER_D_K, sizes  # Q's (T, d_k)


@pytest.mark.parametrize("name", sorted(EXACT_ATTENTION))
def test_attention_names_the_mistake(name):
    softmax, body, expected = EXACT_ATTENTION[name]
    result = grade_exercise("stable-attention", ATTENTION.format(softmax=softmax, body=body))
    assert not result["correct"] and result["stage"] == "checks", result
    assert [c["message"] for c in result["checks"] if not c["correct"]] == [expected]


@pytest.mark.parametrize("name", sorted(WRONG_ATTENTION))
def test_attention_rejects(name):
    softmax, body, *expected = WRONG_ATTENTION[name]
    result = grade_exercise("stable-attention", ATTENTION.format(softmax=softmax, body=body))
    assert not result["correct"] and result["stage"] == "checks", result
    for text in expected:
        assert text in failed_messages(result), failed_messages(result)


def test_unstable_softmax_passes_the_ordinary_checks_and_fails_only_the_overflow_one():
    code = ATTENTION.format(softmax=UNSTABLE, body=BODY.format(scores="Q @ K.T / np.sqrt(d_k)", ret="weights @ V, weights"))
    result = grade_exercise("stable-attention", code)
    failing = [c["message"] for c in result["checks"] if not c["correct"]]
    assert len(failing) == 1 and failing[0].startswith("overflow")
    assert result["output"] == ""  # the RuntimeWarning of np.exp is not shown as the reader's output


# ---------------------------------------------------------------------------- the pipeline

SOLUTION = EXERCISES["attention-params"]["solution"]


def test_blanks_are_found_before_parsing_and_name_their_lines():
    result = grade_exercise("attention-params", "x = 1\ny = ____ +\n")  # would not parse either
    assert result["stage"] == "blanks" and "line 2 " in result["error"]


def test_ellipsis_placeholder_is_a_blank_but_numpy_indexing_is_not():
    assert grade_exercise("attention-params", "def attention_params(C, H):\n    return ...\n")["stage"] == "blanks"
    code = "import numpy as np\nx = np.zeros((2, 3))[..., 0]\n" + SOLUTION
    assert grade_exercise("attention-params", code)["correct"]


def test_syntax_error_names_the_line():
    result = grade_exercise("attention-params", "def attention_params(C, H):\n    return (4 * C * C\n")
    assert result["stage"] == "syntax" and not result["correct"]
    assert "SyntaxError" in result["error"] and "line 2" in result["error"]
    assert "<your answer>" not in result["error"]


def test_error_while_running_shows_only_the_readers_lines():
    result = grade_exercise("attention-params", "x = 1\ny = x / 0\n")
    assert result["stage"] == "run"
    assert "ZeroDivisionError: division by zero" in result["error"] and "Line 2" in result["error"]
    assert "grading.py" not in result["error"] and "exercises.py" not in result["error"]


def test_error_inside_the_readers_function_becomes_a_failed_check_with_its_line():
    code = "def attention_params(n_embd, n_head):\n    x = 1\n    return n_embd / 0\n"
    result = grade_exercise("attention-params", code)
    assert result["stage"] == "checks" and not result["correct"]
    assert "attention_params(768, 12) raised ZeroDivisionError: division by zero (line 3 of your code)" \
        in failed_messages(result)


def test_endless_loop_at_top_level_times_out():
    result = grade_exercise("attention-params", "while True:\n    pass\n", timeout=0.3)
    assert result["stage"] == "timeout"
    assert result["error"] == "Your code ran longer than 0.3 s and was stopped — an endless loop?"


def test_endless_loop_in_the_function_times_out_even_if_it_catches_exceptions():
    code = ("def attention_params(n_embd, n_head):\n    while True:\n        try:\n            pass\n"
            "        except Exception:\n            pass\n")
    result = grade_exercise("attention-params", code, timeout=0.3)
    assert result["stage"] == "timeout" and "your function ran longer than 0.3 s" in result["error"].lower()


def test_the_trace_function_is_restored():
    before = sys.gettrace()
    grade_exercise("attention-params", "while True:\n    pass\n", timeout=0.1)
    grade_exercise("attention-params", SOLUTION)
    assert sys.gettrace() is before


def test_stdout_is_captured_and_truncated(capsys):
    result = grade_exercise("attention-params", "print('hello', 6 * 7)\n" + SOLUTION)
    assert result["output"].startswith("hello 42\n") and "2359296" in result["output"]
    long = grade_exercise("attention-params", "print('x' * 20_000)\n" + SOLUTION)
    assert len(long["output"]) < 6_000 and "[output cut" in long["output"]
    assert capsys.readouterr() == ("", "")  # nothing reached the real stdout/stderr


def test_readers_code_cannot_see_or_break_the_grader():
    spoiler = ("\nnp = None\ncheck = None\ngrade = None\nCheckFailed = None\n"
               "ok = fail = lambda message: {'correct': True, 'message': message}\n"
               "print = None\nlen = None\n")
    assert grade_exercise("attention-params", SOLUTION + spoiler)["correct"]
    wrong = PARAMS.format(body="return 3 * n_embd * n_embd") + spoiler
    assert not grade_exercise("attention-params", wrong)["correct"]
    # and the next grade starts afresh
    later = grade_exercise("split-qkv", EXERCISES["split-qkv"]["solution"])
    assert later["correct"]


def test_each_answer_gets_a_fresh_namespace():
    grade_exercise("attention-params", "leftover = 1\n" + SOLUTION)
    result = grade_exercise("attention-params", "print('leftover' in globals())\n" + SOLUTION)
    assert result["output"].startswith("False")


def test_sys_exit_is_reported_not_raised():
    result = grade_exercise("attention-params", "import sys\nsys.exit(3)\n")
    assert result["stage"] == "run" and "SystemExit" in result["error"]


def test_unknown_check_is_an_error_of_the_lesson_not_of_the_reader():
    with pytest.raises(LookupError, match="no check named 'nope'"):
        grade("x = 1", "nope")
    with pytest.raises(LookupError):
        grade("x = 1", "_run_checks")
