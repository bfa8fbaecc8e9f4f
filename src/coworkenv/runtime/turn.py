"""An assistant turn, and its normalisation from whatever a model produced.

Models produce all kinds of output. :func:`parse_turn` never raises: anything that is not
a well-formed turn is reported as a list of problems the environment shows the agent.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str | dict[str, object] = Field(default="{}", description="JSON text (OpenAI) or an object")

    def arguments_text(self) -> str:
        """The arguments as JSON text: the model's own text, or an object encoded with sorted keys."""
        if isinstance(self.arguments, str):
            return self.arguments
        try:
            return json.dumps(self.arguments, ensure_ascii=False, sort_keys=True)
        except (RecursionError, ValueError):  # nesting past the encoder's stack; an integer past the digit limit
            return UNENCODABLE

    def message(self) -> dict[str, object]:
        """The OpenAI-format tool call, arguments as the model gave them (text kept, an object encoded)."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments_text()}}


UNENCODABLE = '{"unencodable": "the arguments nest too deeply or hold a number too long to write as JSON"}'
"""The text logged for an object a policy built that JSON cannot write (the router refuses the call itself)."""


class AssistantTurn(BaseModel):
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: dict[str, int] = Field(default_factory=dict, description="token counts reported by the backend")

    def message(self) -> dict[str, object]:
        """The OpenAI-format assistant message."""
        msg: dict[str, object] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            msg["tool_calls"] = [c.message() for c in self.tool_calls]
        return msg


def parse_turn(raw: object, step: int) -> tuple[AssistantTurn, list[str]]:
    """Accept an AssistantTurn, an OpenAI message dict, or junk; return a turn and problems."""
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
        calls.append(ToolCall(id=call_id, name=name, arguments=args))
    return AssistantTurn(content=content, tool_calls=calls), problems
