"""How tool-call arguments appear in exported datasets: JSON text (OpenAI wire format) or objects.

Trajectories keep each call's ``arguments`` as the JSON text the model wrote, as the OpenAI
API does. Chat templates that render arguments with ``| tojson`` (Qwen2.5, Llama 3.1 and
gpt-oss, as bundled with TRL) would encode that text a second time, so training on them
needs the arguments as objects. The project's own template (``agents/chat_format.py``)
renders both the same.
"""

from __future__ import annotations

import json
from typing import Literal, get_args

ArgumentsFormat = Literal["text", "object"]
FORMATS: tuple[ArgumentsFormat, ...] = get_args(ArgumentsFormat)


def checked_format(fmt: str) -> ArgumentsFormat:
    """``fmt`` as an :data:`ArgumentsFormat`; any other name is a clear ValueError."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown arguments format {fmt!r}; expected one of: {', '.join(FORMATS)}")
    return fmt


def _as_object(arguments: object) -> object:
    """Decoded arguments when they are a JSON object; anything else stays as written."""
    if not isinstance(arguments, str):
        return arguments
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments
    return value if isinstance(value, dict) else arguments


def with_arguments(messages: list[dict[str, object]], fmt: ArgumentsFormat) -> list[dict[str, object]]:
    """``messages`` with every tool call's arguments in ``fmt`` (the input is not modified)."""
    if checked_format(fmt) == "text":
        return messages
    out = []
    for m in messages:
        given = m.get("tool_calls")
        if isinstance(given, list) and given:
            calls = [
                {**c, "function": {**c["function"], "arguments": _as_object(c["function"].get("arguments"))}}
                if isinstance(c.get("function"), dict)
                else c
                for c in given
            ]
            m = {**m, "tool_calls": calls}
        out.append(m)
    return out
