"""The store line of an episode record: the bytes of a full dump, at a fraction of its cost.

A line is defined as ``json_text(record.model_dump(mode="json"))``: sorted keys, ``", "``
and ``": "`` separators, non-ASCII kept unless the text holds lone surrogates. Most of a line
is plain JSON already: the trajectory's messages, and the tool menu, which is the same for
every episode of an environment. So the menu is encoded once per environment (a
:class:`ToolMenu`) and spliced in, the messages are encoded without pydantic walking them
first, and only the typed parts (steps, calls, grade, stages) go through pydantic's dump.
Anything this path does not handle exactly like the full dump (a value that is not plain
JSON, a NaN, a lone surrogate) falls back to the full dump, so a line never differs.
"""

from __future__ import annotations

import json
from contextlib import suppress
from typing import Any

from coworkenv.storage import json_text
from coworkenv.trajectory import EpisodeRecord

_encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True, allow_nan=False, check_circular=False).encode
_SPLICED = {"messages", "tools"}
_MESSAGES, _TOOLS = "\x00coworkenv:messages\x00", "\x00coworkenv:tools\x00"
_MESSAGES_JSON, _TOOLS_JSON = _encode(_MESSAGES), _encode(_TOOLS)


class ToolMenu:
    """An environment's tool schemas and their JSON, encoded once for all its episodes.

    Used for a trajectory whose ``tools`` are these very schema objects (a copy of the
    environment's list); any other menu is encoded as it comes."""

    def __init__(self, schemas: list[dict[str, Any]]) -> None:
        self.schemas = schemas
        self.text = _encode(schemas)

    def text_for(self, tools: list[dict[str, Any]]) -> str | None:
        if len(tools) != len(self.schemas) or any(a is not b for a, b in zip(tools, self.schemas, strict=True)):
            return None
        return self.text


def _fast_line(record: EpisodeRecord, menu: ToolMenu) -> bytes | None:
    """The line, or None where only the full dump is exact.

    The record is encoded once with a marker string in place of the messages and of the tool menu, and the
    markers are then replaced by their JSON (a marker that is not there exactly once, as when a model wrote
    one into its arguments, sends the record to the full dump)."""
    traj = record.trajectory
    tools = menu.text_for(traj.tools) if traj is not None else None
    if traj is None or tools is None:
        return None
    inner = traj.model_dump(mode="json", exclude=_SPLICED)
    inner["messages"], inner["tools"] = _MESSAGES, _TOOLS
    outer = record.model_dump(mode="json", exclude={"trajectory"})
    outer["trajectory"] = inner
    line = _encode(outer)
    if line.count(_MESSAGES_JSON) != 1 or line.count(_TOOLS_JSON) != 1:
        return None
    line = line.replace(_MESSAGES_JSON, _encode(traj.messages), 1).replace(_TOOLS_JSON, tools, 1)
    return line.encode("utf-8")  # raises on lone surrogates: the full dump escapes the whole line


def record_bytes(record: EpisodeRecord, menu: ToolMenu | None = None) -> bytes:
    """``json_text(record.model_dump(mode="json"))`` in UTF-8, byte for byte.

    ``menu`` is the tool menu of the local Environment that played the episode: only then is the fast path
    taken, because only then are the messages known to be what that class builds (dicts with text keys; json
    and pydantic would order other keys differently)."""
    line = None
    with suppress(ValueError, TypeError, RecursionError):  # NaN, a value json cannot take, a surrogate: the full dump
        line = _fast_line(record, menu) if menu is not None else None
    return line if line is not None else json_text(record.model_dump(mode="json")).encode("utf-8")
