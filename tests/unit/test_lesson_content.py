"""The attention lesson's science: what its cells and numbers show is what the text says it shows.

What every lesson gets (its cells run in page order without error, print the numbers the text quotes,
and print the same when run again) is in tests/unit/test_every_lesson.py. Here the cells run too, in CPython,
every one of them in one namespace (``run_cells``), for the checks particular to this lesson.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import sweep_reference as experiments
import attention_numbers as lesson_numbers

from sitebuild.pages.lessons import read_lesson
from sitebuild.pages.numbers import PLACEHOLDER

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "lessons" / "attention.md"


@pytest.fixture(scope="module")
def lesson():
    return read_lesson(LESSON, maths=False)


def run_cell(cell, namespace) -> str:
    """Run one cell in the page's shared namespace; return what it printed."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(cell.code, f"{LESSON.name}:{cell.line} (cell {cell.id})", "exec"), namespace)  # noqa: S102 (running the lesson is the test)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def run_cells(lesson):
    """Run every cell in order in one namespace; return ({cell id: stdout}, namespace)."""
    namespace: dict = {"__name__": "__lesson__"}
    outputs = {cell.id: run_cell(cell, namespace) for cell in lesson.cells}
    return outputs, namespace


@pytest.fixture(scope="module")
def numbers():
    return lesson_numbers.numbers()


def test_the_first_experiment_keeps_its_cell_ids_in_order(lesson):
    # the page's browser tests drive these four cells by id; Step 1 runs them one after another,
    # after the warm-up's two cells
    ids = [c.id for c in lesson.cells]
    assert ids[:2] == ["average", "running"]
    start = ids.index("setup")
    assert ids[start:start + 4] == ["setup", "scores", "softmax", "output"]


def test_every_placeholder_in_the_text_is_a_known_number(numbers):
    used = set(PLACEHOLDER.findall(LESSON.read_text(encoding="utf-8")))
    assert used, "the lesson states no computed numbers?"
    assert used <= set(numbers), f"unknown: {sorted(used - set(numbers))}"


def test_every_printed_number_is_used_in_the_text():
    used = set(PLACEHOLDER.findall(LESSON.read_text(encoding="utf-8")))
    printed = {k for keys in lesson_numbers.CELL_PRINTS.values() for k in keys}
    # the twelve-block total is printed for the reader to see but stated in the maths section
    assert printed <= used | {"attn_params_12"}, sorted(printed - used)


def test_no_number_in_the_text_is_typed_in_by_hand(lesson):
    """Prose may name sizes (768, 12, 64) but no measured decimal: those are placeholders."""
    text = LESSON.read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)           # code blocks
    prose = re.sub(r"`[^`]*`", "", prose)                         # inline code
    prose = PLACEHOLDER.sub("", prose)
    decimals = re.findall(r"(?<![\w.])\d+\.\d+", prose)
    assert decimals == [], f"type these as {{{{ num.name }}}} placeholders: {decimals}"


def test_the_draft_experiment_really_is_saturated_and_the_fix_is_not(numbers):
    d = lesson_numbers.draft_experiment()
    assert d["q_var"] > 32                      # ~d_k, not 1
    assert d["scaled_std"] > 16                 # scaling by sqrt(d_k) leaves ~d_k
    assert d["scaled_entropy_mean"] < 0.01      # hard picks, not "back near log T"
    assert d["nan_rows"] >= 1                   # the naive exp overflows
    assert 0.5 < d["fixed_q_var"] < 2 and 0.5 < d["fixed_std"] < 2
    # the fixed rows are blends, over 800 rows of 200 seeds, not in one lucky row
    assert d["fixed_rows"].size == 800 and d["fixed_rows"].mean() > 0.7 * d["log_T"]
    # and it is not one unlucky seed: over many seeds the draft's setup stays saturated
    many = experiments.draft_step2_many(range(100))
    assert many["scaled_score_std"] > 32 and many["entropy_row0_scaled"] < 0.1


def test_the_sweep_shows_sqrt_dk_growth_and_a_flat_scaled_spread():
    rows = lesson_numbers.sweep()
    for row in rows:
        assert row["raw_std"] == pytest.approx(math.sqrt(row["d_k"]), rel=0.05)
        assert row["scaled_std"] == pytest.approx(1.0, abs=0.05)
        assert row["scaled_entropy"] > 1.6
    raw = [row["raw_entropy"] for row in rows]
    assert raw == sorted(raw, reverse=True) and raw[-1] < 0.1
    # the same regime as the dk-explorer widget's experiment, which draws differently
    widget = experiments.scaling_sweep(d_ks=(1024,), T=8, scale=False)
    assert widget["score_std"][0] == pytest.approx(rows[-1]["raw_std"], rel=0.1)


def test_the_scaled_sweep_at_the_largest_head_is_much_as_at_the_smallest():
    """The text states the scaled columns at d_k = 1024 and says they are much as at d_k = 4."""
    first, last = lesson_numbers.sweep()[0], lesson_numbers.sweep()[-1]
    for column, tolerance in (("scaled_std", 0.05), ("scaled_entropy", 0.05), ("scaled_maxw", 0.03),
                              ("scaled_jac", 0.02)):
        assert last[column] == pytest.approx(first[column], abs=tolerance), column


def test_the_sweep_jacobian_collapses_for_raw_scores_only():
    rows = lesson_numbers.sweep()
    for row in rows:
        assert row["scaled_jac"] > 0.3                   # a soft row of 8: an even one has sqrt(7)/8
    raw = [row["raw_jac"] for row in rows]
    assert raw == sorted(raw, reverse=True) and raw[-1] < 1e-4
    # what the text says about the median: most raw rows at d_k = 1024 pass almost nothing, a few pass a lot
    assert rows[-1]["raw_jac_tiny"] > 0.5 and rows[-1]["raw_jac_max"] > 0.1


def test_the_lookup_goes_from_soft_to_hard():
    rows = lesson_numbers.lookup()
    assert rows[0]["weights"].max() < 0.5 and rows[-1]["weights"][0] > 1 - 1e-4   # a blend, then key 0 alone
    assert rows[-1]["answer"] == pytest.approx(10.0, abs=1e-2)
    assert rows[-1]["jac"] < 1e-3 * rows[0]["jac"]


@pytest.mark.slow  # the lesson's cells at GPT-2's sizes
def test_the_init_rules_at_gpt2_sizes():
    """1/D saturates at C = 768, D = 64; 1/fan_in gives unit scale; GPT-2 and nn.Linear start near uniform."""
    r = lesson_numbers.init_rules()
    assert r["d"]["qvar"] == pytest.approx(768 / 64, rel=0.1) and r["d"]["top"] > 0.8
    assert r["c"]["qvar"] == pytest.approx(1.0, rel=0.1) and r["c"]["std"] == pytest.approx(1.0, rel=0.1)
    assert r["gpt2"]["qvar"] == pytest.approx(768 * 0.02**2, rel=0.1)
    assert r["torch"]["qvar"] == pytest.approx(1 / 3, rel=0.1)
    for rule in ("gpt2", "torch"):
        assert r[rule]["entropy"] > 0.95 * math.log(16)


def test_the_nn_linear_default_the_text_states():
    """The text says nn.Linear draws U(-1/sqrt(C), 1/sqrt(C)), variance 1/(3C): ask PyTorch."""
    torch = pytest.importorskip("torch", reason="PyTorch not installed (`pip install torch==2.13.0`)")
    torch.manual_seed(0)
    w = torch.nn.Linear(768, 3 * 768, bias=False).weight
    assert w.shape == (3 * 768, 768)                      # (out, in), as the text says
    assert w.abs().max() <= 1 / math.sqrt(768)
    assert w.var().item() == pytest.approx(1 / (3 * 768), rel=0.02)


def test_parameter_counts(run_cells, numbers):
    assert numbers["attn_params"] == 4 * 768**2 == 2_359_296
    assert numbers["attn_params_12"] == 12 * 2_359_296
    assert numbers["qkv_params"] + numbers["proj_params"] == numbers["attn_params"]
    outputs, _ = run_cells
    counts = re.findall(r"H = +(\d+), D = +(\d+): ([\d,]+) parameters", outputs["params"])
    assert len(counts) == 4 and {c for _, _, c in counts} == {"2,359,296"}
    # the model total the text compares with: embeddings, 12 blocks, final LayerNorm
    assert numbers["gpt2_params"] == 50257 * 768 + 1024 * 768 + 12 * (12 * 768**2 + 2 * 768) + 768
    from lessonpy.maths.attention import attention_param_count
    assert attention_param_count(768) == numbers["attn_params"]


@pytest.mark.slow  # the lesson's cells at GPT-2's sizes
def test_the_multi_head_cell_matches_lessonpy():
    """Step 3's NumPy equals the tested multi_head_attention (which equals the PyTorch module)."""
    from lessonpy.maths.attention import multi_head_attention

    lesson = read_lesson(LESSON, maths=False)
    ns: dict = {}
    for cell in lesson.cells:  # up to and including the heads cell, so that no later cell renames anything
        run_cell(cell, ns)
        if cell.id == "heads":
            break
    # the cell's weights are (in, out); multi_head_attention takes nn.Linear's (out, in)
    expected, weights = multi_head_attention(ns["x"], ns["W_qkv"].T, ns["W_o"].T, n_head=12, return_weights=True)
    assert ns["att"].shape == (2, 12, 5, 5) and ns["y"].shape == (2, 5, 768)
    np.testing.assert_allclose(ns["att"], weights, atol=1e-12)
    np.testing.assert_allclose(ns["y"], expected, atol=1e-10)


@pytest.mark.slow  # the lesson's cells at GPT-2's sizes
def test_the_heads_widget_has_the_heads_cells_width_heads_and_weight_names():
    """The widget under the `heads` cell splits the cell's C into its H heads and names its matrices as the
    cell does, so what the widget states (shapes, 4·C² parameters) is what the reader's cell computes."""
    import yaml
    from lesson_source import fences_of
    from lessonpy.course.attention import widget_payloads

    lesson = read_lesson(LESSON, maths=False)
    ns: dict = {}
    for cell in lesson.cells:
        run_cell(cell, ns)
        if cell.id == "heads":
            break
    [body] = [body for body, options, _ in fences_of(lesson, "widget") if options.get("id") == "heads"]
    payload = widget_payloads.prerender_heads(yaml.safe_load(body))
    stats = payload["stats"]
    assert (stats["C"], stats["H"], stats["D"]) == (ns["C"], ns["H"], ns["D"])
    assert stats["param_shapes"] == {"W_qkv": list(ns["W_qkv"].shape), "W_o": list(ns["W_o"].shape)}
    assert stats["counted"] == ns["W_qkv"].size + ns["W_o"].size


def test_the_split_demo_shows_the_right_and_the_wrong_reshape(run_cells):
    outputs, _ = run_cells
    out = outputs["split-demo"]
    assert "head 0, reshape then transpose: [[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23]]" in out
    assert "head 1, reshape then transpose: [[4, 5, 6, 7], [14, 15, 16, 17], [24, 25, 26, 27]]" in out
    assert "head 0, reshape alone:          [[0, 1, 2, 3], [4, 5, 6, 7], [10, 11, 12, 13]]" in out


def test_step1_weights_are_a_proper_softmax(run_cells):
    outputs, ns = run_cells
    np.testing.assert_allclose(ns["weights"].sum(axis=1), 1.0)
    assert "output shape: (4, 8)" in outputs["output"]
    assert "nan" in outputs["overflow"].split("\n")[0] and "nan" not in outputs["overflow"].split("\n")[1]


def test_the_shown_files_are_the_scaffold_and_the_runnable_one_is_minilms_forward_pass(lesson):
    """Two kinds of include: shown (the PyTorch files the reader keeps) and runnable (a cell whose code is the file)."""
    fences = [t for t in lesson.tokens if t.type == "fence" and "include" in t.meta]
    shown = [t.meta["include"] for t in fences if "cell_id" not in t.meta]
    runnable = [(t.meta["cell_id"], t.meta["include"]) for t in fences if "cell_id" in t.meta]
    assert shown == ["py/scaffold/config.py", "py/scaffold/attention.py", "py/scaffold/check_attention.py"]
    assert runnable == [("minilm-forward", "py/lessonpy/models/minilm.py")]
    for token in fences:
        assert token.content == (ROOT / token.meta["include"]).read_text(encoding="utf-8")
    cell = next(c for c in lesson.cells if c.id == "minilm-forward")
    assert cell.code + "\n" == (ROOT / "py/lessonpy/models/minilm.py").read_text(encoding="utf-8") and cell.fold


def test_the_live_sentence_uses_the_cell_that_holds_minilms_forward_pass(lesson):
    from sitebuild.pages.widget_fence import parse_widget
    from sitebuild.pages.lessons import parse_fence_info

    # the real-heads section's widget (Step 3's shows stored heads only: no live panel, no forward)
    widget = next(t for t in lesson.tokens if t.type == "fence" and t.info.startswith("widget real-heads id=real-heads"))
    _, flags, options = parse_fence_info(widget.info, lesson.source_path, 1)
    spec = parse_widget(widget.content, options, {"flags": flags, "path": lesson.source_path, "line": 1})
    assert spec["options"]["forward"] == "minilm-forward" in [c.id for c in lesson.cells]


def test_the_lesson_has_every_part_in_order(lesson):
    titles = [text for level, _, text in lesson.headings if level == 2]
    assert titles[0] == "Where we are"
    # the payoff, trained heads, comes right after Step 3's hand-built ones and before the quiz
    expected = ["Step 1", "Step 2", "Step 3", "Real heads", "What attention costs", "The module", "The maths",
                "Run it on your laptop", "What you can now do", "Quiz", "Practice it yourself", "What’s next"]
    positions = [next(i for i, t in enumerate(titles) if t.startswith(e)) for e in expected]
    assert positions == sorted(positions)
    text = LESSON.read_text(encoding="utf-8")
    for marker in ("```widget attention-view", "```widget dk-explorer", "```widget heads", "```widget step-through"):
        assert marker in text
    quiz_at, practice_at = text.index("## Quiz"), text.index("## Practice it yourself")
    assert text.count("```quiz id=", quiz_at, practice_at) >= 6
    assert text.count("```exercise id=", practice_at) == 4


@pytest.mark.slow  # the lesson's cells at GPT-2's sizes
def test_every_large_number_typed_in_the_lesson_is_a_computed_one():
    """Quiz answers and exercise prompts spell out counts like 2,359,296: each must be one the code computes."""
    from attention_numbers import numbers

    computed = {f"{v:,}" for v in numbers().values() if isinstance(v, int)}
    typed = re.findall(r"\b\d{1,3}(?:,\d{3})+\b", LESSON.read_text(encoding="utf-8"))
    assert typed, "expected the parameter counts in the quiz and exercises"
    assert set(typed) <= computed, f"numbers typed by hand that no code computes: {set(typed) - computed}"


# ---------------------------------------------------------------------------- the new sections
# (issue 7 part 4): the warm-up's averages, the hand-built cat, order, and the T^2 cost

def test_the_warm_up_averages_are_the_mean_and_the_running_mean(run_cells):
    outputs, ns = run_cells
    vals = ns["vals"]
    np.testing.assert_array_equal(vals, lesson_numbers.AVG_VALUES)
    avg = lesson_numbers.averaging()
    np.testing.assert_allclose(avg["uniform_out"], np.tile(vals.mean(axis=0), (len(vals), 1)))
    np.testing.assert_allclose(avg["running_out"][-1], vals.mean(axis=0))  # the last row sees everyone
    np.testing.assert_allclose(ns["W_running"], avg["running"])
    assert np.all(np.triu(ns["W_running"], k=1) == 0)  # nothing above the diagonal: the causal triangle
    assert "same as a running mean: True" in outputs["running"]


def test_the_causal_mask_on_equal_scores_is_the_running_mean_and_a_fully_masked_row_is_nan(run_cells):
    """The warm-up says a masked row whose remaining scores are equal is the running mean; "What's next"
    says Step 1's softmax takes the mask's -inf in its stride because every row keeps its own position,
    and that a row with every key masked would come out as NaN."""
    _, ns = run_cells
    softmax = ns["softmax"]  # the reader's Step 1 softmax, as the cell defines it
    n = len(lesson_numbers.AVG_VALUES)
    allowed = np.tril(np.ones((n, n), dtype=bool))
    masked = np.where(allowed, 0.0, -np.inf)  # equal scores, the future at -inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or invalid-value warning on the way
        w = softmax(masked)
    np.testing.assert_array_equal(w[~allowed], 0.0)
    np.testing.assert_allclose(w, lesson_numbers.averaging()["running"])
    with np.errstate(invalid="ignore"):
        assert np.isnan(softmax(np.full((1, n), -np.inf))).all()


def test_the_cat_cell_is_the_example_the_view_and_the_numbers_use(run_cells):
    """The cell holds its arrays literally for the reader to edit; lessonpy.course.attention.cat_example must hold the same."""
    from lessonpy.course.attention import cat_example

    _, ns = run_cells
    assert ns["sentence"] == cat_example.SENTENCE
    for cell_name, module_name in (("X_cat", "X"), ("Wq_cat", "W_Q"), ("Wk_cat", "W_K"), ("Wv_cat", "W_V")):
        np.testing.assert_array_equal(ns[cell_name], getattr(cat_example, module_name))
    w = ns["w_cat"]
    it, cat = cat_example.SENTENCE.index("it"), cat_example.SENTENCE.index("cat")
    assert w[it].argmax() == cat and w[it, cat] > 0.9  # "it" finds "cat"
    others = np.delete(w, it, axis=0)
    np.testing.assert_allclose(others, 1 / len(cat_example.SENTENCE))  # nobody else asks: flat rows
    out = ns["out_cat"][it]
    assert out[0] == out[1] > 0.9  # "it" now carries "noun" and "animate"


def test_breaking_the_cat_does_what_the_text_says():
    c = lesson_numbers.cat_example()
    it, cat, sat = c["it"], c["cat"], c["sat"]
    np.testing.assert_allclose(c["w_silent"][it], 1 / 7)  # no question: the plain average
    rival = c["w_rival"][it]
    assert rival.argmax() == cat and rival[sat] == np.sort(rival)[-2] and rival[sat] > 5 * rival[0]


def test_shuffling_the_words_shuffles_the_outputs(run_cells):
    outputs, _ = run_cells
    c = lesson_numbers.cat_example()
    from lessonpy.course.attention import cat_example

    np.testing.assert_allclose(c["out_perm"], c["out"][cat_example.PERM])
    assert "the old outputs, shuffled the same way: True" in outputs["permute"]
    assert sorted(cat_example.PERM) == list(range(len(cat_example.SENTENCE))) and cat_example.PERM != sorted(cat_example.PERM)


@pytest.mark.slow  # the lesson's cells at GPT-2's sizes
def test_the_cost_cell_counts_every_size_exactly(run_cells):
    outputs, _ = run_cells
    rows = re.findall(r"^ *(\d+) +([\d.]+) MiB +([\d,]+) +([\d,]+)$", outputs["cost"], flags=re.M)
    assert [int(t) for t, *_ in rows] == list(lesson_numbers.COST_TS)
    d, C = lesson_numbers.COST_D, lesson_numbers.GPT2["n_embd"]
    for T, mib, attend, project in rows:
        T = int(T)
        assert float(mib) == pytest.approx(lesson_numbers.weights_mib(T, 4), abs=0.005)
        assert int(attend.replace(",", "")) == 2 * T * T * d
        assert int(project.replace(",", "")) == 3 * T * C * d
    # four times the memory per doubling of T, and attention overtakes the projections at T = 3C/2
    assert lesson_numbers.weights_mib(2048, 4) == 4 * lesson_numbers.weights_mib(1024, 4) == 16.0
    cross = lesson_numbers.numbers()["cost_cross_T"]
    assert 2 * cross**2 * d == 3 * cross * C * d


def test_the_gpt2_layer_share_is_the_t_squared_part_of_every_multiply_add():
    """Against a count from the shapes: QKV (C->3C), W_o, MLP (C->4C->C) per token, and the H heads' T x T work."""
    C, T, H = lesson_numbers.GPT2["n_embd"], lesson_numbers.GPT2["block_size"], lesson_numbers.GPT2["n_head"]
    D = C // H
    linear = T * (C * 3 * C + C * C + C * 4 * C + 4 * C * C)
    pairs = H * (T * T * D + T * T * D)
    share = pairs / (pairs + linear)
    assert lesson_numbers.numbers()["cost_gpt2_share"] == f"{share:.0%}"
    half = lesson_numbers.numbers()["cost_half_T"]
    assert 2 * half**2 * C == 12 * half * C**2


# ---------------------------------------------------------------------------- issue 41, second part

def test_step_3_shows_one_trained_layer_before_the_random_split():
    """Step 3 opens on real heads (shipped data, no live model, no ablations), the random heads after."""
    text = LESSON.read_text(encoding="utf-8")
    step3, step3_end = text.index("## Step 3"), text.index("### A head learns its job")
    real = text.index("```widget real-heads id=step3-heads", step3, step3_end)
    assert real < text.index("```widget heads", step3, step3_end)
    fence = text[real:text.index("```\n", real + 3)]
    assert "live: false" in fence and "ablation: false" in fence


def test_step_3s_real_heads_disagree_on_the_second_the_as_the_text_says():
    """MiniLM's sentence 0, the second *the*: in the featured same-token head's layer one head looks back one
    token, one at the earlier *the*, and several put their largest weight on [CLS]."""
    from lessonpy.models import realheads

    heads = realheads.load("minilm")
    tokens, layer = heads.tokens(0), heads.featured_head("same")["layer"]
    query = [i for i, t in enumerate(tokens) if t == "the"][1]
    tops = heads.weights(0)[layer, :, query].argmax(axis=-1)
    assert query - 1 in tops and tokens[query - 1] == "on"
    assert tokens.index("the") in tops
    assert (tops == 0).sum() >= 3 and tokens[0] == "[CLS]"


#: Issue 41's budget for Lesson 4's main path: about 45 minutes of reading (it was 10,300 words, 2-3 hours).
MAIN_PATH_WORDS = 6_500


def main_path_words(tokens) -> int:
    """The words of the prose a reader meets outside the closed asides: paragraphs, headings and lists (their
    inline text, a number or an inline formula as one word); code, display maths, widgets and asides not counted."""
    from sitebuild.pages import aside

    words, inside = 0, False
    for token in tokens:
        if token.type in (aside.OPEN, aside.CLOSE):
            inside = token.type == aside.OPEN
        elif token.type == "inline" and not inside:
            text = re.sub(r"\{\{.*?\}\}|\$[^$]+\$", "N", token.content)
            words += len(text.split())
    return words


def test_lesson_4s_main_path_keeps_to_its_reading_budget(lesson):
    words = main_path_words(lesson.tokens)
    assert 3_000 < words <= MAIN_PATH_WORDS, f"Lesson 4's main path has {words:,} words of prose; the budget is {MAIN_PATH_WORDS:,}"
