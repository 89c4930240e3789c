"""Causal self-attention for the course's GPT (lesson 5): lesson 4's module, blind to the future.

Save next to config.py and attention.py. Position t reads positions 0..t only: before
the softmax, its scores for every later key become -inf. Why -inf: exp(-inf) is
exactly 0 in every dtype, so a hidden key gets weight 0 and nothing of the future leaks
in; a constant such as -1e9 also gives 0 in float32, but does not fit in float16
(largest 65504: masked_fill refuses it). Every row keeps its diagonal (a position
always sees itself), so no row is all -inf: PyTorch's softmax subtracts the row's max
before exp, and with a finite max that never computes -inf - (-inf) = nan.
Shape letters as in attention.py.
"""

import torch

from attention import MultiHeadAttention
from config import GPTConfig


class CausalSelfAttention(MultiHeadAttention):
    """MultiHeadAttention in which each position reads itself and earlier positions only."""

    def __init__(self, config: GPTConfig):
        super().__init__(config)
        self.block_size = config.block_size
        # True where key j comes after query i (j > i): the future. A buffer, so it
        # follows .to(device) but is never trained; not persistent, so it stays out of
        # state_dict (the config rebuilds it) and lesson 4's weights load as they are
        ones = torch.ones(config.block_size, config.block_size, dtype=torch.bool)
        self.register_buffer("future", ones.triu(diagonal=1), persistent=False)  # (block_size, block_size)

    def mask_scores(self, scores: torch.Tensor) -> torch.Tensor:
        """Set every query's scores for later keys to -inf: (B, H, T, T) -> (B, H, T, T)."""
        T = scores.size(-1)
        if T > self.block_size:
            raise ValueError(f"a sequence of {T} positions is longer than block_size={self.block_size}, "
                             f"the most this module can mask")
        # the top-left (T, T) corner, broadcast over B and H: every head hides the same keys
        return scores.masked_fill(self.future[:T, :T], float("-inf"))
