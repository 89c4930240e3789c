"""Check causal_attention.py on your own machine: put this file next to config.py,
attention.py and causal_attention.py, then run `python check_causal.py`."""

import torch
import torch.nn.functional as F

from causal_attention import CausalSelfAttention
from config import GPTConfig

config = GPTConfig()  # GPT-2 small: C = 768, H = 12
torch.manual_seed(0)
mine = CausalSelfAttention(config).eval()  # eval(): dropout off, runs repeat exactly
# the same input as check_attention.py: 2 sequences of 8 positions, C numbers each
tokens = torch.randn(2, 8, config.n_embd)

# 1. still one new vector per position
with torch.no_grad():
    out = mine(tokens)
print("output shape:", tuple(out.shape))

# 2. PyTorch's fused attention, told to mask the future, computes the same on our q, k, v
with torch.no_grad():
    q, k, v = (mine.split_heads(t) for t in mine.in_proj(tokens).chunk(3, dim=-1))  # 3 x (B, H, T, D)
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, D)
    reference = mine.out_proj(mine.merge_heads(heads))  # (B, T, C)
print("same as F.scaled_dot_product_attention(is_causal=True):", torch.allclose(out, reference, atol=1e-5))

# 3. the mask at work: change the last position, and the first position's output stays put
later = tokens.clone()
later[:, -1] += 1.0
with torch.no_grad():
    moved = not torch.allclose(mine(later)[:, 0], out[:, 0])
print("position 0 reads position 7, its future:", moved)

# 4. so position t of one pass is what a pass over positions 0..t alone gives at its end:
# training scores all 8 predictions at once, and each one only saw its past
with torch.no_grad():
    prefixes = all(torch.allclose(out[:, t], mine(tokens[:, :t + 1])[:, -1], atol=1e-5) for t in range(8))
print("one pass = 8 passes over growing prefixes:", prefixes)
