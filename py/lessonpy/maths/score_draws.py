"""Random unit-variance queries and keys, drawn once and reused: what the d_k explorer widget draws.

q and k have entries ~ N(0, 1), which is what a projection with variance 1/fan_in gives; the widget sweeps
the head size d_k over them. The reference sweep the tests check the widget against is
``tests/support/sweep_reference.py``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["UnitDraws", "unit_draws"]

# One cached draw for "unit" q, k, with the raw scores made from it so far:
# moving a slider (temperature, scale, d_k) re-uses them instead of drawing and
# multiplying again, which is nearly all of the cost in the browser.
_unit_cache: dict = {}


class UnitDraws:
    """q, k ~ N(0, 1) for ``n_trials`` sequences of T positions, grown on demand.

    Drawn channel by channel, so the first d channels are the same whatever the
    largest d_k asked for: a smaller d_k is just a prefix, and the results
    depend only on the arguments, never on earlier calls.
    """

    def __init__(self, seed, n_trials, T):
        self.rng = np.random.default_rng(seed)
        self.n, self.T = n_trials, T
        self.q = np.empty((n_trials, T, 0))  # (n, T, d)
        self.kt = np.empty((n_trials, 0, T))  # (n, d, T): K transposed, ready for q @ kt
        self.scores = {0: np.zeros((n_trials, T, T))}  # raw q @ k.T by d, memoised

    def _grow(self, d):
        have = self.q.shape[-1]
        if have >= d:
            return
        more = self.rng.standard_normal((d - have, 2, self.n, self.T))  # channel-major
        self.q = np.concatenate([self.q, more[:, 0].transpose(1, 2, 0)], axis=-1)
        self.kt = np.concatenate([self.kt, more[:, 1].transpose(1, 0, 2)], axis=1)

    def _block(self, lo, hi):
        """Channels lo..hi-1 of q @ k.T: (n, T, hi-lo) @ (n, hi-lo, T) -> (n, T, T)."""
        return self.q[..., lo:hi] @ self.kt[:, lo:hi, :]

    def raw_scores(self, d):
        """q @ k.T over the first d channels: (n, T, T), unscaled.

        Summed along a fixed path (channels 0-1, 1-2, 2-4, 4-8, ... then the
        rest up to d), so the rounding, and hence every result, depends on d
        alone; and a sweep over 4, 8, ..., 512 multiplies each channel once.
        """
        if d not in self.scores:
            self._grow(d)
            p = 1 << (d.bit_length() - 1)  # largest power of two <= d
            if p == d:
                self.scores[d] = self.raw_scores(p // 2) + self._block(p // 2, p)
            else:
                self.scores[d] = self.raw_scores(p) + self._block(p, d)
        return self.scores[d]


def unit_draws(seed, n_trials, T):
    """The cached draws for these arguments (a fresh, uncached one when seed is None)."""
    key = (seed, n_trials, T)
    if seed is not None and key in _unit_cache:
        return _unit_cache[key]
    draws = UnitDraws(seed, n_trials, T)
    if seed is not None:
        _unit_cache.clear()  # keep one entry: a few MB at most
        _unit_cache[key] = draws
    return draws
