"""A trained head's first picture in an attention-view (lessonpy.course.attention.widget_payloads.real_head_example):
the reader's attention on the stored Q and K, its scores computed once for both the scores and the weights."""

from __future__ import annotations

import numpy as np
import pytest

from lessonpy.course.attention import widget_payloads
from lessonpy.models import realheads


@pytest.mark.parametrize("cell", sorted(realheads.CELL_HEADS))
def test_a_real_heads_first_picture_computes_its_scores_once(cell, monkeypatch):
    model, job, s = realheads.CELL_HEADS[cell]
    expected, _ = realheads.reproduce(realheads.load(model), s, job)
    counted = []
    scores = realheads.featured_scores
    monkeypatch.setattr(realheads, "featured_scores", lambda *args: counted.append(args) or scores(*args))
    payload = widget_payloads.real_head_example(cell)
    assert len(counted) == 1, "the featured head's scores were computed more than once"
    np.testing.assert_array_equal(payload["arrays"]["weights"], expected.astype(np.float32))
