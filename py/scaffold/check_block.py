"""Check block.py on your own machine: put this file next to config.py, attention.py,
causal_attention.py and block.py, then run `python check_block.py`. Step 4 also
needs the course's lessonpy wheel (the notebook's first cell installs it)."""

import torch
import torch.nn.functional as F

from block import Block
from config import GPTConfig

config = GPTConfig()  # GPT-2 small: C = 768, H = 12, no biases
C = config.n_embd
torch.manual_seed(0)
mine = Block(config).eval()  # eval(): dropout off, runs repeat exactly
tokens = torch.randn(2, 8, C)  # 2 sequences of 8 positions, C numbers each

# 1. the stream keeps its shape: one vector per position, in and out
with torch.no_grad():
    out = mine(tokens)
print("output shape:", tuple(out.shape))

# 2. 4C^2 in attention, 8C^2 in the MLP, and the two norms' C gains
count = sum(p.numel() for p in mine.parameters())
print(f"parameters: {count:,} = 12 * {C}**2 + 2 * {C}: {count == 12 * C**2 + 2 * C}")

# 3. the same block from PyTorch's own functions, given our weights
W = {name: p.detach() for name, p in mine.named_parameters()}
with torch.no_grad():
    def attention(h):  # (B, T, C): PyTorch's fused causal attention on our q, k, v
        q, k, v = (mine.attn.split_heads(t) for t in (h @ W["attn.in_proj.weight"].T).chunk(3, dim=-1))
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, D)
        return mine.attn.merge_heads(heads) @ W["attn.out_proj.weight"].T

    def mlp(h):  # (B, T, C) -> (B, T, 4C) -> (B, T, C)
        return F.gelu(h @ W["mlp.fc.weight"].T, approximate="tanh") @ W["mlp.proj.weight"].T

    x = tokens + attention(F.layer_norm(tokens, (C,), W["ln_1.weight"]))
    reference = x + mlp(F.layer_norm(x, (C,), W["ln_2.weight"]))
print("same as PyTorch's functions:", torch.allclose(out, reference, atol=1e-5))

# 4. the same block in the lesson's NumPy, given the same weights
try:
    from lessonpy.course.block.parts import gpt2_block
except ImportError:
    print("same as the lesson's NumPy block: skipped (install the lessonpy wheel)")
else:
    numpy_out = gpt2_block(tokens.double().numpy(), {n: w.double().numpy() for n, w in W.items()}, config.n_head)
    print("same as the lesson's NumPy block:", bool(abs(numpy_out - out.double().numpy()).max() < 1e-5))

# 5. two writes to a stream: with both output matrices at zero the block passes x through
with torch.no_grad():
    mine.attn.out_proj.weight.zero_()
    mine.mlp.proj.weight.zero_()
    print("with nothing written, out = x:", torch.equal(mine(tokens), tokens))
