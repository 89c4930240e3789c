"""Step 3's "A head learns its job": one head trained by hand-written gradient descent on the previous-word job.

The text states what ``lessonpy.course.attention.trained_head`` computes (``tests/unit/test_lesson_content.py`` checks the cells print
those numbers, and the browser test checks Pyodide prints the same); these tests hold the claims the prose
makes about them, check the hand-written gradient, and keep the cells cheap enough for Pyodide.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest
import attention_numbers as lesson_numbers
from lessonpy.course.attention import trained_head as th

from sitebuild.pages.lessons import read_lesson

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "lessons" / "attention.md"
CELLS = ("train-head", "train-head-saturated", "train-induction")


@pytest.fixture(scope="module")
def runs():
    """(rows, words, p, weights) of the soft and the saturated start, as the two cells train them."""
    return {"soft": th.train(th.SOFT), "saturated": th.train(th.SATURATED)}


@pytest.fixture(scope="module")
def induction():
    """(rows, (p1, p2), [W_q1, W_k1, W_q2, W_k2]) of the aside's two-layer training."""
    return th.train_two_layers()


@pytest.fixture(scope="module")
def printed():
    """What the two cells print, run after the cells they need (the page's order, in CPython)."""
    cells = read_lesson(LESSON, maths=False).cells
    namespace: dict = {"__name__": "__lesson__"}
    out = {}
    for cell in cells[:[c.id for c in cells].index(CELLS[-1]) + 1]:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            exec(compile(cell.code, f"cell {cell.id}", "exec"), namespace)  # noqa: S102 (running the lesson is the test)
        out[cell.id] = buffer.getvalue()
    return out


def test_the_soft_start_learns_the_previous_word(runs):
    """The text: the loss falls from its start to about a thousandth of it, and the weight on the previous
    word grows from about a uniform row's 1/T to nearly all of it."""
    rows = runs["soft"][0]
    first, last = rows[0], rows[-1]
    assert last["loss"] < first["loss"] / 500
    assert first["prev"] == pytest.approx(1 / th.T, abs=0.02)  # "about the 1/8 of a uniform row"
    assert first["top"] < 0.2  # "every row starts close to uniform"
    assert last["prev"] > 0.95
    losses = [r["loss"] for r in rows]
    assert losses == sorted(losses, reverse=True)  # every printed line lower than the one before


def test_the_picture_is_the_shifted_diagonal_with_the_previous_word_as_output(runs):
    """The text: the first sequence's pattern is the hand-built head's shifted diagonal, each output the
    previous word; its first row, never scored, is left unshaped."""
    _, words, p, _ = runs["soft"]
    rows = np.arange(1, th.T)
    assert (p[0, rows, rows - 1] > 0.9).all()
    out = p[0] @ np.eye(th.V)[words[0]]
    assert (out[rows].argmax(-1) == words[0, rows - 1]).all()
    assert p[0, 0].max() < 0.5  # not a pick: nothing trained row 0


def test_the_head_learned_a_rule_and_not_the_training_sequences(runs):
    """The text: on new random sequences it does the same; and the rule lives in the position block."""
    W_q, W_k = runs["soft"][3]
    for seed in (5, 6, 7):
        _, x = th.previous_word_task(seed=seed)
        _, p, _, _ = th.loss_and_grads(W_q, W_k, x)
        assert th.on_previous(p) > 0.95, seed
    M = W_q @ W_k.T / np.sqrt(th.D_K)  # the scaled score of feature pairs: query feature x key feature
    positions = M[th.V:, th.V:]
    shift = np.diag(positions, -1)  # query position i against key position i - 1
    assert shift.min() > 3 * np.abs(M[:th.V, :th.V]).max()  # the words barely matter


def test_the_saturated_start_learns_visibly_slower_but_gets_there(runs):
    """The text: the same draws scaled up start nearly one-hot, and after the same steps are far behind;
    training gets there in the end."""
    soft, hard = runs["soft"][0], runs["saturated"][0]
    assert hard[0]["top"] > 0.8 > 0.2 > soft[0]["top"]
    assert hard[-1]["loss"] > 50 * soft[-1]["loss"]
    assert hard[-1]["prev"] < soft[-1]["prev"] - 0.1
    # the rate, not the higher start: the first EVERY steps cut the loss ten times more from the soft start
    drop = [run[0]["loss"] / run[1]["loss"] for run in (soft, hard)]
    assert drop[0] > 10 * drop[1]
    longer, *_ = th.train(th.SATURATED, steps=3 * th.STEPS)
    assert longer[-1]["loss"] < 0.01 and longer[-1]["prev"] > 0.95


def test_the_saturated_start_is_the_same_draws_scaled():
    """The text: the same draws, SATURATED / SOFT times larger, so every score is that factor squared larger."""
    soft, hard = (np.random.default_rng(th.INIT_SEED).standard_normal((2, th.V + th.T, th.D_K)) * s
                  for s in (th.SOFT, th.SATURATED))
    np.testing.assert_allclose(hard, soft * (th.SATURATED / th.SOFT))
    n = th.numbers()
    assert float(n["th_sat_score_factor"]) == float(n["th_sat_factor"]) ** 2


def test_the_hand_written_gradient_is_the_derivative_of_the_loss():
    """Central differences on a few entries of W_q and W_k, at a point where rows are neither flat nor hard."""
    _, x = th.previous_word_task()
    rng = np.random.default_rng(3)
    W_q, W_k = rng.standard_normal((2, th.V + th.T, th.D_K))
    _, _, dW_q, dW_k = th.loss_and_grads(W_q, W_k, x)
    eps = 1e-6
    for which, grad in ((0, dW_q), (1, dW_k)):
        for f, d in ((0, 0), (th.V + 2, 5), (th.V + th.T - 1, th.D_K - 1), (3, 4)):
            plus, minus = [W_q.copy(), W_k.copy()], [W_q.copy(), W_k.copy()]
            plus[which][f, d] += eps
            minus[which][f, d] -= eps
            numeric = (th.loss_and_grads(*plus, x)[0] - th.loss_and_grads(*minus, x)[0]) / (2 * eps)
            assert grad[f, d] == pytest.approx(numeric, rel=1e-5, abs=1e-9), (which, f, d)


def test_the_cells_print_every_line_the_module_computes(runs, induction, printed):
    """Not only the numbers the text quotes: every printed line of the three tables is the module's."""
    tables = (runs["soft"][0], runs["saturated"][0], induction[0])
    for cell, rows, last in zip(CELLS, tables, ("top", "top", "after")):
        lines = re.findall(r"^ *(\d+) +([\d.]+) +([\d.]+) +([\d.]+)$", printed[cell], flags=re.M)
        expected = [(str(r["step"]), f"{r['loss']:.4f}", f"{r['prev']:.3f}", f"{r[last]:.3f}") for r in rows]
        assert lines == expected, cell


def test_no_printed_number_sits_near_a_rounding_boundary(runs, induction):
    """Pyodide's NumPy (no BLAS) sums in another order than CPython's: the last bits differ. Every printed
    value must be far from the point where its last printed digit would flip."""
    for r in induction[0]:
        for value, places in ((r["loss"], 4), (r["prev"], 3), (r["after"], 3)):
            assert abs((value * 10**places) % 1 - 0.5) > 1e-6, (r, value, places)
    for run in runs.values():
        for r in run[0]:
            for value, places in ((r["loss"], 4), (r["prev"], 3), (r["top"], 3)):
                frac = (value * 10**places) % 1
                assert abs(frac - 0.5) > 1e-6, (r, value, places)
        drop = run[0][0]["loss"] / run[0][1]["loss"]  # stated to 0 or 1 places
        assert abs(drop % 1 - 0.5) > 1e-6 and abs(drop * 10 % 1 - 0.5) > 1e-6


def test_the_cells_are_cheap_enough_for_pyodide():
    """Counted, not timed: the multiply-adds of the three cells' training. Measured once: about 0.3 s a
    training in Pyodide's BLAS-free NumPy, under 0.1 s in CPython; this budget keeps them there."""
    B, T, V, F, d = th.B, th.T, th.V, th.V + th.T, th.D_K
    per_head_step = (2 * B * T * F * d            # q and k
                     + B * T * T * d              # scores
                     + 2 * B * (T - 1) * T * V    # the output and its gradient to p
                     + 2 * B * T * T * d          # back to q and k
                     + 2 * B * T * F * d)         # back to W_q and W_k
    # the aside's two layers are two such heads on inputs of the same size
    assert 2 * th.IND_L == T and 2 * th.V == F
    total = (1 + 1 + 2) * (th.STEPS + 1) * per_head_step  # soft, saturated, and two layers
    assert total < 2e8, f"{total:,} multiply-adds"


def test_the_numbers_are_wired_into_the_lesson():
    for cell in CELLS:
        assert lesson_numbers.CELL_PRINTS[cell] == th.CELL_PRINTS[cell]
    numbers = lesson_numbers.numbers()
    for key, value in th.numbers().items():
        assert numbers[key] == value, key


def test_the_view_shows_before_python_runs_what_the_cell_sends(runs, tmp_path):
    """The page's view of the trained head is drawn by the build from the module, as the cell would draw it."""
    from sitebuild.pages.lessons import LessonError
    from widget_render import data_blocks, render

    _, words, p, _ = runs["soft"]
    (view,) = data_blocks(render(tmp_path, "```widget attention-view id=v\nexample: trained-head\nrow: 3\n```\n"))
    assert view["options"]["T"] == th.T and view["initial"]["tokens"] == ["ABCDEFGH"[w] for w in words[0]]
    shown = np.array(view["initial"]["arrays"]["weights"]["data"]).reshape(th.T, th.T)
    np.testing.assert_allclose(shown, p[0], atol=1e-6)
    with pytest.raises(LessonError, match="brings its own tokens"):
        render(tmp_path, "```widget attention-view id=v\nexample: trained-head\nT: 4\n```\n")
    text = LESSON.read_text(encoding="utf-8")
    assert "```widget attention-view id=trained-head-view\ntitle: A head trained to look at the previous word\n" \
           "example: trained-head\n" in text
    assert 'target="trained-head-view"' in text


# ---------------------------------------------------------------------------- the aside: an induction head

def test_two_layers_trained_together_form_an_induction_head(induction):
    """The text: layer 2 ends up on the word after the earlier copy, and the loss falls to near nothing."""
    rows = induction[0]
    assert rows[-1]["loss"] < rows[0]["loss"] / 500
    assert rows[0]["after"] < 0.25 and rows[-1]["after"] > 0.95


def test_layer_1_became_a_previous_token_head_where_layer_2_reads_it(induction):
    """The text: in the first copy layer 1's weight on the previous word rose from its masked-uniform start
    (rows of two to four keys) to nearly all of it, with no loss of its own."""
    rows = induction[0]
    L = th.IND_L
    assert rows[0]["prev"] == pytest.approx(np.mean([1 / (j + 1) for j in range(1, L)]), abs=0.05)
    assert rows[-1]["prev"] > 0.95


def test_layer_2_matches_its_query_word_to_the_word_layer_1_wrote(induction):
    """The text: layer 2's query carries the current word and its key the word before: in the learned
    bilinear form, a query's word against a key's layer-1 channel is largest for the same word."""
    W = induction[2]
    M = W[2] @ W[3].T / np.sqrt(th.D_K)  # (2V, 2V): query feature x key feature
    block = M[:th.V, th.V:]  # the query's word x the key's "word before me" (what layer 1 wrote)
    off = block[~np.eye(th.V, dtype=bool)]
    assert np.diag(block).min() > off.max()


def test_the_two_layer_gradient_is_the_derivative_of_the_loss():
    """Central differences on entries of all four matrices, layer 1's gradient passing through layer 2."""
    words = th.repeat_task()
    rng = np.random.default_rng(4)
    W = [rng.standard_normal((2 * th.V, th.D_K)) for _ in range(4)]
    _, _, _, grads = th.two_layer_loss_and_grads(W, words)
    eps = 1e-6
    for m in range(4):
        for f, d in ((0, 0), (9, 3), (15, 7)):
            plus, minus = [w.copy() for w in W], [w.copy() for w in W]
            plus[m][f, d] += eps
            minus[m][f, d] -= eps
            numeric = (th.two_layer_loss_and_grads(plus, words)[0]
                       - th.two_layer_loss_and_grads(minus, words)[0]) / (2 * eps)
            assert grads[m][f, d] == pytest.approx(numeric, rel=1e-5, abs=1e-9), (m, f, d)

