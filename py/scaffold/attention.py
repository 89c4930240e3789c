"""Multi-head self-attention for the course's GPT (lesson 4; lesson 5 adds the mask).

Save next to config.py. Letters used in the shape comments:
    B sequences in a batch    T positions per sequence    C = n_embd channels
    H = n_head heads          D = C // H channels per head
"""

import math

import torch
from torch import nn

from config import GPTConfig


class MultiHeadAttention(nn.Module):
    """H heads of softmax(q k^T / sqrt(D)) v, then one mixing matrix: (B, T, C) -> (B, T, C).

    The projections are named after torch.nn.MultiheadAttention's (in_proj_weight,
    out_proj), which hold the same matrices in the same layout, so its weights and
    ours can be compared one to one.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.n_head = config.n_head
        C = config.n_embd
        # queries, keys and values of every head from one matrix. nn.Linear keeps
        # its weight as (out, in) = (3C, C) and computes x @ weight.T; rows 0..C-1
        # give q, rows C..2C-1 give k, the rest give v
        self.in_proj = nn.Linear(C, 3 * C, bias=config.bias)
        # the heads' outputs, laid end to end, are C wide; this matrix mixes them
        self.out_proj = nn.Linear(C, C, bias=config.bias)
        # dropout on the attention weights, and on what goes back to the residual stream
        self.weights_dropout = nn.Dropout(config.dropout)
        self.out_dropout = nn.Dropout(config.dropout)

    def split_heads(self, t: torch.Tensor) -> torch.Tensor:
        """Give each head its D channels of q, k or v: (B, T, C) -> (B, H, T, D)."""
        t = t.unflatten(-1, (self.n_head, -1))  # (B, T, H, D): channel h*D + d -> [h, d]
        return t.transpose(1, 2)  # (B, H, T, D): heads act like a batch axis

    def merge_heads(self, t: torch.Tensor) -> torch.Tensor:
        """Lay the heads' outputs end to end again: (B, H, T, D) -> (B, T, C)."""
        t = t.transpose(1, 2)  # (B, T, H, D)
        return t.flatten(2)  # (B, T, C); copies, as the transpose is not contiguous

    def mask_scores(self, scores: torch.Tensor) -> torch.Tensor:
        """Hide some keys from some queries before the softmax: (B, H, T, T) -> (B, H, T, T).

        Here every query sees every key, so the scores pass unchanged; Lesson 5's
        CausalSelfAttention overrides this to hide the future.
        """
        return scores

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.in_proj(x).chunk(3, dim=-1)  # (B, T, 3C) -> 3 x (B, T, C)
        q, k, v = map(self.split_heads, (q, k, v))  # 3 x (B, H, T, D)

        # every query against every key of its own head (.mT swaps the last two
        # axes); dividing by sqrt(D) takes the head size out of the scores' variance
        scores = q @ k.mT / math.sqrt(q.size(-1))  # (B, H, T, D) @ (B, H, D, T) -> (B, H, T, T)
        scores = self.mask_scores(scores)  # (B, H, T, T); unchanged here, lesson 5 masks the future
        # (B, H, T, T), rows sum to 1; in training, dropout zeroes some and scales the rest by 1/(1-p)
        weights = self.weights_dropout(scores.softmax(dim=-1))
        heads = weights @ v  # (B, H, T, T) @ (B, H, T, D) -> (B, H, T, D)
        return self.out_dropout(self.out_proj(self.merge_heads(heads)))  # (B, T, C)
