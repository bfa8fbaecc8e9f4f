"""An assistant turn, and its normalisation from whatever a model produced.

Models produce all kinds of output. :func:`parse_turn` never raises: anything that is not
a well-formed turn is reported as a list of problems the environment shows the agent.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from coworkenv.runtime.json_encoding import reusable
from coworkenv.trajectory import trusted

_encode_arguments = reusable(json.JSONEncoder(ensure_ascii=False, sort_keys=True))  # built once: runs on every call


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str | dict[str, Any] = Field(default="{}", description="JSON text (OpenAI) or an object")

    def arguments_text(self) -> str:
        return _text(self.arguments)

    def message(self) -> dict[str, Any]:
        """The OpenAI-format tool call, arguments as the model gave them (text kept, an object encoded once).

        Fields are read from ``__dict__``: a pydantic model's attribute access goes through its ``__getattr__``
        hook, several times the cost, and every call of every step reads them."""
        fields = self.__dict__
        return call_message(fields["id"], fields["name"], fields["arguments"])


def call_message(call_id: str, name: str, arguments: str | dict[str, Any]) -> dict[str, Any]:
    """:meth:`ToolCall.message` from the call's fields (the lean step has read them already)."""
    text = arguments if isinstance(arguments, str) else _text(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


UNENCODABLE = '{"unencodable": "the arguments nest too deeply or hold a number too long to write as JSON"}'
"""The text logged for an object a policy built that JSON cannot write (the router refuses the call itself)."""


def _text(arguments: str | dict[str, Any]) -> str:
    if isinstance(arguments, str):
        return arguments
    try:
        return _encode_arguments(arguments)
    except (RecursionError, ValueError):  # nesting past the encoder's stack; an integer past the digit limit
        return UNENCODABLE


class AssistantTurn(BaseModel):
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: dict[str, int] = Field(default_factory=dict, description="token counts reported by the backend")

    def message(self) -> dict[str, Any]:
        """The OpenAI-format assistant message."""
        fields = self.__dict__  # as in ToolCall.message
        msg: dict[str, Any] = {"role": "assistant", "content": fields["content"] or ""}
        calls = fields["tool_calls"]
        if calls:
            msg["tool_calls"] = [c.message() for c in calls]
        return msg


_CALL_FIELDS = frozenset(ToolCall.model_fields)


def parse_turn(raw: Any, step: int) -> tuple[AssistantTurn, list[str]]:
    """Accept an AssistantTurn, an OpenAI message dict, or junk; return a turn and problems.

    The turn and its calls are built from values checked here (text content, text names, ids and arguments),
    without validating them again."""
    if isinstance(raw, AssistantTurn):
        return raw, []
    if isinstance(raw, str):
        return AssistantTurn(content=raw), []
    if not isinstance(raw, dict):
        return AssistantTurn(), [f"turn must be a message object, got {type(raw).__name__}"]
    problems: list[str] = []
    content = raw.get("content")
    if content is not None and not isinstance(content, str):
        problems.append("'content' must be text")
        content = None
    calls: list[ToolCall] = []
    raw_calls = raw.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        problems.append("'tool_calls' must be a list")
        raw_calls = []
    for i, rc in enumerate(raw_calls):
        if not isinstance(rc, dict):
            problems.append(f"tool call {i} is not an object")
            continue
        function = rc.get("function")
        fn = function if isinstance(function, dict) else rc
        name = fn.get("name")
        args = fn.get("arguments", "{}")
        if not isinstance(name, str) or not name:
            problems.append(f"tool call {i} has no function name")
            continue
        if args is None:
            args = "{}"
        elif not isinstance(args, str):
            try:  # a round trip through JSON gives text keys and rejects values no tool could take
                args = json.loads(json.dumps(args)) if isinstance(args, dict) else json.dumps(args)
            except (TypeError, ValueError, RecursionError):
                problems.append(f"tool call {i} has arguments that are not JSON")
                continue
        call_id = rc.get("id") if isinstance(rc.get("id"), str) and rc.get("id") else f"call_{step}_{i}"
        calls.append(trusted(ToolCall, {"id": call_id, "name": name, "arguments": args}, set(_CALL_FIELDS)))
    turn: dict[str, Any] = {"content": content, "tool_calls": calls, "usage": {}}
    return trusted(AssistantTurn, turn, {"content", "tool_calls"}), problems
