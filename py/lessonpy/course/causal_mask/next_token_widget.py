""""What comes next?" (the next-token widget, Lesson 5): what the build gives it. The page's calls are
:func:`lessonpy.models.next_token.predict` and generation's (:mod:`lessonpy.models.generate`); here are its first picture (no numbers: they need the 97.7 MB of
weights, fetched only when the reader asks) and the options only the build knows."""

from __future__ import annotations

from pathlib import Path

from ...models import generate, next_token, smollm2
from ...models.bpe import BPE

#: the lesson's cells where the reader's own functions live: Lesson 5's masked head (the prefix cell) and the
#: cell for their exercise's decode_step (lessons/causal-mask.md)
READER_CELLS = {"causal_attention": "prefix", "decode_step": "my-decode-step"}


def prerender(o, target=None):
    """The first picture: the panel's controls only, until the reader runs the model."""
    return {"view": "next-token", "target": target}


def build_options(site):
    """The live files' sizes and sha256 (None: the site has none) and their folder, from the page; the preset text
    (decoded with the shipped tokenizer, None without it) and the heads its buttons knock out; the most tokens
    and next tokens a run reads; generation's limits; the cells of the reader's own functions."""
    folder = site.get("smollm2_dir")
    tokenizer = folder and BPE.from_json((Path(folder) / smollm2.TOKENIZER_NAME).read_text(encoding="utf-8"))
    return {"live_files": site.get("smollm2_files"), "live_url": site.get("smollm2_url"),
            "preset": next_token.preset(tokenizer) if tokenizer else None, "preset_heads": next_token.preset_heads(),
            "max_tokens": next_token.MAX_TOKENS, "max_top": next_token.MAX_TOP,
            "max_new_tokens": generate.MAX_NEW_TOKENS, "max_temperature": generate.MAX_TEMPERATURE,
            "max_seed": generate.MAX_SEED, "reader_cells": READER_CELLS}
