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
from typing import Any

from coworkenv.storage import json_text
from coworkenv.trajectory import EpisodeRecord

_encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True, allow_nan=False, check_circular=False).encode
_PLAIN = (str, int, float, bool, type(None))
_SPLICED = frozenset({"messages", "tools"})


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


def _object(parts: dict[str, str]) -> str:
    """A JSON object from already-encoded values, laid out as ``json.dumps(sort_keys=True)`` lays it out."""
    return "{" + ", ".join(f"{_encode(key)}: {parts[key]}" for key in sorted(parts)) + "}"


def _plain_keys(value: Any) -> bool:
    """Whether every dict key in ``value`` is text (pydantic and json order other keys differently)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_keys(v) for k, v in value.items())
    if isinstance(value, list):
        return all(isinstance(v, _PLAIN) or _plain_keys(v) for v in value)
    return isinstance(value, _PLAIN)


def _fast_line(record: EpisodeRecord, menu: ToolMenu | None) -> str | None:
    """The line, or None where only the full dump is exact."""
    traj = record.trajectory
    if traj is None:
        return None
    if not _plain_keys(traj.messages):
        return None
    tools = menu.text_for(traj.tools) if menu is not None else None
    if tools is None:
        if not _plain_keys(traj.tools):
            return None
        tools = _encode(traj.tools)
    typed = traj.model_dump(mode="json", exclude=_SPLICED)
    parts = {key: _encode(value) for key, value in typed.items()}
    parts["messages"] = _encode(traj.messages)
    parts["tools"] = tools
    outer = {key: _encode(value) for key, value in record.model_dump(mode="json", exclude={"trajectory"}).items()}
    outer["trajectory"] = _object(parts)
    line = _object(outer)
    line.encode("utf-8")  # lone surrogates: the full dump escapes the whole line
    return line


def record_line(record: EpisodeRecord, menu: ToolMenu | None = None) -> str:
    """``json_text(record.model_dump(mode="json"))``, byte for byte."""
    try:
        line = _fast_line(record, menu)
    except (ValueError, TypeError, RecursionError):  # NaN, a value json cannot take, a surrogate: the full dump
        line = None
    return line if line is not None else json_text(record.model_dump(mode="json"))
