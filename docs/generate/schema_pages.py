"""Reference pages read off the TaskSpec JSON Schema: the spec format, the check kinds, the workflow rules.

The schema is what ``coworkenv schema`` prints and what a spec is validated against; model
docstrings and field descriptions are in it, so a page made from it says what the code accepts.
Check kinds are found through the schema's discriminator on ``checks``, never from a list kept here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from coworkenv.spec.models import TaskSpec

Schema = dict[str, Any]


def task_schema() -> Schema:
    """The TaskSpec JSON Schema, as ``coworkenv schema`` prints it."""
    return TaskSpec.model_json_schema()


def prose(text: str) -> str:
    """Docstring text as Markdown: reST ``literals`` become `code`; a list gets the blank line before it."""
    text = re.sub(r"``([^`]+)``", r"`\1`", text or "").strip()
    return re.sub(r"(?m)^([^-\n].*)\n- ", r"\1\n\n- ", text)


def cell(text: str) -> str:
    """Text that fits in one table cell."""
    return " ".join(prose(text).replace("|", "\\|").split())


def anchor(name: str) -> str:
    return f"def-{name.lower()}"


def ref_name(node: Schema) -> str | None:
    ref = node.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def type_text(node: Schema, page: str = "") -> str:
    """A field's type in words; a model links to its section on ``page`` (spec.md from other pages)."""
    name = ref_name(node)
    if name:
        return f"[{name}]({page}#{anchor(name)})"
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return " \\| ".join(f"`{v}`" for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            parts = [type_text(n, page) for n in node[key]]
            return " or ".join(dict.fromkeys(parts))
    kind = node.get("type")
    if kind == "array":
        return f"list of {type_text(node.get('items', {}), page)}" if node.get("items") else "list"
    if kind == "object":
        extra = node.get("additionalProperties")
        return f"map of {type_text(extra, page)}" if isinstance(extra, dict) and extra else "mapping"
    if isinstance(kind, list):
        return " or ".join(kind)
    return str(kind or "any")


def field_rows(model: Schema, page: str = "", skip: frozenset[str] = frozenset()) -> list[str]:
    """A Markdown table of a model's fields: name, type, required or default, meaning."""
    required = set(model.get("required", ()))
    rows = ["| field | type | required / default | meaning |", "|---|---|---|---|"]
    for name, node in model.get("properties", {}).items():
        if name in skip:
            continue
        need = (
            "required" if name in required else f"`{json.dumps(node['default'])}`" if "default" in node else "optional"
        )
        rows.append(f"| `{name}` | {type_text(node, page)} | {cell(need)} | {cell(node.get('description', ''))} |")
    return rows if len(rows) > 2 else []


def model_order(schema: Schema) -> list[str]:
    """The schema's models in the order a reader meets them, walking from the top-level fields."""
    seen: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            name = ref_name(node)
            if name and name not in seen:
                seen.append(name)
                walk(schema["$defs"][name])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema.get("properties", {}))
    return seen + sorted(set(schema.get("$defs", {})) - set(seen))


def spec_page() -> str:
    """Every model of the spec format with its fields, from the JSON Schema."""
    schema = task_schema()
    lines = [
        "# Spec format",
        "",
        "Generated from the TaskSpec JSON Schema when the site is built (`coworkenv schema` prints the same",
        "schema). A spec is a YAML or JSON document of these fields; unknown fields are refused.",
        "",
        f"## TaskSpec {{ #{anchor('TaskSpec')} }}",
        "",
        prose(schema.get("description", "")),
        "",
        *field_rows(schema),
    ]
    for name in model_order(schema):
        model = schema["$defs"][name]
        lines += ["", f"## {name} {{ #{anchor(name)} }}", "", prose(model.get("description", "")), ""]
        lines += field_rows(model) or ["(no fields)"]
    return "\n".join(lines) + "\n"


def union_members(schema: Schema, field: str) -> list[tuple[str, Schema]]:
    """The kinds a list field of the spec accepts, as (kind, model), read off its discriminator."""
    items = schema["properties"][field]["items"]
    mapping = items.get("discriminator", {}).get("mapping")
    if mapping:
        by_ref = {ref: kind for kind, ref in mapping.items()}
        refs = [n["$ref"] for n in items.get("oneOf", items.get("anyOf", [])) if n.get("$ref") in by_ref]
        refs += [ref for ref in mapping.values() if ref not in refs]
        return [(by_ref[ref], schema["$defs"][ref.rsplit("/", 1)[-1]]) for ref in refs]
    name = ref_name(items)
    return [(name or field, schema["$defs"][name] if name else items)]


def common_fields(models: list[Schema]) -> frozenset[str]:
    names = [set(m.get("properties", {})) for m in models]
    return frozenset(set.intersection(*names)) if len(names) > 1 else frozenset()


def rules_field(schema: Schema) -> str:
    """The spec field that holds the workflow rules (``rules``, or ``policies`` where that is the key)."""
    for name in ("rules", "policies"):
        if name in schema["properties"]:
            return name
    raise KeyError("the TaskSpec schema has no field of workflow rules")


def checks_page() -> str:
    """Every check kind and workflow rule with its meaning (the model's docstring) and fields."""
    schema = task_schema()
    kinds = union_members(schema, "checks")
    shared = common_fields([m for _, m in kinds])
    lines = [
        "# Check kinds and workflow rules",
        "",
        "Generated when the site is built from the models a spec is validated against: each kind's",
        "meaning is its model's docstring, each field's its description.",
        "",
        "## Checks",
        "",
        f"A spec's `checks` list takes {len(kinds)} kinds, chosen by the `kind` field. Fields every check has:",
        "",
    ]
    first = kinds[0][1]
    lines += field_rows({"properties": {k: v for k, v in first["properties"].items() if k in shared - {"kind"}}})
    lines += ["", "| kind | meaning |", "|---|---|"]
    lines += [
        f"| [`{kind}`](#{kind.replace('_', '-')}) | {cell(m.get('description', '').split(chr(10))[0])} |"
        for kind, m in kinds
    ]
    for kind, model in kinds:
        lines += ["", f"### `{kind}` {{ #{kind.replace('_', '-')} }}", "", prose(model.get("description", "")), ""]
        lines += field_rows(model, "spec.md", shared) or ["No fields beyond the common ones."]
    field = rules_field(schema)
    lines += ["", "## Workflow rules", "", f"Listed under the spec's `{field}` key; checked on every tool call.", ""]
    for kind, model in union_members(schema, field):
        lines += [f"### {kind}", "", prose(model.get("description", "")), ""]
        lines += field_rows(model, "spec.md")
    return "\n".join(lines) + "\n"
