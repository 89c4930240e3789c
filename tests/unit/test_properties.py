"""Property tests (hypothesis) for the code that takes what a reader or an author writes.

Each property says what must hold for *every* input of a kind, not for a few chosen ones:
the softmax and attention helpers stay finite with rows summing to 1 for logits up to ±1e300
and any B, T, H, D; ``show_attention`` either draws something valid or raises ShowError with
a one-line message; the lesson parser either reads a file or names its ``file:line``.
Examples are bounded (``max_examples``) so the whole module runs in a few seconds.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lessonpy.runtime import bridge
from lessonpy.maths.attention import merge_heads, scaled_dot_product_attention, softmax, split_heads
from lessonpy.maths.show import MAX_LABEL, ROW_SUM_TOL, ShowError, show_attention
from sitebuild.pages.lessons import LessonError, read_lesson

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Finite logits anywhere in ±1e300: a softmax without the max subtracted overflows long before.
LOGITS = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False)
SMALL = st.integers(min_value=1, max_value=5)


def rows_are_distributions(w: np.ndarray) -> None:
    assert np.all(np.isfinite(w)) and np.all(w >= 0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-9)


# ---------------------------------------------------------------------------- softmax and attention

@FAST
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=4, max_side=6), elements=LOGITS))
def test_softmax_rows_are_finite_distributions_for_any_logits(x):
    w = softmax(x, axis=-1)
    assert w.shape == x.shape
    rows_are_distributions(w)
    # The largest logit of each row gets the largest weight (ties allowed: exp rounds).
    top = np.take_along_axis(w, np.argmax(x, axis=-1)[..., None], axis=-1)
    np.testing.assert_array_equal(top, w.max(axis=-1, keepdims=True))


@FAST
@given(B=SMALL, H=SMALL, T=SMALL, D=SMALL, data=st.data())
def test_attention_is_finite_for_any_sizes_and_huge_scores(B, H, T, D, data):
    # Entries up to 1e150, so each score (a sum of D products) reaches about ±1e300 but stays finite.
    entries = st.floats(min_value=-1e150, max_value=1e150, allow_nan=False)
    Q, K = (data.draw(hnp.arrays(np.float64, (B, H, T, D), elements=entries)) for _ in range(2))
    V = data.draw(hnp.arrays(np.float64, (B, H, T, D), elements=st.floats(-1e3, 1e3)))
    out, weights = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (B, H, T, D) and weights.shape == (B, H, T, T)
    rows_are_distributions(weights)
    assert np.all(np.isfinite(out))
    # Each output row is a weighted average of value rows: inside their range, coordinate by coordinate.
    assert np.all(out <= V.max(axis=-2, keepdims=True) + 1e-6) and np.all(out >= V.min(axis=-2, keepdims=True) - 1e-6)


@FAST
@given(B=SMALL, T=SMALL, H=SMALL, D=SMALL, data=st.data())
def test_split_then_merge_heads_gives_back_the_input(B, T, H, D, data):
    x = data.draw(hnp.arrays(np.float64, (B, T, H * D), elements=st.floats(-1e6, 1e6)))
    heads = split_heads(x, H)
    assert heads.shape == (B, H, T, D)
    np.testing.assert_array_equal(heads[:, 1 % H], x[..., (1 % H) * D:(1 % H + 1) * D])
    np.testing.assert_array_equal(merge_heads(heads), x)


# ---------------------------------------------------------------------------- show_attention

ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, width=64)
ARRAYS = hnp.arrays(st.sampled_from([np.float64, np.float32, np.int64, np.bool_]),
                    hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
                    elements=None)
TOKENS = st.one_of(st.none(), st.text(max_size=10),
                   st.lists(st.one_of(st.text(max_size=50), st.integers(), st.floats()), max_size=7))


def shows_or_explains(**kwargs):
    """show_attention either emits a drawable payload or raises ShowError with a one-line message."""
    bridge.install_sink(None)
    bridge.recorded.clear()
    try:
        show_attention(**kwargs)
    except ShowError as err:
        message = str(err)
        assert message and "\n" not in message
        assert bridge.recorded[-1][1]["error"] == message
        return None
    payload = bridge.recorded[-1][1]
    arrays = payload["arrays"]
    T = arrays["weights"].shape[0]
    assert len(payload["tokens"]) == T and all(len(t) <= MAX_LABEL for t in payload["tokens"])
    for name, a in arrays.items():
        assert a.dtype == np.float32 and a.flags.c_contiguous and a.ndim == 2 and a.shape[0] == T, name
        assert not np.isnan(a).any(), name
    w = arrays["weights"]
    assert np.all(np.isfinite(w)) and np.all(np.abs(w.sum(axis=-1) - 1) <= ROW_SUM_TOL * 2)
    return payload


@FAST
@given(weights=ARRAYS, scores=st.one_of(st.none(), ARRAYS), tokens=TOKENS)
def test_show_attention_draws_or_explains_any_weights_and_scores(weights, scores, tokens):
    shows_or_explains(weights=weights, scores=scores, tokens=tokens)


@FAST
@given(T=st.integers(1, 6), d=st.integers(1, 6), data=st.data())
def test_show_attention_draws_or_explains_any_q_k_v(T, d, data):
    arr = lambda shape: data.draw(hnp.arrays(np.float64, shape, elements=ANY_FLOAT))
    Q, K, V = arr((T, d)), arr((T, d)), data.draw(st.one_of(st.none(), st.just(arr((T, d)))))
    payload = shows_or_explains(Q=Q, K=K, V=V, tokens=data.draw(TOKENS))
    if payload is not None and np.all(np.abs(Q) < 1e3) and np.all(np.abs(K) < 1e3):
        assert "scores" in payload["derived"] and "weights" in payload["derived"]


@FAST
@given(T=st.integers(1, 6))
def test_show_attention_accepts_every_valid_softmax(T):
    rng = np.random.default_rng(T)
    assert shows_or_explains(weights=softmax(rng.normal(size=(T, T)) * 50)) is not None


# ---------------------------------------------------------------------------- the lesson parser

LINES = st.sampled_from([
    "```python run id=a", "```python run id=b", "```python run", "```py run id=c", "```python", "```",
    "````", "~~~", "```python include=py/scaffold/config.py", "```python include=nope.py",
    "```exercise id=x", "```quiz id=q", "```widget attention-view id=v", "x = 1", "print(x)", "",
    "## Heading", "Text with $x^2$ maths.", "$$", "Value {{ num.x }}.", "> quoted", "- item",
    "  ```", "title: oops", "```python run id=\"unclosed",
])
FRONT = st.sampled_from(["---\ntitle: T\n---\n", "---\ntitle: [bad\n---\n", "", "---\nslug: Bad Slug\ntitle: T\n---\n"])


@FAST
@given(front=FRONT, lines=st.lists(st.one_of(LINES, st.text(max_size=20)), max_size=25))
def test_the_lesson_parser_reads_or_names_file_and_line(front, lines):
    text = front + "\n".join(lines) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "demo.md"
        path.write_text(text, encoding="utf-8")
        try:
            lesson = read_lesson(path, maths=False)
        except LessonError as err:
            assert str(err).startswith(f"{path}:{err.line}: ")
            assert 1 <= err.line <= text.count("\n") + 1
            return
    assert lesson.title == "T"
    assert len({c.id for c in lesson.cells}) == len(lesson.cells)
    for cell in lesson.cells:
        # markdown-it's lines: str.splitlines() would also split at \x1e, \x1c, U+2028 and friends
        source_lines = re.split(r"\r\n|\r|\n", text)
        assert cell.code.strip() and source_lines[cell.line - 1].lstrip().startswith(("```python", "~~~python"))
