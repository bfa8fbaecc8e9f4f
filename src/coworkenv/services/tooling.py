"""What a tool is: a service method marked read or write, its argument model and the schema the agent sees."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, create_model

ToolKind = Literal["read", "write"]
JSONValue: TypeAlias = str | int | float | bool | list["JSONValue"] | dict[str, "JSONValue"] | None
"""A value as JSON holds it: what a tool's schema is made of."""
Schema = dict[str, JSONValue]
Method = TypeVar("Method", bound=Callable[..., object])


class ToolError(Exception):
    """A tool failure the agent should see as an observation (bad id, validation, …)."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class ToolInfo:
    """A tool as the router sees it."""

    name: str  # full name exposed to the agent, e.g. "mail_search"
    service: str
    method: str
    kind: ToolKind
    description: str
    args_model: type[BaseModel]

    def schema(self) -> dict[str, Any]:
        """OpenAI function-tool schema; built once per tool (every Environment needs it), so treat it as read-only.

        Cached by name and identity, not by hashing the ToolInfo (hashing every field cost more than the rest of
        building an Environment)."""
        hit = _SCHEMAS.get(self.name)
        if hit is None or hit[0] is not self:
            hit = _SCHEMAS[self.name] = (self, _tool_schema(self))
        return hit[1]


_SCHEMAS: dict[str, tuple[ToolInfo, Schema]] = {}


def _tool_schema(info: ToolInfo) -> Schema:
    params = _strip_titles(info.args_model.model_json_schema())
    assert isinstance(params, dict)  # a model's schema is an object
    params.setdefault("properties", {})
    return {
        "type": "function",
        "function": {"name": info.name, "description": info.description, "parameters": params},
    }


def _strip_titles(node: JSONValue, *, names: bool = False) -> JSONValue:
    """Drop pydantic's ``title`` annotations, but never a parameter that is named ``title``."""
    if isinstance(node, dict):
        return {
            k: _strip_titles(v, names=k == "properties" and not names) for k, v in node.items() if names or k != "title"
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def tool(kind: ToolKind, name: str | None = None) -> Callable[[Method], Method]:
    """Mark a service method as a tool; its docstring's first paragraph is the description.

    ``name`` exposes the tool under another name than the method's, for tools whose natural
    name (``get``, ``update``, …) would shadow a :class:`Service` record helper.
    """

    def mark(fn: Method) -> Method:
        fn.__tool_kind__ = kind  # type: ignore[attr-defined]
        fn.__tool_name__ = name or fn.__name__  # type: ignore[attr-defined]
        return fn

    return mark


def args_model(service: str, fn: Callable[..., object]) -> type[BaseModel]:
    sig = inspect.signature(fn)
    hints = inspect.get_annotations(fn, eval_str=True)
    fields: dict[str, Any] = {}  # pydantic's field definitions
    for pname, param in list(sig.parameters.items())[1:]:
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (hints.get(pname, Any), default)
    return create_model(
        f"{service}_{fn.__name__}_args",
        __config__=ConfigDict(extra="forbid"),
        **fields,
    )
