"""lessonpy.maths.grading and the attention exercises' checks, in CPython (the page runs the same code).

The reference solutions come from the exercise fences themselves
(lessons/attention.md), so the lesson and the tests share one source.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from lessonpy.maths.grading import grade
from lesson_source import ATTENTION, exercise_fences
from sitebuild.pages.practice import parse_exercise

ROOT = Path(__file__).resolve().parents[2]


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


def test_the_lesson_has_the_four_exercises():
    assert set(EXERCISES) == {"attention-params", "split-qkv", "stable-attention", "multi-head-forward"}
    assert [EXERCISES[e]["check"] for e in sorted(EXERCISES)] == [
        "attention_params", "multi_head_attention", "split_qkv", "attention"]


# The solution passing and the starter's blanks: tests/unit/test_every_lesson.py, for every lesson's exercises.


# ---------------------------------------------------------------------------- wrong answers

PARAMS = "def attention_params(n_embd, n_head):\n    {body}\n"

WRONG_PARAMS = {
    "per-head size": ("return 4 * n_embd * (n_embd // n_head)", "depends on n_head"),
    "divided by heads": ("return 4 * n_embd * n_embd // n_head", "depends on n_head"),
    "biases": ("return 4 * n_embd * n_embd + 4 * n_embd", "counts biases"),
    "qkv biases": ("return 4 * n_embd * n_embd + 3 * n_embd", "counts biases"),
    "float": ("return 4 * n_embd ** 2 / 1", "a float"),
    "true division": ("return 4 * n_embd * (n_embd / n_head) * n_head", "a float"),
    "hard-coded": ("return 2359296", "hard-coded"),
    "numpy float": ("import numpy as np\n    return np.float64(4 * n_embd ** 2)", "a float"),
    "one C×C for the fused projection": ("return 2 * n_embd * n_embd", "2·C²", "3·C² weights"),
    "every head C×C": ("return 4 * n_embd * n_embd * n_head", "multiplies by n_head"),
    "every head's W_QKV C×3C": ("return 3 * n_embd * n_embd * n_head + n_embd * n_embd", "multiplies by n_head"),
    "output bias": ("return 4 * n_embd * n_embd + n_embd", "counts biases"),
    "adds n_head": ("return 4 * n_embd * n_embd + n_head", "depends on n_head"),
    "two counts, not added": ("return 3 * n_embd * n_embd, n_embd * n_embd", "a tuple of 2 counts", "add them up"),
    "a string": ("return f'{4 * n_embd * n_embd:,}'", "(str): return an int"),
    "hard-coded for 768 only": ("return 2359296 if n_embd == 768 else 4 * n_embd * n_embd // n_head",
                                "attention_params(64, 4)", "depends on n_head"),
}

RIGHT_PARAMS = {
    "n_embd**2*4": "return n_embd**2*4",
    "summed over heads": "return n_head * 3 * n_embd * (n_embd // n_head) + n_embd * n_embd",
    "numpy product": "import numpy as np\n    return np.prod((4, n_embd, n_embd))",
    "int of a float": "return int(4 * n_embd ** 2.0)",
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


@pytest.mark.parametrize("name", sorted(RIGHT_PARAMS))
def test_attention_params_accepts(name):
    result = grade_exercise("attention-params", PARAMS.format(body=RIGHT_PARAMS[name]))
    assert result["correct"], failed_messages(result)


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
    "wrong axis": (
        "    q, k, v = np.split(qkv, 3, axis=1)\n"
        "    return [x.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in (q, k, v)]",
        "wrong axis"),
    "wrong axis, divisible T": (  # T=8 fails loudly; this one reshapes the wrong rows quietly
        "    axis = -1 if T % 3 else 1  # wrong only where T allows it (T = 6)\n"
        "    q, k, v = np.split(qkv, 3, axis=axis)\n"
        "    return [x.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in (q, k, v)]",
        "right shape but wrong values: you split along axis 1, the positions"),
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
    "order q, v, k": (
        "    q, v, k = np.split(qkv, 3, axis=-1)\n"
        "    return [x.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in (q, k, v)]",
        "k holds what should be v"),
    "reshaped twice instead of transposed": (
        "    q, k, v = np.split(qkv, 3, axis=-1)\n"
        "    return [x.reshape(B, T, n_head, D).reshape(B, n_head, T, D) for x in (q, k, v)]",
        "did you reshape straight to (B, H, T, D)"),
    "(B, H, D, T)": (
        "    q, k, v = np.split(qkv, 3, axis=-1)\n"
        "    return [x.reshape(B, T, n_head, D).transpose(0, 2, 3, 1) for x in (q, k, v)]",
        "q has shape (2, 12, 64, 8)", "positions and head features are swapped", ".transpose(0, 2, 1, 3)"),
    "(H, B, T, D)": (
        "    q, k, v = np.split(qkv, 3, axis=-1)\n"
        "    return [x.reshape(B, T, n_head, D).transpose(2, 0, 1, 3) for x in (q, k, v)]",
        "q has shape (12, 2, 8, 64)", "the right axes in the wrong order"),
    "a dict": (
        "    q, k, v = np.split(qkv, 3, axis=-1)\n"
        "    return {'q': q, 'k': k, 'v': v}",
        "should return three arrays (q, k, v); it returned dict"),
}

TO_HEADS = "    q, k, v = np.split(qkv, 3, axis=-1)\n    return {ret}"
RIGHT_SPLIT = {
    "a list": TO_HEADS.format(ret="[x.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in (q, k, v)]"),
    "a generator": TO_HEADS.format(ret="(x.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in (q, k, v))"),
    "swapaxes": TO_HEADS.format(ret="tuple(x.reshape(B, T, n_head, D).swapaxes(1, 2) for x in (q, k, v))"),
    "np.transpose": TO_HEADS.format(ret="tuple(np.transpose(x.reshape(B, T, -1, D), (0, 2, 1, 3)) for x in (q, k, v))"),
    "einsum": TO_HEADS.format(ret="tuple(np.einsum('bthd->bhtd', x.reshape(B, T, n_head, D)) for x in (q, k, v))"),
    "slices": ("    parts = [qkv[..., i * C:(i + 1) * C] for i in range(3)]\n"
               "    return tuple(p.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for p in parts)"),
    "float32": TO_HEADS.format(
        ret="tuple(x.astype(np.float32).reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for x in (q, k, v))"),
}


@pytest.mark.parametrize("name", sorted(RIGHT_SPLIT))
def test_split_qkv_accepts(name):
    result = grade_exercise("split-qkv", SPLIT.format(body=RIGHT_SPLIT[name]))
    assert result["correct"], failed_messages(result)


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


MHA = """\
import numpy as np

def multi_head_attention(x, W_qkv, W_proj, n_head):
    B, T, C = x.shape
    D = C // n_head
    x, W_qkv, W_proj = x.astype({dtype}), W_qkv.astype({dtype}), W_proj.astype({dtype})
    q, k, v = np.split(x @ W_qkv.T, 3, axis=-1)
    q, k, v = (t.reshape(B, T, n_head, D).transpose(0, 2, 1, 3) for t in (q, k, v))
    z = q @ k.swapaxes(-1, -2) / {scale}
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    heads = e / e.sum(axis=-1, keepdims=True) @ v
{merge}
"""
MERGE = "    merged = heads.transpose(0, 2, 1, 3).reshape(B, T, C)\n"
RIGHT_MHA = {"scale": "D ** 0.5",  # a Python float: float16 work stays float16
              "merge": MERGE + "    return merged @ W_proj.T"}

WRONG_MHA = {
    "no output projection": ({"merge": MERGE + "    return merged"}, "you forgot the output projection"),
    "W_proj not transposed": ({"merge": MERGE + "    return merged @ W_proj"}, "merged @ W_proj.T, not"),
    "merged without the transpose": ({"merge": "    return heads.reshape(B, T, C) @ W_proj.T"},
                                     "you merged the heads in the wrong order"),
    "scaled by √C": ({"scale": "C ** 0.5"}, "scaled the scores by √C instead of √D"),
    "not scaled": ({"scale": "1"}, "forgot to divide each head's scores by √D"),
    "hard-coded head size": ({"scale": "2"}, "is a size of that call hard-coded?"),  # √D at the first size only
    "returns (y, weights)": ({"merge": MERGE + "    return merged @ W_proj.T, e"}, "return y alone"),
    "heads not merged": ({"merge": "    return heads"}, "merge the heads back"),
}


@pytest.mark.parametrize("dtype", ["np.float16", "np.float32", "np.float64"])
def test_multi_head_forward_accepts_every_float(dtype):
    result = grade_exercise("multi-head-forward", MHA.format(dtype=dtype, **RIGHT_MHA))
    assert result["correct"], failed_messages(result)


def test_multi_head_forward_accepts_float16_widened_to_float64():
    code = MHA.format(dtype="np.float16", **RIGHT_MHA).replace("return merged @ W_proj.T",
                                                                "return (merged @ W_proj.T).astype(float)")
    result = grade_exercise("multi-head-forward", code)
    assert result["correct"], failed_messages(result)


@pytest.mark.parametrize("name", sorted(WRONG_MHA))
def test_multi_head_forward_rejects(name):
    changes, says = WRONG_MHA[name]
    result = grade_exercise("multi-head-forward", MHA.format(dtype="np.float64", **{**RIGHT_MHA, **changes}))
    assert not result["correct"] and result["stage"] == "checks", result
    assert says in failed_messages(result), failed_messages(result)


def test_multi_head_forward_names_the_nn_linear_layout_when_w_qkv_is_not_transposed():
    code = MHA.format(dtype="np.float64", **RIGHT_MHA).replace("x @ W_qkv.T", "x @ W_qkv")
    result = grade_exercise("multi-head-forward", code)
    assert not result["correct"]
    assert "project with x @ W_qkv.T" in failed_messages(result), failed_messages(result)


@pytest.mark.parametrize("slip", ["causal", "split_and_merge_straight"])
def test_multi_head_forward_names_the_slips_no_fence_lists(slip):
    """A causal mask, and a split and merge both by plain reshape, each get their own words."""
    from lessonpy.course.attention.exercises import MHA_MISTAKES, _forward

    def answer(x, W_qkv, W_proj, n_head):
        return _forward(x, W_qkv, W_proj, n_head, slip)[0]

    from lessonpy.course.attention.exercises import multi_head_attention
    results = list(multi_head_attention({"multi_head_attention": answer}))
    assert not results[-1]["correct"] and MHA_MISTAKES[slip] in results[-1]["message"], results


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
RETURNING = BODY.format(scores="Q @ K.T / np.sqrt(d_k)", ret="{ret}")
RIGHT = RETURNING.format(ret="weights @ V, weights")

WRONG_ATTENTION = {
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
    "max without keepdims": (
        "    e = np.exp(z - z.max(axis=-1))\n    return e / e.sum(axis=-1, keepdims=True)",
        RIGHT,
        "you subtracted z.max(axis=-1) without keepdims=True", "column j lost row j's max"),
    "sum without keepdims": (
        "    e = np.exp(z - z.max(axis=-1, keepdims=True))\n    return e / e.sum(axis=-1)",
        RIGHT,
        "you divided by e.sum(axis=-1) without keepdims=True"),
    "max and sum without keepdims": (
        "    e = np.exp(z - z.max(axis=-1))\n    return e / e.sum(axis=-1)",
        RIGHT,
        "you subtracted z.max(axis=-1) without keepdims=True", "you divided by e.sum(axis=-1) without keepdims=True"),
    "whole matrix normalised": (
        "    e = np.exp(z - z.max())\n    return e / e.sum()", RIGHT,
        "your weights sum to 1 over the whole matrix", "axis=None"),
    "row max, whole matrix normalised": (
        "    e = np.exp(z - z.max(axis=-1, keepdims=True))\n    return e / e.sum()", RIGHT,
        "your weights sum to 1 over the whole matrix"),
    "column max": (
        "    e = np.exp(z - z.max(axis=0, keepdims=True))\n    return e / e.sum(axis=-1, keepdims=True)", RIGHT,
        "you subtracted each column's max (axis=0)"),
    "row max, columns normalised": (
        "    e = np.exp(z - z.max(axis=-1, keepdims=True))\n    return e / e.sum(axis=0, keepdims=True)", RIGHT,
        "its columns do", "axis=-1"),
    "shift in the numerator only": (
        "    return np.exp(z - z.max(axis=-1, keepdims=True)) / np.exp(z).sum(axis=-1, keepdims=True)", RIGHT,
        "you subtracted the max in the numerator only"),
    "weights transposed after the softmax": (
        STABLE, RETURNING.format(ret="weights @ V, weights.T"),
        "return weights, not weights.T"),
    "causal mask": (
        STABLE, "    T = len(Q)\n    scores = np.where(np.tril(np.ones((T, T))) == 1, Q @ K.T / np.sqrt(K.shape[-1]), -np.inf)\n"
                "    weights = softmax(scores)\n    return weights @ V, weights",
        "causal mask"),
    "scores divided by d_v": (STABLE, BODY.format(scores="Q @ K.T / V.shape[-1]", ret="weights @ V, weights"),
                              "you divided the scores by d_v"),
    "weights divided by d_v": (STABLE, BODY.format(scores="Q @ K.T", ret="weights @ V, weights").replace(
        "softmax(Q @ K.T)", "softmax(Q @ K.T / np.sqrt(d_k)) / V.shape[-1]"),
        "sums to 0.3333 (1/d_v)", "scaled the weights after the softmax as well"),
    "out divided by d_v": (STABLE, RETURNING.format(ret="weights @ V / V.shape[-1], weights"),
                           "times 0.3333 (1/d_v)"),
    "out divided by sqrt(d_k)": (STABLE, RETURNING.format(ret="weights @ V / np.sqrt(d_k), weights"),
                                 "times 0.25 (1/√d_k)"),
    "out = weights.T @ V": (STABLE, RETURNING.format(ret="weights.T @ V, weights"),
                            "you multiplied by weights.T"),
    "out = V @ weights": (STABLE, RETURNING.format(ret="V @ weights, weights"),
                          "raised ValueError", "(line 11 of your code)", "out = V @ weights multiplies in the wrong order"),
    "out transposed": (STABLE, RETURNING.format(ret="(weights @ V).T, weights"),
                       "out has shape (3, 5) where (5, 3) was expected: it is transposed"),
    "Q @ K": (STABLE, BODY.format(scores="Q @ K / np.sqrt(d_k)", ret="weights @ V, weights"),
              "raised ValueError", "transpose K, Q @ K.T"),
    "Q.T @ K": (STABLE, BODY.format(scores="Q.T @ K / np.sqrt(d_k)", ret="weights @ V, weights"),
                "raised ValueError", "Q.T @ K multiplies over the positions", "Q @ K.T"),
    "Q.T @ K, out by einsum": (STABLE, "    weights = softmax(Q.T @ K / np.sqrt(K.shape[-1]))\n"
                                       "    return np.einsum('ij,jd->id', weights[:len(V), :len(V)], V), weights",
                               "weights have shape (16, 16)", "(d_k, d_k)"),
    "float32, not scaled": (STABLE, BODY.format(scores="Q.astype(np.float32) @ K.T.astype(np.float32)",
                                                ret="weights @ V, weights"),
                            "you forgot to divide the scores by √d_k"),
}


OVERFLOW = ("overflow: with scores near 100,000 np.exp returns inf (float64 overflows past 709, np.longdouble "
            "past about 11,356) and inf / inf is nan — subtract each row's max before np.exp (the softmax does "
            "not change)")

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
    "divided by an unrecognised constant": (  # not 3: that is d_v, a mistake named on its own
        STABLE, BODY.format(scores="Q @ K.T / 2.5", ret="weights @ V, weights"),
        "your scores are divided by 2.5, where √d_k = √16 = 4 was expected: d_k is the size of each key, K.shape[-1]"),
}


SHIFTED = "    e = np.exp(z - {shift})\n    return e / e.sum(axis=-1, keepdims=True)"
ROW_STATISTIC = "you shifted each row by something other than its max"

#: Wrong answers the first checks pass and the large-score probes must catch, with key phrases.
UNSTABLE_ATTENTION = {
    "row mean": (SHIFTED.format(shift="z.mean(axis=-1, keepdims=True)"), ROW_STATISTIC, "Only the row's max"),
    "row min": (SHIFTED.format(shift="z.min(axis=-1, keepdims=True)"), ROW_STATISTIC),
    "row median": (SHIFTED.format(shift="np.median(z, axis=-1, keepdims=True)"), ROW_STATISTIC),
    "first entry": (SHIFTED.format(shift="z[:, :1]"), ROW_STATISTIC),
    "last entry": (SHIFTED.format(shift="z[..., -1:]"), ROW_STATISTIC),
    "midrange": (SHIFTED.format(shift="(z.max(axis=-1, keepdims=True) + z.min(axis=-1, keepdims=True)) / 2"),
                 ROW_STATISTIC),
    "whole array's mean": (SHIFTED.format(shift="z.mean()"), "you shifted every row by the same number",
                           "each row's own max"),
    "whole array's min": (SHIFTED.format(shift="z.min()"), "you shifted every row by the same number"),
    "clipped scores": ("    e = np.exp(np.clip(z, -700, 700))\n    return e / e.sum(axis=-1, keepdims=True)",
                       "came out uniform", "clipping the scores"),
    "clipped at float32's limit": ("    e = np.exp(np.clip(z, -88, 88))\n    return e / e.sum(axis=-1, keepdims=True)",
                                   "clipping the scores"),
    "nan replaced by 0": ("    e = np.exp(z)\n    return np.nan_to_num(e / e.sum(axis=-1, keepdims=True))",
                          "no longer sum to 1", "np.nan_to_num"),
    "float128 without a shift": ("    e = np.exp(z.astype(np.longdouble))\n    return e / e.sum(axis=-1, keepdims=True)",
                                 "overflow: with scores near 100,000"),
    "float32 with the row mean": (SHIFTED.format(shift="z.mean(axis=-1, keepdims=True)").replace(
        "np.exp(z", "np.exp(z.astype(np.float32)"), ROW_STATISTIC),
}


@pytest.mark.parametrize("name", sorted(UNSTABLE_ATTENTION))
def test_attention_rejects_a_softmax_unstable_at_large_scores(name):
    softmax, *expected = UNSTABLE_ATTENTION[name]
    result = grade_exercise("stable-attention", ATTENTION.format(softmax=softmax, body=RIGHT))
    failing = [c["message"] for c in result["checks"] if not c["correct"]]
    assert len(failing) == 1, failing  # the ordinary checks pass: only the large scores show the mistake
    for text in expected:
        assert text in failing[0], failing[0]


def test_a_softmax_shifted_by_the_row_mean_fails_naming_the_max():
    """The reviewer's case: right on every probe whose rows are shifted as a whole, nan on keys far apart."""
    code = ATTENTION.format(softmax=SHIFTED.format(shift="z.mean(axis=-1, keepdims=True)"), body=RIGHT)
    result = grade_exercise("stable-attention", code)
    failing = [c["message"] for c in result["checks"] if not c["correct"]]
    assert not result["correct"] and len(failing) == 1
    assert "max" in failing[0] and "mean" in failing[0] and "±100,000 apart" in failing[0]


def test_one_probe_spreads_each_row_far_past_the_range_of_exp():
    """Some probe puts keys of one query further apart than np.exp's range, even np.longdouble's (past
    about 11,356; float64's is 709), with the max shared, neither first nor last."""
    from lessonpy.course.attention.exercises import KEY_OFFSETS, LARGE_SCORE, _probes
    T = len(KEY_OFFSETS)
    spreads = [np.ptp(np.outer(rows, keys) * LARGE_SCORE, axis=-1).min() for _, rows, keys in _probes(T)]
    exp_range = float(np.log(np.finfo(np.longdouble).max))
    assert max(spreads) > exp_range
    keys = np.array(KEY_OFFSETS)
    top = keys.max()
    assert (keys == top).sum() == 2 and keys[0] < top and keys[-1] < top
    for statistic in (keys.mean(), np.median(keys), keys.min(), (keys.max() + keys.min()) / 2):
        assert (top - statistic) * LARGE_SCORE > exp_range  # shifted by it, the top keys still overflow


RIGHT_SOFTMAX = {
    "logsumexp by hand": ("    m = z.max(axis=-1, keepdims=True)\n"
                          "    lse = m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True))\n"
                          "    return np.exp(z - lse)"),
    "np.max with axis=1": ("    e = np.exp(z - np.max(z, axis=1, keepdims=True))\n"
                           "    return e / np.sum(e, axis=1, keepdims=True)"),
    "max without keepdims, put back with None": (
        "    e = np.exp(z - z.max(axis=-1)[:, None])\n    return e / e.sum(axis=-1)[:, None]"),
    "float128 with the shift": ("    z = z.astype(np.longdouble)\n"
                                "    e = np.exp(z - z.max(axis=-1, keepdims=True))\n"
                                "    return e / e.sum(axis=-1, keepdims=True)"),
    "float32 softmax": ("    z = z.astype(np.float32)\n"
                        "    e = np.exp(z - z.max(axis=-1, keepdims=True))\n"
                        "    return e / e.sum(axis=-1, keepdims=True)"),
    "float32 softmax returned as float64": (
        "    z = z.astype(np.float32)\n"
        "    e = np.exp(z - z.max(axis=-1, keepdims=True))\n"
        "    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float64)"),
}

RIGHT_BODY = {
    "einsum": ("    weights = softmax(np.einsum('id,jd->ij', Q, K) / np.sqrt(K.shape[-1]))\n"
               "    return np.einsum('ij,jd->id', weights, V), weights"),
    "np.transpose": "    weights = softmax(Q @ np.transpose(K) / np.sqrt(Q.shape[1]))\n    return weights @ V, weights",
    "np.dot and a list": ("    weights = softmax(np.dot(Q, K.T) * K.shape[-1] ** -0.5)\n"
                          "    return [np.dot(weights, V), weights]"),
    "each side scaled by d_k ** -0.25": ("    s = K.shape[-1] ** -0.25\n"
                                          "    weights = softmax((Q * s) @ (K * s).T)\n    return weights @ V, weights"),
    "float32 attention": ("    Q, K, V = Q.astype(np.float32), K.astype(np.float32), V.astype(np.float32)\n"
                          "    weights = softmax(Q @ K.T / np.sqrt(np.float32(K.shape[-1])))\n"
                          "    return weights @ V, weights"),
    "float32 scores, returned as float64": (
        "    scores = (Q.astype(np.float32) @ K.T.astype(np.float32)).astype(np.float64)\n"
        "    weights = softmax(scores / np.sqrt(K.shape[-1]))\n    return weights @ V, weights"),
}


@pytest.mark.parametrize("name", sorted(RIGHT_SOFTMAX))
def test_attention_accepts_a_right_softmax(name):
    result = grade_exercise("stable-attention", ATTENTION.format(softmax=RIGHT_SOFTMAX[name], body=RIGHT))
    assert result["correct"], failed_messages(result)


@pytest.mark.parametrize("name", sorted(RIGHT_BODY))
def test_attention_accepts_a_right_attention(name):
    result = grade_exercise("stable-attention", ATTENTION.format(softmax=STABLE, body=RIGHT_BODY[name]))
    assert result["correct"], failed_messages(result)


SCIPY = "    from scipy.special import {name}\n    return {call}"


@pytest.mark.parametrize("softmax", [SCIPY.format(name="softmax", call="softmax(z, axis=-1)"),
                                     SCIPY.format(name="logsumexp",
                                                  call="np.exp(z - logsumexp(z, axis=-1, keepdims=True))")])
def test_attention_accepts_scipy(softmax):
    pytest.importorskip("scipy")
    result = grade_exercise("stable-attention", ATTENTION.format(softmax=softmax, body=RIGHT))
    assert result["correct"], failed_messages(result)


def test_attention_names_scipy_softmax_without_an_axis():
    pytest.importorskip("scipy")
    code = ATTENTION.format(softmax=SCIPY.format(name="softmax", call="softmax(z)"), body=RIGHT)
    assert "scipy.special.softmax(z) without an axis" in failed_messages(grade_exercise("stable-attention", code))


def test_float32_weights_at_large_scores_differ_from_float64_and_still_pass():
    """Why the tolerance depends on the float and the scores: at 1e5, float32 weights are off by ~1e-3."""
    from lessonpy.maths.attention import softmax as softmax_of  # keeps float32 float32
    from lessonpy.course.attention.exercises import LARGE_SCORE, Tolerance as _Tolerance, _probes, _with_offsets
    from lessonpy.maths.answers import float_of as _float_of
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((5, 16)), rng.standard_normal((5, 16))
    _, rows, keys = _probes(5)[0]
    Qp, Kp = _with_offsets(Q, K, rows, keys)
    reference = softmax_of(Qp @ Kp.T / 4)
    w32 = softmax_of(Qp.astype(np.float32) @ Kp.astype(np.float32).T / np.float32(4))
    assert w32.dtype == np.float32 and abs(float((Qp @ Kp.T).max()) / 4 - LARGE_SCORE) < 10
    assert not np.allclose(w32, reference, rtol=1e-4, atol=0)  # a float64 tolerance would reject it
    assert _Tolerance(Qp, Kp, _float_of(w32)).weights(w32.astype(float), reference)


def test_the_tolerance_at_ordinary_scores_is_tight_even_for_float32():
    """A float32 answer one part in 10⁴ off is wrong: the tolerance is about float32's precision, not more."""
    nudged = ("    w = softmax(Q @ K.T / np.sqrt(K.shape[-1]))\n"
              "    w[:, 0] *= np.float32(1 + {nudge})\n"
              "    w = w / w.sum(axis=-1, keepdims=True)\n"
              "    return w @ V, w")
    softmax = RIGHT_SOFTMAX["float32 softmax"]
    result = grade_exercise("stable-attention", ATTENTION.format(softmax=softmax, body=nudged.format(nudge=1e-4)))
    assert [c["message"] for c in result["checks"] if not c["correct"]] == [
        "the weights differ from softmax(Q Kᵀ / √d_k) taken along each row"]
    unnudged = grade_exercise("stable-attention", ATTENTION.format(softmax=softmax, body=nudged.format(nudge=0)))
    assert unnudged["correct"], failed_messages(unnudged)


def test_the_hard_coded_d_k_the_check_recognises_is_the_starters():
    """The check names √STARTER_D_K as "d_k of the starter's example": the starter must still use it."""
    import re
    from lessonpy.course.attention.exercises import STARTER_D_K
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


@pytest.mark.parametrize("code, who", [
    ("while True: pass\n", "Your code"),
    ("def attention_params(n_embd, n_head):\n    while True: pass\n", "Your function"),
])
def test_a_loop_on_one_line_times_out_in_cpython_too(code, who):
    """Tracing sees no new line in a loop on one line: in CPython (the notebook's %%exercise at home) a timer
    interrupts it at the same deadline as the page's. In a process of its own: without the fix it hangs."""
    import subprocess

    script = ("import sys, time; sys.path.insert(0, sys.argv[1])\n"
              "from lessonpy.maths.grading import grade\n"
              "start = time.monotonic(); result = grade(sys.argv[2], 'attention_params', timeout=0.5)\n"
              "print(result['stage'], round(time.monotonic() - start, 1)); print(result['error'])\n"
              "print(grade('def attention_params(n_embd, n_head):\\n    return 0\\n', 'attention_params')['stage'])\n")
    proc = subprocess.run([sys.executable, "-c", script, str(ROOT / "py"), code], capture_output=True, text=True,
                          timeout=60)
    stage, seconds, error, after = proc.stdout.split()[0], float(proc.stdout.split()[1]), *proc.stdout.splitlines()[1:]
    assert stage == "timeout" and seconds < 2.5, proc.stdout + proc.stderr
    assert error == f"{who} ran longer than 0.5 s and was stopped — an endless loop?"
    assert after == "checks"  # no interrupt left over for the next grade


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


# ---------------------------------------------------------------------------- huge messages stay within the limits

from lessonpy.runtime.limits import MESSAGE_CHARS, OUTPUT_CHARS  # noqa: E402

HUGE = 10**7  # characters: three checks quoting it made a 30-million character feedback


@pytest.mark.parametrize("body", [
    f"raise ValueError('m' * {HUGE})",
    f"raise type('E' * {HUGE}, (Exception,), {{}})('boom')",
    f"return 'r' * {HUGE}",
], ids=["message", "class name", "returned"])
def test_a_huge_text_from_the_readers_function_is_clipped_in_the_feedback(body):
    result = grade_exercise("attention-params", PARAMS.format(body=body))
    assert result["stage"] == "checks" and not result["correct"]
    assert all(len(c["message"]) <= MESSAGE_CHARS for c in result["checks"])
    assert "characters not shown" in failed_messages(result)
    assert "attention_params(768, 12)" in failed_messages(result)


@pytest.mark.slow  # a hundred-thousand-line program, graded
def test_a_huge_error_of_the_readers_code_is_clipped():
    result = grade_exercise("attention-params", f"def f():\n    raise ValueError('m' * {HUGE})\nf()\n")
    assert result["stage"] == "run" and len(result["error"]) < 2 * MESSAGE_CHARS
    assert "Line 3" in result["error"] and "characters not shown" in result["error"]
    result = grade_exercise("attention-params", f"import sys\nsys.exit('c' * {HUGE})\n")
    assert result["stage"] == "run" and len(result["error"]) < 2 * MESSAGE_CHARS
    result = grade_exercise("attention-params", "x = ____\n" * 100_000)  # a list of a hundred thousand lines
    assert len(result["error"]) <= OUTPUT_CHARS
