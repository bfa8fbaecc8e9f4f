"""JSON encoding on the step's hot path: a C encoder made once per format, not once per call.

``json.JSONEncoder.encode`` builds a new C encoder on every call, a measurable share of a
read step (each step encodes the tool result, and the arguments of a call given as an object).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def reusable(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode`` through one C encoder made now. Same text (it is the encoder ``encode`` itself
    builds), but without circular-reference markers, which a shared encoder could not keep safely across
    threads: meant for trees of plain values (a cycle raises RecursionError instead of ValueError)."""
    make = getattr(json.encoder, "c_make_encoder", None)  # the C accelerator, absent from typeshed
    if make is None or encoder.indent is not None:  # no C accelerator, or a format it does not do in one shot
        return encoder.encode
    strings = json.encoder.encode_basestring_ascii if encoder.ensure_ascii else json.encoder.encode_basestring
    c_encode = make(
        None,
        encoder.default,
        strings,
        None,
        encoder.key_separator,
        encoder.item_separator,
        encoder.sort_keys,
        encoder.skipkeys,
        encoder.allow_nan,
    )
    return lambda value: "".join(c_encode(value, 0))
