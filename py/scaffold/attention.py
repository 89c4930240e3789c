"""Multi-head self-attention, as in GPT-2 (Lesson 4: no causal mask yet).

Put this file next to config.py and run it on your laptop with PyTorch.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from config import GPTConfig


class MultiHeadAttention(nn.Module):
    """Every position mixes in information from every position: (B, T, C) -> (B, T, C)."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        assert config.n_embd % config.n_head == 0, "n_embd must split evenly into heads"
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.head_size = config.head_size  # D = C // H
        # query, key and value projections for all heads in one matmul: C -> 3C
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        # after the heads are put side by side again, mix them: C -> C
        self.proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)  # on the attention weights
        self.resid_dropout = nn.Dropout(config.dropout)  # on what we add back to the residual stream

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()  # batch, sequence length, embedding width (n_embd)
        H, D = self.n_head, self.head_size

        # one projection, then cut into q, k, v
        q, k, v = self.qkv(x).split(self.n_embd, dim=2)  # 3 x (B, T, C)
        # give each head its own D channels, and move heads next to batch so the
        # matmuls below run over (B, H) at once
        q = q.view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        k = k.view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        v = v.view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)

        # scores of every query against every key; dividing by sqrt(D) keeps their
        # spread near 1 whatever the head size, so softmax does not saturate
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))  # (B, H, T, D) @ (B, H, D, T) -> (B, H, T, T)
        # no causal mask yet: every position sees the future too. Lesson 5 adds it here.
        att = F.softmax(att, dim=-1)  # (B, H, T, T), each row sums to 1
        att = self.attn_dropout(att)
        y = att @ v  # (B, H, T, T) @ (B, H, T, D) -> (B, H, T, D)

        # heads side by side again: transpose back, then copy into one block of memory
        # (view needs contiguous memory) and flatten the heads into C channels
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, H, T, D) -> (B, T, H, D) -> (B, T, C)
        return self.resid_dropout(self.proj(y))  # (B, T, C)
