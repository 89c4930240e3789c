"""The reader's Lesson 5 functions as a reader writes them in a cell: the masked head of the prefix cell and the
decode-step exercise's solution (read from lessons/causal-mask.md), as source (to run as the page runs a cell) and
as functions (to hand to the model)."""

from pathlib import Path

CAUSAL_ATTENTION = '''
import numpy as np

def causal_attention(Q, K, V):
    """One head, masked: row i of the output reads rows 0..i of K and V."""
    n = len(Q)
    s = Q @ K.T / np.sqrt(K.shape[-1])
    s = np.where(np.triu(np.ones((n, n), dtype=bool), k=1), -np.inf, s)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True) @ V
'''



def _exercise_solution(exercise):
    from lesson_checks import course_lessons, exercises_of

    lessons = Path(__file__).resolve().parents[2] / "lessons"
    lesson = next(x for x in course_lessons(lessons) if x.slug == "causal-mask")
    return next(ex for ex in exercises_of(lesson) if ex["id"] == exercise)["solution"]


#: the decode-step exercise's solution, as a reader who solved it pastes it into a cell: its imports and functions,
#: not its demo lines (which would run a broken variant before the model does)
DECODE_STEP = _exercise_solution("decode-step").split("\nrng = ")[0]


def _defined(source, name):
    namespace = {"__name__": "lesson5_functions"}
    exec(source, namespace)  # noqa: S102 - the tests' and the lesson's own source
    return namespace[name]


causal_attention = _defined(CAUSAL_ATTENTION, "causal_attention")
decode_step = _defined(DECODE_STEP, "decode_step")
