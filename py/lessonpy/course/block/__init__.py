"""Lesson 6, the transformer block: its parts in NumPy (``parts``: the norms, GELU, the MLPs, post-LN and pre-LN
blocks, the parameter counts), the blocks assembled from them with the real models' weights (``real_layers``:
MiniLM's and SmolLM2's layers, SmolLM2's residual stream and its logit lens) and the experiments the lesson
quotes (``experiments``: gradients through deep stacks, the stream's scale)."""
