"""``show_residual_stream``: the reader's own residual stream, drawn by the residual-stream widget (Lesson 6).

Lesson 6's cells run SmolLM2 through the reader's own blocks, keeping ``stream`` (L + 1, T, C), the embedding then
the stream after each layer, and ``writes``, one ``{"attn": (T, C), "mlp": (T, C)}`` per layer (what
:func:`.parts.pre_ln_block` fills). ``show_residual_stream(stream=..., writes=..., tokens=..., model=m, tokenizer=bpe)``
checks them and sends the widget the numbers its own live run computes (:mod:`.residual_stream`, the same
functions: :func:`.real_layers.write_lengths`, :func:`.residual_stream.norms`, :func:`.residual_stream.lens_at`),
as one ``"arrays"`` event with ``view: "residual-stream"`` (the widget's spec ``receives`` it; routed as
``show_attention``'s are).

The lens of one position costs a pass through the output matrix (30 rows by 49,152 tokens for SmolLM2), so only
the shown position's is sent; picking another asks :func:`lens`, which reads it from the stream kept here (the
last one shown; ``key`` names it, so a lens is never read from another stream than the one drawn).

On a problem it emits the event with ``"error"`` (the widget shows it in place) and raises
:class:`~lessonpy.maths.show.ShowError` with the same one-line message, as ``show_attention`` does.
"""

from __future__ import annotations

import os

import numpy as np

from ...maths.show import FIGURES, ShowError, as_numbers, caption, check_tokens, send
from ...models import next_token
from ...runtime.limits import WIDGET_LIMITS  # the page's limits: every room may read them (tests/unit/test_layers.py)
from . import real_layers, residual_stream, stream_mpl

__all__ = ["show_residual_stream", "build_stream_payload", "lens"]

#: the most layers the chart draws, a row each (lessonpy.runtime.limits, from the widget's spec)
LAYERS = WIDGET_LIMITS["residual-stream"]["layers"]
_F32_MAX = float(np.finfo(np.float32).max)  # what float32 can hold: the stream is kept as float32, as the live run's

FIGURES["residual-stream"] = stream_mpl.draw  # in the notebook, a figure where the cell runs

_shown: dict = {}  # the last stream shown: {"key", "model", "decode", "stream"} (lens reads other positions there)


def show_residual_stream(*, stream=None, writes=None, tokens=None, model=None, tokenizer=None, position=None,
                         title=None, target=None):
    """Draw your residual stream in the residual-stream widget; returns None.

      stream:    (L + 1, T, C): the embedding, then the stream after each of L layers
      writes:    L dicts {"attn": (T, C), "mlp": (T, C)}: what each layer's attention and MLP added
      tokens:    T labels, the text's tokens (e.g. [bpe.token_text(i) for i in ids])
      model:     SmolLM2's weights, whose final norm and tied embedding read the lens
      tokenizer: its tokenizer, to name the lens's tokens
      position:  the position shown first (None: the last; negative counts from the end)
      title:     a caption for the picture
      target:    the id of the widget on the page (None: the one after this cell)
    """
    send("residual-stream", lambda: build_stream_payload(stream=stream, writes=writes, tokens=tokens, model=model,
                                                         tokenizer=tokenizer, position=position, title=title,
                                                         target=target),
         title, target)


def build_stream_payload(*, stream, writes, tokens, model, tokenizer, position=None, title=None, target=None):
    """The event's payload, the widget's numbers (as :func:`.residual_stream.payload`'s) of the reader's arrays, and
    the ``key`` :func:`lens` knows them by; or raise ShowError."""
    for name, value in (("title", title), ("target", target)):
        if value is not None and not isinstance(value, str):
            raise ShowError(f"{name}: expected a string, got {type(value).__name__}")
    missing = [name for name, a in (("stream", stream), ("writes", writes), ("model", model),
                                    ("tokenizer", tokenizer)) if a is None]
    if missing:
        raise ShowError(f"nothing to draw without {' and '.join(missing)}: pass stream= (L + 1, T, C), writes= "
                        "(one {'attn', 'mlp'} per layer), tokens=, model= and tokenizer=")
    stream = _check_stream(stream)
    L, T, C = stream.shape[0] - 1, stream.shape[1], stream.shape[2]
    lengths = real_layers.write_lengths(_check_writes(writes, L, T, C))
    if tokens is None:
        raise ShowError(f"tokens: pass the text's {T} tokens, one label per position")
    labels = check_tokens(tokens, T)
    decode = _check_model(model, tokenizer, C)
    try:
        at = residual_stream.position_index(position, T)
    except ValueError:
        raise ShowError(f"position {position!r}: the stream has {T} positions, 0 to {T - 1} "
                        f"(or -{T} to -1 from the end)") from None
    key = int.from_bytes(os.urandom(6), "little")  # not a count: one that a restarted Python could give again
    _shown.clear()
    _shown.update(key=key, model=model, decode=decode, stream=stream)
    # the fields of residual_stream.payload the widget draws (protocol.js's arrays event; no text: these are arrays)
    return {"view": "residual-stream", "title": caption(title), "target": caption(target), "tokens": labels,
            "layers": L, "norms": residual_stream.norms({"stream": stream, **lengths}), "position": at,
            "lens": {str(at): residual_stream.lens_at(model, stream, at, decode)}, "key": key}


def lens(key, position, target=None):
    """The page's call: the lens at *position* of the stream :func:`show_residual_stream` last sent, whose
    ``key`` the page gives (another key: that stream is no longer here, and the message says to run the cell)."""
    if not _shown or _shown["key"] != key:
        raise ValueError("the arrays this picture shows are no longer in Python (another picture was sent, or "
                         "Python restarted): run the cell that drew them again")
    stream = _shown["stream"]
    at = residual_stream.position_index(position, stream.shape[1])
    return {"key": key, "position": at, "target": target,
            "lens": {str(at): residual_stream.lens_at(_shown["model"], stream, at, _shown["decode"])}}


# ----------------------------------------------------------------------------------------------- checks


def _check_stream(stream):
    """*stream* as float32 (L + 1, T, C), as the live run keeps it, or ShowError."""
    a = as_numbers("stream", stream)
    if a.ndim == 2:
        raise ShowError(f"stream: expected (layers + 1, T, C), every position's stream after each layer, got shape "
                        f"{a.shape}: one position's (stream[:, -1])? pass the whole stack")
    if a.ndim != 3:
        raise ShowError(f"stream: expected a 3-D (layers + 1, T, C) array, got shape {a.shape}")
    if a.shape[0] < 2:
        raise ShowError(f"stream: got {a.shape[0]} row, the embedding alone: stack the stream after each layer "
                        "too, (layers + 1, T, C)")
    if a.shape[0] - 1 > LAYERS[1]:
        raise ShowError(f"stream: {a.shape[0] - 1} layers is more than this picture draws ({LAYERS[1]})")
    if a.shape[1] > next_token.MAX_TOKENS:
        raise ShowError(f"stream: {a.shape[1]} positions is more than this picture draws ({next_token.MAX_TOKENS})")
    _check_drawable("stream", a)
    return a.astype(np.float32)


def _check_writes(writes, L, T, C):
    """*writes* as L dicts of float32 (T, C) arrays under "attn" and "mlp", or ShowError."""
    if isinstance(writes, dict) or not isinstance(writes, (list, tuple)):
        raise ShowError(f"writes: expected a list of {L} dicts, one per layer, {{'attn': (T, C), 'mlp': (T, C)}}, "
                        f"got {type(writes).__name__}")
    if len(writes) != L:
        raise ShowError(f"writes: got {len(writes)} layers' writes for a stream of {L + 1} rows ({L} layers): "
                        "pass one dict per layer")
    checked = []
    for layer, wrote in enumerate(writes):
        if not isinstance(wrote, dict) or not {"attn", "mlp"} <= wrote.keys():
            have = sorted(map(str, wrote)) if isinstance(wrote, dict) else type(wrote).__name__
            raise ShowError(f"writes[{layer}]: expected a dict with 'attn' and 'mlp', got {have}")
        arrays = {}
        for name in ("attn", "mlp"):
            label = f"writes[{layer}]['{name}']"
            a = as_numbers(label, wrote[name])
            if a.shape != (T, C):
                raise ShowError(f"{label}: expected shape (T, C) = {(T, C)}, as the stream's, got {a.shape}")
            _check_drawable(label, a)
            arrays[name] = a.astype(np.float32)
        checked.append(arrays)
    return checked


def _check_model(model, tokenizer, C):
    """The tokenizer's ``token_text`` for the lens, once *model* reads a stream of width *C*; or ShowError."""
    if not all(hasattr(model, name) for name in ("output_norm", "unembedding", "eps", "width", "vocab")):
        raise ShowError(f"model: expected SmolLM2's weights (the first of live_models.smollm2_model()), "
                        f"got {type(model).__name__}")
    if model.width != C:
        raise ShowError(f"model: its width is {model.width} but the stream's C is {C}: pass the model the stream "
                        "came from")
    decode = getattr(tokenizer, "token_text", None)
    if not callable(decode) or len(getattr(tokenizer, "tokens", ())) != model.vocab:
        raise ShowError(f"tokenizer: expected the model's tokenizer ({model.vocab:,} tokens), the second of "
                        "live_models.smollm2_model()")
    return decode


def _check_drawable(name, a):
    """Finite, and within float32."""
    bad = ~np.isfinite(a)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ShowError(f"{name}: contains {a[at]} at index {at}; pass finite numbers")
    if np.abs(a).max() > _F32_MAX:
        raise ShowError(f"{name}: holds values as large as {np.abs(a).max():.3g}, beyond float32 (3.4e38)")
