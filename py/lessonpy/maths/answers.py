"""What every lesson's attention exercise checks first of the reader's answer: what an attention function
returned, (out, weights), with the shapes it must have, and the float type the reader computed in, which sets
how closely an answer is held to the reference. Shared by the course's exercises (Lesson 4's attention,
Lesson 5's causal attention), one definition for both.
"""

from __future__ import annotations

import numpy as np

from .grading import CheckFailed
from .tolerance import float_of


def shape_of(value) -> tuple | None:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def out_and_weights(got) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """(out, weights) as float64 arrays, and the float the reader computed them in."""
    out, weights = got
    return np.asarray(out, dtype=float), np.asarray(weights, dtype=float), float_of(out, weights)


def returned(got, shown: str, T: int, d_k: int, d_v: int) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """(out, weights, their float) from what attention returned, or a CheckFailed naming what is off."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise CheckFailed(f"{shown} should return two arrays, (out, weights); it returned "
                          f"{type(got).__name__}" + (f" of length {len(got)}" if isinstance(got, (tuple, list)) else ""))
    if shape_of(got[0]) == (T, T) and shape_of(got[1]) == (T, d_v):
        raise CheckFailed(f"{shown} returned (weights, out): the first array has the weights' shape {(T, T)} and "
                          f"the second out's {(T, d_v)}. Return them the other way round: return out, weights")
    out, weights, dtype = out_and_weights(got)
    if weights.shape != (T, T):
        why = (f": that is (d_k, d_k), a product over the positions; the scores multiply over the features, "
               f"Q @ K.T of shape {(T, T)}" if weights.shape == (d_k, d_k)
               else f" (Q is {(T, d_k)}, K is {(T, d_k)}: one row per query, one column per key)")
        raise CheckFailed(f"weights have shape {weights.shape} where {(T, T)} was expected{why}")
    if out.shape != (T, d_v):
        why = (": it is transposed; weights @ V has one row per query" if out.shape == (d_v, T)
               else " (weights @ V)")
        raise CheckFailed(f"out has shape {out.shape} where {(T, d_v)} was expected{why}")
    return out, weights, dtype
