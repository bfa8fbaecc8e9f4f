"""The store line of an episode record: the bytes of a full dump, at a fraction of its cost.

A line is defined as ``json_text(record.model_dump(mode="json"))``: sorted keys, ``", "``
and ``": "`` separators, non-ASCII kept unless the text holds lone surrogates. Most of a line
is plain JSON already: the trajectory's messages, and the tool menu, which is the same for
every episode of an environment. So the menu is encoded once per environment (a
:class:`ToolMenu`, to UTF-8 bytes too) and its bytes joined in between the rest's (a menu with
one character past Latin-1 would otherwise widen the whole line's text, and make encoding it
to UTF-8 go character by character), the messages are encoded without pydantic walking them
first, and the typed parts (record, trajectory, steps, calls, grade, stages) are written by
:mod:`coworkenv.rollout.typed_json`, field by field, as pydantic and json would write them.
Anything this path does not handle exactly like the full dump (a field of an unexpected type,
a value that is not plain JSON, a NaN, a lone surrogate) falls back to the full dump, so a
line never differs.
"""

from __future__ import annotations

import json
from contextlib import suppress
from typing import Any

from coworkenv.rollout.typed_json import Unusual, record_texts
from coworkenv.runtime.json_encoding import reusable
from coworkenv.storage import json_text
from coworkenv.trajectory import EpisodeRecord

_encode = reusable(json.JSONEncoder(ensure_ascii=False, sort_keys=True, allow_nan=False))


class ToolMenu:
    """An environment's tool schemas and their JSON, encoded once for all its episodes.

    Used for a trajectory whose ``tools`` are these very schema objects (a copy of the
    environment's list); any other menu is encoded as it comes."""

    def __init__(self, schemas: list[dict[str, Any]]) -> None:
        self.schemas = schemas
        self.data: bytes | None = None  # None: text with lone surrogates, which only the full dump writes
        with suppress(UnicodeEncodeError):
            self.data = _encode(schemas).encode("utf-8")

    def data_for(self, tools: list[dict[str, Any]]) -> bytes | None:
        """The menu's UTF-8 bytes, if ``tools`` is this menu (None: it is not, or it is not valid UTF-8 text)."""
        if len(tools) != len(self.schemas) or any(a is not b for a, b in zip(tools, self.schemas, strict=True)):
            return None
        return self.data


def _fast_line(record: EpisodeRecord, menu: ToolMenu) -> bytes | None:
    """The line, or None where only the full dump is exact (raises where the record holds what this path does
    not write as the full dump would)."""
    traj = record.trajectory
    tools = menu.data_for(traj.tools) if traj is not None else None
    if traj is None or tools is None:
        return None
    head, middle, tail = record_texts(record)
    messages = _encode(traj.messages)
    # encoding raises on lone surrogates: the full dump escapes the whole line
    return b"".join(
        (head.encode("utf-8"), messages.encode("utf-8"), middle.encode("utf-8"), tools, tail.encode("utf-8"))
    )


def record_bytes(record: EpisodeRecord, menu: ToolMenu | None = None) -> bytes:
    """``json_text(record.model_dump(mode="json"))`` in UTF-8, byte for byte.

    ``menu`` is the tool menu of the local Environment that played the episode: only then is the fast path
    taken, because only then are the messages known to be what that class builds (dicts with text keys; json
    and pydantic would order other keys differently)."""
    line = None
    with suppress(Unusual, ValueError, TypeError, KeyError, RecursionError):  # a NaN, a surrogate, a missing field
        line = _fast_line(record, menu) if menu is not None else None
    return line if line is not None else json_text(record.model_dump(mode="json")).encode("utf-8")
