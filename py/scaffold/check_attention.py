"""Check attention.py on your own machine: put this file next to config.py and
attention.py, then run `python check_attention.py`."""

import torch

from attention import MultiHeadAttention
from config import GPTConfig

config = GPTConfig()  # GPT-2 small: C = 768, H = 12
torch.manual_seed(0)
mine = MultiHeadAttention(config).eval()  # eval(): dropout off, runs repeat exactly
# what lesson 3 would hand over: 2 sequences of 8 positions, C numbers each
tokens = torch.randn(2, 8, config.n_embd)

# 1. the output has the input's shape: one new vector per position
with torch.no_grad():
    out = mine(tokens)
print("output shape:", tuple(out.shape))

# 2. four C x C matrices, however many heads
count = sum(p.numel() for p in mine.parameters())
print(f"parameters: {count:,} = 4 * {config.n_embd}**2: {count == 4 * config.n_embd**2}")

# 3. PyTorch's own multi-head attention, given our weights, computes the same
C, H = config.n_embd, config.n_head
theirs = torch.nn.MultiheadAttention(C, H, bias=False, batch_first=True).eval()
with torch.no_grad():
    theirs.in_proj_weight.copy_(mine.in_proj.weight)  # (3C, C): q, k, v rows, same order
    theirs.out_proj.weight.copy_(mine.out_proj.weight)  # (C, C)
    reference, _ = theirs(tokens, tokens, tokens, need_weights=False)
print("same as torch.nn.MultiheadAttention:", torch.allclose(out, reference, atol=1e-5))

# 4. no mask yet: change the last position, and the first position's output moves
later = tokens.clone()
later[:, -1] += 1.0
with torch.no_grad():
    moved = not torch.allclose(mine(later)[:, 0], out[:, 0])
print("position 0 reads position 7, its future:", moved)
