"""Every lesson's exercise checks, by the name an exercise fence gives (``check:``): the registry the grader
(:data:`lessonpy.maths.grading.CHECKS`) and the notebook's ``%%exercise`` look a check up in. Each check lives
in its lesson's ``exercises`` module; a check's name is unique across the course (the build refuses one it
does not find here).
"""

from .attention.exercises import attention, attention_params, multi_head_attention, split_qkv
from .block.exercises import layer_norm, pre_ln_block
from .causal_mask.exercises import causal_attention, decode_step

__all__ = ["attention", "attention_params", "split_qkv", "multi_head_attention", "causal_attention", "decode_step",
           "layer_norm", "pre_ln_block"]
