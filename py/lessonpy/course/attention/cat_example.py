"""The lesson's hand-built example: "the cat sat because it was warm", where *it* finds *cat*.

Each word is four features a reader can name; W_q makes a pronoun ask for "an animate noun",
W_k makes each word answer with what it is, and W_v hands over the features themselves.
The lesson's cells hold these arrays literally (so a reader can edit them); this module is
the copy the text's numbers (``lessons/attention_numbers.py``) and the view's pre-rendered picture come from,
and the tests check the cells print the same numbers.
"""

from __future__ import annotations

import numpy as np

from ...maths.attention import softmax
from ...maths.show import build_payload

__all__ = ["SENTENCE", "FEATURES", "X", "W_Q", "W_K", "W_V", "PERM", "attend", "payload"]

SENTENCE = ["the", "cat", "sat", "because", "it", "was", "warm"]
FEATURES = ["noun", "animate", "pronoun", "verb"]
#: (7, 4): one row per word, one column per feature
X = np.array([[0, 0, 0, 0],   # the
              [1, 1, 0, 0],   # cat
              [0, 0, 0, 1],   # sat
              [0, 0, 0, 0],   # because
              [0, 0, 1, 0],   # it
              [0, 0, 0, 1],   # was
              [0, 0, 0, 0]],  # warm
             dtype=float)
#: (4, 2): two query/key slots, "a noun" and "something animate"; only the pronoun asks
W_Q = np.array([[0, 0], [0, 0], [3, 3], [0, 0]], dtype=float)
#: (4, 2): a noun answers in slot 0, an animate word in slot 1
W_K = np.array([[1, 0], [0, 1], [0, 0], [0, 0]], dtype=float)
#: (4, 4): the value of a word is its own features
W_V = np.eye(4)
#: the shuffle of the lesson's "permute" cell
PERM = [6, 4, 1, 3, 0, 5, 2]


def attend(X, W_q, W_k, W_v):
    """One head over the rows of X (T, F): returns scores (T, T), weights (T, T), out (T, d_v)."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    weights = softmax(scores)
    return scores, weights, weights @ V


def payload(title=None, target=None):
    """What the lesson's "cat" cell sends with show_attention: the view's picture before Python runs."""
    scores, weights, out = attend(X, W_Q, W_K, W_V)
    return build_payload(scores=scores, weights=weights, V=X @ W_V, out=out, tokens=list(SENTENCE),
                          title=title, target=target)
