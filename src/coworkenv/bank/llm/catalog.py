"""The services catalogue as prompt text: collections with their record fields, tools with signatures."""

from __future__ import annotations

from functools import cache
from typing import Any

from coworkenv.services.registry import SERVICES


def _type(node: dict[str, Any]) -> str:
    if "anyOf" in node:
        return " | ".join(_type(n) for n in node["anyOf"])
    if node.get("type") == "array":
        return f"list[{_type(node.get('items', {}))}]"
    if "enum" in node:
        return "|".join(repr(v) for v in node["enum"])
    return str(node.get("type", "any"))


def _fields(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", ()))
    parts = []
    for name, node in schema.get("properties", {}).items():
        optional = "" if name in required else "?"
        parts.append(f"{name}{optional}: {_type(node)}")
    return ", ".join(parts)


@cache
def services_catalogue() -> str:
    """Every service: its collections (record fields, ``?`` = optional) and its tools (read/write)."""
    lines: list[str] = []
    for name, cls in SERVICES.items():
        lines.append(f"## {name}")
        for collection, model in cls.records.items():
            lines.append(f"- records `{name}.{collection}`: {_fields(model.model_json_schema())}")
        for tool, info in cls.tools().items():
            params = info.schema()["function"]["parameters"]
            lines.append(f"- tool `{tool}({_fields(params)})` [{info.kind}]: {info.description}")
    return "\n".join(lines)
