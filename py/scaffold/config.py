"""Model configuration for the GPT we build in this course.

The defaults are GPT-2 small (124M parameters). Later lessons read more fields;
every lesson's code takes one ``GPTConfig`` so the sizes live in one place.
"""

from dataclasses import dataclass


@dataclass
class GPTConfig:
    block_size: int = 1024  # longest sequence the model can look at (its context)
    vocab_size: int = 50257  # GPT-2's BPE vocabulary: 50,000 merges + 256 bytes + <|endoftext|>
    n_layer: int = 12  # transformer blocks stacked on top of each other
    n_head: int = 12  # attention heads per block
    n_embd: int = 768  # width C of every position's vector
    dropout: float = 0.0  # nanoGPT: 0 to pretrain, 0.1+ to finetune (transformers' GPT-2 config: 0.1)
    bias: bool = False  # GPT-2 has biases; nanoGPT: False is "a bit better and faster"

    def __post_init__(self):
        # q, k and v (C wide each) are cut into n_head equal slices, so C must divide evenly
        if self.n_head < 1 or self.n_embd < 1:
            raise ValueError(f"n_head and n_embd must be positive, got "
                             f"n_head={self.n_head}, n_embd={self.n_embd}")
        if self.n_embd % self.n_head != 0:
            raise ValueError(f"n_embd={self.n_embd} must be divisible by "
                             f"n_head={self.n_head} so every head gets the same size")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")

    @property
    def head_size(self) -> int:
        """Channels per head, D = n_embd // n_head (64 for GPT-2 small)."""
        return self.n_embd // self.n_head
