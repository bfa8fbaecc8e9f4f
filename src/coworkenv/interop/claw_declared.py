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

from pydantic import ValidationError

from coworkenv.interop.claw_mapping import COLLECTIONS, OPS, Role
from coworkenv.spec.declared import KEYED_OPS, CollectionDecl, FieldDecl, JsonType, ParamDecl, ServiceDecl, ToolDecl

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
TEXT_ARGS = ("query", "q", "keyword", "keywords", "search", "text")
"""Argument names of a search tool that take free text."""
DEFAULT_ROLE = {"create": "set", "update": "set", "get": "ignored", "delete": "ignored"}


@dataclass
class Declared:
    """What a Claw-Eval service became: its declaration, its records, and the tools it could not take."""

    name: str
    decl: ServiceDecl
    records: dict[str, list[dict[str, object]]]
    unmapped: list[str] = field(default_factory=list)
    ignored_args: list[str] = field(default_factory=list)


def declared_name(service: str) -> str:
    """The declared service's name: never a built-in service's (``contacts`` -> ``claw_contacts``)."""
    return f"claw_{service}"


def _json_type(value: object) -> JsonType:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def field_decl(values: list[object], present_in_all: bool) -> FieldDecl:
    """The declaration that fits every value a field takes across the fixture records."""
    kinds: set[JsonType] = {_json_type(v) for v in values if v is not None}
    if kinds == {"integer", "number"}:
        kinds = {"number"}
    return FieldDecl(
        type=kinds.pop() if len(kinds) == 1 else None,
        nullable=any(v is None for v in values),
        required=present_in_all,
    )


def _schema_type(prop: dict[str, object]) -> object:
    kind = prop.get("type")
    return kind if kind in ("string", "integer", "number", "boolean", "array", "object") else None


def _operation(tool: str, service: str) -> tuple[str, str, dict[str, Role], dict[str, object]] | None:
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


def _param(name: str, prop: dict[str, object], required: bool, role: Role, op: str, fields: set[str]) -> ParamDecl:
    parts = (role,) if isinstance(role, str) else role
    kind = parts[0]
    if kind == "default":
        kind = DEFAULT_ROLE.get(op, "equals" if name in fields else "ignored")
    loose = kind == "text_any"  # Claw-Eval's token-overlap search (kb)
    return ParamDecl(
        role="text" if loose else kind,
        match="any_token" if loose else "all_words",
        field=parts[1] if len(parts) > 1 else None,
        wildcard=parts[2] if len(parts) > 2 else None,
        type=_schema_type(prop),
        description=str(prop.get("description") or ""),
        required=required,
        default=prop.get("default"),
    )


def declare(service: str, rows: list[dict[str, object]], tools: list[dict[str, object]]) -> Declared:
    """A declared service holding ``rows`` (Claw-Eval fixture records) and offering ``tools``."""
    main, preferred = COLLECTIONS.get(service, (service, ""))
    key = _key_of(rows, preferred)
    rows = _keyed(service, rows, key)
    names = [k for k in dict.fromkeys(k for row in rows for k in row) if k != "id"]
    fields = {n: field_decl([r[n] for r in rows if n in r], all(n in r for r in rows)) for n in names}
    if key != "id":
        fields.setdefault(key, FieldDecl(type="string"))
    collections: dict[str, dict[str, FieldDecl]] = {main: fields}
    unmapped: list[str] = []
    ignored: list[str] = []
    declared_tools: dict[str, ToolDecl] = {}
    for tool in tools:
        name = str(tool.get("name"))
        operation = _operation(name, service)
        made = None if operation is None else _tool(name, tool, operation, collections, ignored, key)
        if made is None:
            unmapped.append(name)
        else:
            declared_tools[name] = made
    try:
        decl = ServiceDecl(
            description=f"Claw-Eval's {service} service, as its task declares it",
            collections={c: CollectionDecl(key=key if c == main else "id", fields=f) for c, f in collections.items()},
            tools=declared_tools,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(
            f"{service}: {where + ': ' if where else ''}{first['msg'].removeprefix('Value error, ')}"
        ) from None
    records: dict[str, list[dict[str, object]]] = {c: [] for c in collections}
    records[main] = rows
    return Declared(declared_name(service), decl, records, unmapped, ignored)


def _key_of(rows: list[dict[str, object]], preferred: str) -> str:
    """The field naming a record: ``id`` when every record has a distinct text one, else ``preferred`` or a
    field ending in ``_id`` whose values are distinct texts in the records that have it (a record without one
    gets a synthesized value), else ``id`` (every missing id synthesized)."""

    def fits(name: str) -> bool:
        values = [r[name] for r in rows if name in r]
        return all(isinstance(v, str) and v for v in values) and len(set(values)) == len(values)

    counts: dict[str, int] = {}
    for row in rows:
        for name in row:
            counts[name] = counts.get(name, 0) + 1
    if rows and counts.get("id") == len(rows) and fits("id"):
        return "id"
    if preferred and fits(preferred) and (preferred in counts or not rows):
        return preferred
    found = sorted((n for n in counts if n.endswith("_id") and fits(n)), key=lambda n: (-counts[n], n))
    return found[0] if found else "id"


def _keyed(service: str, rows: list[dict[str, object]], key: str) -> list[dict[str, object]]:
    """The records with their ``id``: the key's value, or a stable synthesized one (``<service>_<n>``, n the
    record's position) where the record has none."""
    taken = {r[key] for r in rows if isinstance(r.get(key), str)}
    out = []
    for i, row in enumerate(rows, 1):
        if key != "id" and "id" in row:
            raise ValueError(f"{service}[{i - 1}].id: a field named 'id' beside the record's key {key!r}")
        given = row.get(key)
        ident = given if isinstance(given, str) and given else f"{service}_{i:03d}"
        if ident != given and ident in taken:
            raise ValueError(f"{service}[{i - 1}]: the synthesized key {ident!r} is another record's {key}")
        rest = {k: v for k, v in row.items() if k != "id"}
        out.append({"id": ident, **rest, **({key: ident} if key != "id" else {})})
    return out


def _tool(
    name: str,
    tool: dict[str, Any],
    operation: tuple[str, str, dict[str, Role], dict[str, object]],
    collections: dict[str, dict[str, FieldDecl]],
    ignored: list[str],
    key: str,
) -> ToolDecl | None:
    """The declared tool, or None where it names no record a keyed operation needs (it is left out)."""
    op, collection, roles, values = operation
    fields = collections.setdefault(collection, {})
    schema = tool.get("input_schema") or {}
    props = {n: p if isinstance(p, dict) else {} for n, p in (schema.get("properties") or {}).items()}
    roles = {**{n: "text" for n in props if op == "search" and n in TEXT_ARGS}, **roles}
    if op in KEYED_OPS:
        named = [n for n in props if roles.get(n) == "key"]
        named = named or [n for n in props if n == key] or [n for n in props if n.endswith("_id")][:1]
        if not named:
            return None
        roles = {**roles, named[0]: "key"}
    if op == "search" and not {"text", "text_any"} & set(roles.values()):
        op = "list"  # a search over filters only
    required = set(schema.get("required") or [])
    params = {}
    for pname, prop in props.items():
        role = roles.get(pname, "default")
        param = _param(pname, prop, pname in required, role, op, set(fields))
        if param.role in ("set", "equals", "contains", "prefix") and param.target(pname) not in fields:
            fields[param.target(pname)] = FieldDecl(type=param.type if param.role == "set" else None, nullable=True)
        if param.role == "ignored":
            ignored.append(f"{name}.{pname}")
        params[pname] = param
    for fname, value in values.items():
        fields.setdefault(fname, field_decl([value], False))
    return ToolDecl(
        op=op,
        collection=collection,
        description=str(tool.get("description") or ""),
        params=params,
        values=values,
    )
