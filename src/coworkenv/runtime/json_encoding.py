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


class StoredTexts:
    """The JSON text of stored records, kept by identity so a record read again is not encoded again.

    Records are copy-on-write: a service replaces a record, never edits it (resets, diffs and the state hash
    rely on that too), so a dict that was found stored holds the same values for as long as it lives and its
    text can be kept with it. Any other value (a result a tool built, which it might keep and change) is
    encoded every time. Shared by every environment: episodes of one spec start from the same record objects.
    """

    def __init__(self, encode: Callable[[Any], str], limit: int = 4096) -> None:
        self._encode = encode
        self._texts: dict[int, tuple[Any, str]] = {}
        self._limit = limit

    def text(self, value: Any, tables: dict[str, dict[str, Any]]) -> str:
        """``encode(value)``; kept when ``value`` is a record stored in one of ``tables`` (a service's ``db``)."""
        if type(value) is not dict:
            return self._encode(value)
        hit = self._texts.get(id(value))
        if hit is not None and hit[0] is value:  # held by the entry, so no other dict can have taken its id
            return hit[1]
        text = self._encode(value)
        rid = value.get("id")
        if type(rid) is str:
            for table in tables.values():
                if table.get(rid) is value:
                    if len(self._texts) >= self._limit:
                        self._texts.clear()
                    self._texts[id(value)] = (value, text)
                    break
        return text
