"""A Service class built from a spec's declaration (:mod:`coworkenv.spec.declared`).

The declaration is data; this module turns it into typed record models and tools with
JSON-schema'd arguments, so a declared service is routed, validated, diffed, hashed and
graded like a built-in one. Field and argument names are free text (``from``, ``json``),
so the pydantic models hold them under aliases and always dump by alias. Records keep
exactly the fields they were given: an unset optional field is not filled in.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, ClassVar, cast

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from coworkenv.services.base import Record, RecordModel, Result, Service, ToolError, ToolInfo, page
from coworkenv.services.damage import Damage
from coworkenv.spec.declared import CollectionDecl, ParamDecl, ServiceDecl, ToolDecl

_TYPES: dict[str, tuple[object, object]] = {  # a JSON type's annotation, and the one that also takes null
    "string": (str, str | None),
    "integer": (int, int | None),
    "number": (int | float, int | float | None),
    "boolean": (bool, bool | None),
    "array": (list[object], list[object] | None),
    "object": (dict[str, object], dict[str, object] | None),
}
MAX_RESULTS = 50


def _python_type(json_type: str | None, nullable: bool) -> object:
    """The annotation of a declared field or argument (``object``, which takes every value, when it has no type)."""
    if not json_type:
        return object
    plain, or_null = _TYPES[json_type]
    return or_null if nullable else plain


class DeclaredRecord(RecordModel):
    """A declared record: its key field (when not ``id``) repeats the id, filled in when left out."""

    key_field: ClassVar[str | None] = None

    @model_validator(mode="after")
    def _key_is_the_id(self) -> DeclaredRecord:
        name = self.key_field
        if name is None:
            return self
        value = getattr(self, name)
        if value is None:
            setattr(self, name, self.id)
        elif value != self.id:
            raise ValueError(f"key {value!r} differs from the record's id {self.id!r}")
        return self


def _record_model(service: str, collection: str, decl: CollectionDecl) -> type[RecordModel]:
    fields: dict[str, Any] = {}
    key_field = None
    for i, (name, f) in enumerate(decl.fields.items()):
        default = ... if f.required and name != decl.key else None
        fields[f"f{i}"] = (_python_type(f.type, f.nullable or default is None), Field(default, alias=name))
        key_field = f"f{i}" if name == decl.key else key_field
    model = create_model(f"{service}_{collection}", __base__=DeclaredRecord, **fields)
    model.key_field = key_field
    return model


def _args_model(tool: str, params: dict[str, ParamDecl]) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for i, (name, p) in enumerate(params.items()):
        default = ... if p.required else p.default
        kind = _python_type(p.type, not p.required and p.default is None)
        fields[f"p{i}"] = (kind, Field(default, alias=name, description=p.description or None))
    return create_model(f"{tool}_args", __config__=ConfigDict(extra="forbid"), **fields)


class DeclaredService(Service):
    """The generic behaviour of every declared service; subclasses carry one declaration."""

    name = "declared"
    records: ClassVar[dict[str, type[RecordModel]]] = {}
    decl: ClassVar[ServiceDecl]

    @classmethod
    def validate_record(cls, collection: str, row: Record) -> Record:
        return cls.records[collection].model_validate(row).model_dump(mode="json", by_alias=True, exclude_unset=True)

    def call(self, tool: str, args: Mapping[str, object]) -> Result:
        """Run declared tool ``tool`` with its arguments (by their declared names)."""
        decl = self.decl.tools[tool]
        if decl.op in ("list", "search"):
            return self._list(decl, args)
        if decl.op == "create":
            rec = self.insert(decl.collection, {**_sets(decl, args), **decl.values})
            return {"created": True, "id": rec["id"], "record": rec}
        key = next(args[n] for n, p in decl.params.items() if p.role == "key")
        if decl.op == "get":
            return self.get(decl.collection, str(key))
        if decl.op == "delete":
            self.delete(decl.collection, str(key))
            return {"deleted": True, "id": key}
        changes = {**_sets(decl, args), **decl.values}
        if not changes:
            raise ToolError("nothing to update: give at least one field to change")
        return {"updated": True, "id": key, "record": self.update(decl.collection, str(key), changes)}

    def _list(self, decl: ToolDecl, args: Mapping[str, object]) -> Result:
        limit = MAX_RESULTS
        tests = []
        for name, p in decl.params.items():
            value = args.get(name)
            if value is None or p.role == "ignored" or (p.wildcard is not None and value == p.wildcard):
                continue
            if p.role == "limit":
                if not isinstance(value, int) or isinstance(value, bool):
                    raise ToolError(f"{name} must be a whole number, got {value!r}")
                limit = max(1, min(value, MAX_RESULTS))
            else:
                tests.append((p.match if p.role == "text" else p.role, p.target(name), value))
        hits = [r for r in self.db[decl.collection].values() if all(_matches(r, *t) for t in tests)]
        return page(hits, limit, 0, key=decl.collection)


def _sets(decl: ToolDecl, args: Mapping[str, object]) -> dict[str, object]:
    """The fields a write sets from its arguments (an argument left out sets nothing)."""
    return {p.target(n): args[n] for n, p in decl.params.items() if p.role == "set" and args.get(n) is not None}


def _lower(value: object) -> str:
    return str(value).lower()


def _tokens(text: str) -> set[str]:
    """Words, pairs of adjacent characters and single CJK characters: what a loose search matches on."""
    pairs = {text[i : i + 2] for i in range(len(text) - 1) if not text[i : i + 2].isspace()}
    return {*text.split(), *pairs, *(c for c in text if "\u4e00" <= c <= "\u9fff")}


def _matches(rec: Record, role: str, field: str, value: object) -> bool:
    """Whether a record passes one filter argument."""
    want = _lower(value)
    if role in ("all_words", "any_token"):
        hay = " ".join(_lower(v) for v in rec.values() if isinstance(v, str | list))
        if role == "any_token":
            return bool(_tokens(want) & _tokens(hay))
        return all(w in hay for w in want.split())
    have = rec.get(field)
    items = have if isinstance(have, list) else [have]
    if role == "equals":
        return any(_lower(h) == want for h in items if h is not None)
    if role == "contains":
        return any(want in _lower(h) for h in items if h is not None)
    return any(_lower(h).startswith(want) for h in items if h is not None)  # prefix


def _tool_method(tool: str, arg_names: list[str]) -> Callable[..., Result]:
    def run(self: DeclaredService, **fields: object) -> Result:
        given = {arg_names[int(k[1:])]: v for k, v in fields.items()}
        return self.call(tool, given)

    return run


def _damage(decl: ServiceDecl, coll: CollectionDecl) -> Damage:
    """A collection's declared damaging write, named by the key argument of its update tool."""
    assert coll.damage is not None
    tool = decl.tools[coll.damage.tool]
    key = next(n for n, p in tool.params.items() if p.role == "key")
    setter = next(n for n, p in tool.params.items() if p.role == "set" and p.target(n) == coll.damage.field)
    return Damage(coll.damage.tool, key, coll.damage.field, coll.damage.value, {setter: coll.damage.value})


@lru_cache(maxsize=128)
def _build(name: str, blob: str) -> type[Service]:
    decl = ServiceDecl.model_validate_json(blob)
    namespace: dict[str, object] = {
        "name": name,
        "description": decl.description,
        "decl": decl,
        "records": {c: _record_model(name, c, d) for c, d in decl.collections.items()},
        "id_prefix": {c: c[:3] for c in decl.collections},
        "damage": {c: _damage(decl, d) for c, d in decl.collections.items() if d.damage is not None},
    }
    methods = {f"tool_{i}": (tool, d) for i, (tool, d) in enumerate(decl.tools.items())}
    for method, (tool, d) in methods.items():
        namespace[method] = _tool_method(tool, list(d.params))
    cls = cast(type[DeclaredService], type(f"Declared_{name}", (DeclaredService,), namespace))
    cls._tools = {
        tool: ToolInfo(
            name=tool,
            service=name,
            method=method,
            kind=d.kind,
            description=d.description or f"{d.op} {d.collection}",
            args_model=_args_model(tool, d.params),
        )
        for method, (tool, d) in methods.items()
    }
    return cls


def declared_class(name: str, decl: ServiceDecl) -> type[Service]:
    """The Service class of a declaration (built once per distinct declaration; found by the declaration object
    itself while it is among the latest ones asked for, since a spec asks for its services' classes often)."""
    hit = _BY_OBJECT.get((name, id(decl)))
    if hit is not None and hit[0] is decl:
        return hit[1]
    cls = _BY_OBJECT[(name, id(decl))] = (decl, _build(name, decl.model_dump_json()))
    while len(_BY_OBJECT) > 64:
        _BY_OBJECT.popitem(last=False)
    return cls[1]


_BY_OBJECT: OrderedDict[tuple[str, int], tuple[ServiceDecl, type[Service]]] = OrderedDict()
"""The latest declarations' classes, by the identity of the declaration (held, so that the identity stays its own)."""
