"""The transformer block for the course's GPT (lesson 6): two writes to a residual stream.

Save next to config.py, attention.py and causal_attention.py. Pre-LN, as GPT-2: each sublayer reads a
normalised copy of the stream and adds what it computes back to it. Attention (lesson 5's, causal) mixes
positions; the MLP works on each position alone. Shape letters as in attention.py; F = 4C.
"""

import torch
from torch import nn

from causal_attention import CausalSelfAttention
from config import GPTConfig


class MLP(nn.Module):
    """C -> 4C -> C on every position alone, with GPT-2's GELU (its tanh form): (B, T, C) -> (B, T, C)."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        C = config.n_embd
        self.fc = nn.Linear(C, 4 * C, bias=config.bias)  # widen: (4C, C) weights, 4C^2 parameters
        # approximate="tanh": GPT-2's formula; the default "none" is the exact x * Phi(x), at most 5e-4 away
        self.gelu = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(4 * C, C, bias=config.bias)  # back to the stream's width: 4C^2 more
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.proj(self.gelu(self.fc(x))))  # (B, T, C) -> (B, T, 4C) -> (B, T, C)


class Block(nn.Module):
    """LayerNorm, causal attention, add; LayerNorm, MLP, add: (B, T, C) -> (B, T, C).

    12 C^2 parameters in the four attention matrices and the two MLP ones, and the norms' C gains each (and C
    biases with config.bias)."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        # bias=config.bias: the course's configuration has no biases anywhere, the norms' included (torch >= 2.1)
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))  # (B, T, C): attention's write, added to the stream
        return x + self.mlp(self.ln_2(x))  # (B, T, C): the MLP's write, added after it
