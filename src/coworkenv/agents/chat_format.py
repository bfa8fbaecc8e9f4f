"""The project's chat template and tool-call text format for local models.

Local models (the embedded Gemma 3 270M is a base model with no template of its own)
read and write tool calls as text. One format is used everywhere — training data,
prompting and parsing — so what a model learns in SFT is exactly what the runtime parses:

    <start_of_turn>model
    Let me check the calendar.
    <tool_call>{"name": "calendar_list_events", "arguments": {"start_date": "2026-03-02"}}</tool_call><end_of_turn>

Tools are listed one per line as compact signatures, ``- name(required, optional?): description``
(optional arguments marked ``?``, the description cut to its first clause), a few dozen tokens
per tool for a small model to read. Tool results come back as the bare content of a ``tool``
turn (each follows its call, so no wrapper names it), with the empty fields of JSON results
left out (:func:`compact_result`): on the embedded tokenizer these cut an oracle demo from
1,476 to about 1,300 tokens.
Assistant text sits inside ``{% generation %}`` blocks, with ``<end_of_turn>`` inside the
block so assistant-only loss teaches the model to stop.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from coworkenv.runtime.router import MAX_ARG_DEPTH, nesting_exceeds
from coworkenv.runtime.turn import AssistantTurn, ToolCall

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

END_OF_TURN = "<end_of_turn>"

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message.role == 'system' %}"
    "<start_of_turn>system\n{{ message.content }}"
    '{% if tools %}{{ \'\\n\' }}\nTools (call one with <tool_call>{"name": ..., "arguments": {...}}</tool_call>):'
    "{% for t in tools %}{% set required = t.function.parameters.required or [] %}{{ '\\n' }}- {{ t.function.name }}("
    "{% for k in (t.function.parameters.properties or {}) %}{{ k }}{{ '' if k in required else '?' }}"
    "{{ ', ' if not loop.last }}{% endfor %}"
    "): {{ t.function.description.split('. ')[0].split('; ')[0].rstrip('.') }}"
    "{% endfor %}{% endif %}"
    "<end_of_turn>\n"
    "{% elif message.role == 'user' %}"
    "<start_of_turn>user\n{{ message.content }}<end_of_turn>\n"
    "{% elif message.role == 'tool' %}"
    "<start_of_turn>tool\n{{ message.content }}<end_of_turn>\n"
    "{% elif message.role == 'assistant' %}"
    "<start_of_turn>model\n"
    "{% generation %}"
    "{{ message.content or '' }}"
    "{% for call in (message.tool_calls or []) %}"
    '{{ \'\n\' if (message.content or loop.index0 > 0) }}<tool_call>{"name": "{{ call.function.name }}", "arguments": '
    "{% if call.function.arguments is string %}{{ call.function.arguments }}"
    "{% else %}{{ call.function.arguments | tojson }}{% endif %}"
    "}</tool_call>"
    "{% endfor %}"
    "<end_of_turn>"
    "{% endgeneration %}{{ '\\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)

_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')


def _decode_call(body: str) -> tuple[str | None, str | dict[str, object]]:
    """Name and arguments from a tool-call body; arguments stay raw text when not JSON, or JSON the environment
    refuses (a number past Python's digit limit, nesting past the router's depth), so it answers with an error
    observation."""
    body = body.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):  # broken JSON, a huge integer, nesting past the decoder's stack
        obj = None
    if isinstance(obj, dict) and isinstance(obj.get("name"), str) and not nesting_exceeds(obj, MAX_ARG_DEPTH + 1):
        args = obj.get("arguments", {})
        return obj["name"], args if isinstance(args, dict | str) else json.dumps(args)
    m = _NAME.search(body)
    if not m:
        return None, body
    after = body[m.end() :]
    start = after.find("{")
    return m.group(1), after[start:].rstrip("} \n") + "}" if start >= 0 else "{}"


def parse_assistant_text(text: str, step: int = 0) -> AssistantTurn:
    """Turn generated text into an AssistantTurn; junk around the calls is tolerated.

    A call whose JSON is broken keeps its raw arguments, so the environment answers with an
    error observation the model can learn from instead of the call vanishing.
    """
    text = text.split(END_OF_TURN, 1)[0]
    calls: list[ToolCall] = []
    for i, m in enumerate(_CALL.finditer(text)):
        name, args = _decode_call(m.group(1))
        if name:
            calls.append(ToolCall(id=f"call_{step}_{i}", name=name, arguments=args))
    content = _CALL.sub("", text).strip() if calls else text.strip()
    return AssistantTurn(content=content or None, tool_calls=calls)


_EMPTY: tuple[object, ...] = (None, "", [], {})


def _drop_empty(value: object, top: bool = True) -> object:
    """``value`` without null or empty-string fields; below the top level also without empty lists/objects.

    A top-level empty list is the answer itself ("no messages", "no free slots") and stays.
    """
    if isinstance(value, dict):
        empty = (None, "") if top else _EMPTY
        return {
            k: _drop_empty(v, False) for k, v in value.items() if not any(v == e and type(v) is type(e) for e in empty)
        }
    if isinstance(value, list):
        return [_drop_empty(v, False) for v in value]
    return value


def compact_result(content: object) -> object:
    """A JSON tool result as the model reads it: compact, without empty fields; other text unchanged."""
    if not isinstance(content, str) or not content.startswith(("{", "[")):
        return content
    try:
        value = json.loads(content)
    except json.JSONDecodeError:
        return content
    return json.dumps(_drop_empty(value), ensure_ascii=False, separators=(",", ":"))


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-format messages as the template renders them: tool names on tool turns, compact results.

    Every path that renders a conversation (prompts, SFT data, demo lengths) goes through here,
    so a demo and the prompt of the same turn are the same text.
    """
    names = {
        call["id"]: call["function"]["name"]
        for m in messages
        if m.get("role") == "assistant"
        for call in (m.get("tool_calls") or [])
    }
    out = []
    for m in messages:
        if m.get("role") == "tool":
            m = {**m, "name": m.get("name") or names.get(m.get("tool_call_id", ""), "tool")}
            m["content"] = compact_result(m.get("content"))
        out.append(m)
    return out


def render_prompt(
    tokenizer: PreTrainedTokenizerBase, messages: list[dict[str, object]], tools: list[dict[str, object]] | None
) -> str:
    """The prompt text for the next assistant turn."""
    text = tokenizer.apply_chat_template(
        template_messages(messages),
        tools=None if tools is None else list(tools),
        chat_template=CHAT_TEMPLATE,
        tokenize=False,
        add_generation_prompt=True,
    )
    return as_text(text, "the chat template")


def as_text(value: object, source: str) -> str:
    """What a tokenizer rendered or decoded, which must be one text (a tokenizer that gives ids is refused)."""
    if not isinstance(value, str):
        raise TypeError(f"{source} gave {type(value).__name__}, not text")
    return value
