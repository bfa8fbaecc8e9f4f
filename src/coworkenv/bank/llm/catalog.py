"""The services catalogue as prompt text: collections with their record fields, tools with signatures."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from coworkenv.services.registry import SERVICES


def _type(node: Mapping[str, object]) -> str:
    options, items, enum = node.get("anyOf"), node.get("items"), node.get("enum")
    if isinstance(options, list):
        return " | ".join(_type(n) for n in options)
    if node.get("type") == "array":
        return f"list[{_type(items if isinstance(items, dict) else {})}]"
    if isinstance(enum, list):
        return "|".join(repr(v) for v in enum)
    return str(node.get("type", "any"))


def _fields(schema: Mapping[str, object]) -> str:
    required, properties = schema.get("required"), schema.get("properties")
    needed = set(required) if isinstance(required, list) else set()
    parts = []
    for name, node in properties.items() if isinstance(properties, dict) else ():
        optional = "" if name in needed else "?"
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
