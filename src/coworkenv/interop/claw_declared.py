"""A Claw-Eval mock service as a declared service: every fixture field and every tool kept.

Used where mapping onto a built-in coworkenv service would lose something (a field with no
place, a value the built-in service does not allow, a tool with no counterpart). Records
keep their Claw-Eval fields as they are (``id`` added, equal to the Claw-Eval key); tools
keep their names and input schemas, and get their behaviour from :data:`claw_mapping.OPS`
or, for a tool not listed there, from the verb in its name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from coworkenv.interop.claw_mapping import COLLECTIONS, OPS, Role
from coworkenv.spec.declared import ROLES_OF, CollectionDecl, FieldDecl, JsonType, ParamDecl, ServiceDecl, ToolDecl

VERBS = {
    "list": "list",
    "search": "search",
    "find": "search",
    "get": "get",
    "create": "create",
    "add": "create",
    "send": "create",
    "save": "create",
    "export": "create",
    "update": "update",
    "close": "update",
    "delete": "delete",
    "remove": "delete",
    "cancel": "delete",
}
DEFAULT_ROLE = {"create": "set", "update": "set", "get": "ignored", "delete": "ignored"}


@dataclass
class Declared:
    """What a Claw-Eval service became: its declaration, its records, and the tools it could not take."""

    name: str
    decl: ServiceDecl
    records: dict[str, list[dict[str, Any]]]
    unmapped: list[str] = field(default_factory=list)
    ignored_args: list[str] = field(default_factory=list)


def declared_name(service: str) -> str:
    """The declared service's name: never a built-in service's (``contacts`` -> ``claw_contacts``)."""
    return f"claw_{service}"


def _json_type(value: Any) -> JsonType:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def field_decl(values: list[Any], present_in_all: bool) -> FieldDecl:
    """The declaration that fits every value a field takes across the fixture records."""
    kinds: set[JsonType] = {_json_type(v) for v in values if v is not None}
    if kinds == {"integer", "number"}:
        kinds = {"number"}
    return FieldDecl(
        type=kinds.pop() if len(kinds) == 1 else None,
        nullable=any(v is None for v in values),
        required=present_in_all,
    )


def _schema_type(prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    return kind if kind in ("string", "integer", "number", "boolean", "array", "object") else None


def _operation(tool: str, service: str) -> tuple[str, str, dict[str, Role], dict[str, Any]] | None:
    """The declared behaviour of a Claw-Eval tool: listed in OPS, or read from the verb of its name."""
    if tool in OPS:
        return OPS[tool]
    words = tool.removeprefix(f"{service}_").split("_")
    op = VERBS.get(words[0])
    main = COLLECTIONS.get(service, (service, ""))[0]
    if op is None:
        return None
    if op in ("create",) and len(words) > 1:
        rest = "_".join(words[1:])
        return op, rest if rest.endswith("s") else f"{rest}s", {}, {}
    return op, main, {}, {}


def _param(name: str, prop: dict[str, Any], required: bool, role: Role, op: str, fields: set[str]) -> ParamDecl:
    parts = (role,) if isinstance(role, str) else role
    kind = parts[0]
    if kind == "default":
        kind = DEFAULT_ROLE.get(op, "equals" if name in fields else "ignored")
    return ParamDecl(
        role=kind,  # type: ignore[arg-type]
        field=parts[1] if len(parts) > 1 else None,
        wildcard=parts[2] if len(parts) > 2 else None,
        type=_schema_type(prop),
        description=str(prop.get("description") or ""),
        required=required,
        default=prop.get("default"),
    )


def declare(service: str, rows: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Declared:
    """A declared service holding ``rows`` (Claw-Eval fixture records) and offering ``tools``."""
    main, key = COLLECTIONS.get(service, (service, _key_of(rows)))
    if key == "id":
        raise ValueError(f"{service}: no field names every record (expected a key like '{service}_id')")
    for i, row in enumerate(rows):
        if not isinstance(row.get(key), str) or not row[key]:
            raise ValueError(f"{service}[{i}].{key}: every record needs a text {key!r}")
    names = list(dict.fromkeys(k for row in rows for k in row))
    fields = {n: field_decl([r[n] for r in rows if n in r], all(n in r for r in rows)) for n in names}
    fields.setdefault(key, FieldDecl(type="string"))
    collections: dict[str, dict[str, FieldDecl]] = {main: fields}
    unmapped: list[str] = []
    ignored: list[str] = []
    declared_tools: dict[str, ToolDecl] = {}
    for tool in tools:
        name = str(tool.get("name"))
        operation = _operation(name, service)
        if operation is None:
            unmapped.append(name)
            continue
        declared_tools[name] = _tool(name, tool, operation, collections, ignored)
    decl = ServiceDecl(
        description=f"Claw-Eval's {service} service, as its task declares it",
        collections={c: CollectionDecl(key=key if c == main else "id", fields=f) for c, f in collections.items()},
        tools=declared_tools,
    )
    records: dict[str, list[dict[str, Any]]] = {c: [] for c in collections}
    records[main] = [{"id": row[key], **row} for row in rows]
    return Declared(declared_name(service), decl, records, unmapped, ignored)


def _tool(
    name: str,
    tool: dict[str, Any],
    operation: tuple[str, str, dict[str, Role], dict[str, Any]],
    collections: dict[str, dict[str, FieldDecl]],
    ignored: list[str],
) -> ToolDecl:
    op, collection, roles, values = operation
    fields = collections.setdefault(collection, {})
    schema = tool.get("input_schema") or {}
    required = set(schema.get("required") or [])
    params = {}
    for pname, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        role = roles.get(pname, "default")
        if role == "default" and op in ("get", "delete") and pname.endswith("_id") and "key" in ROLES_OF[op]:
            role = "key"
        param = _param(pname, prop, pname in required, role, op, set(fields))
        if param.role == "set" and param.target(pname) not in fields:
            fields[param.target(pname)] = FieldDecl(type=param.type, nullable=True)
        if param.role == "ignored":
            ignored.append(f"{name}.{pname}")
        params[pname] = param
    for fname, value in values.items():
        fields.setdefault(fname, field_decl([value], False))
    return ToolDecl(
        op=op,  # type: ignore[arg-type]
        collection=collection,
        description=str(tool.get("description") or ""),
        params=params,
        values=values,
    )


def _key_of(rows: list[dict[str, Any]]) -> str:
    """A field ending in ``_id`` that every record has (the record's key), else ``id``."""
    common = set.intersection(*(set(r) for r in rows)) if rows else set()
    return next((k for k in sorted(common) if k.endswith("_id")), "id")
