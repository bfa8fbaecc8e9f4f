"""Schema-declared services: a service described entirely as data inside a spec.

An imported task (Claw-Eval) brings services whose records and tools coworkenv's own
services do not match field for field. Rather than drop what does not fit, the spec can
declare the service: its collections (record fields with JSON types), and its tools, each
one of a few generic operations over one collection (``list``/``search`` with filters,
``get``/``update``/``delete`` by key, ``create``). Every argument of a tool has a *role*
that says what it does to the records, so the behaviour is data, never code.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from coworkenv.spec.base import SpecModel as _Model

JsonType = Literal["string", "integer", "number", "boolean", "array", "object"]
Op = Literal["list", "search", "get", "create", "update", "delete"]
Role = Literal["key", "equals", "contains", "prefix", "text", "set", "limit", "ignored"]

READ_OPS = ("list", "search", "get")
KEYED_OPS = ("get", "update", "delete")
FILTER_ROLES = ("equals", "contains", "prefix", "text")
ROLES_OF: dict[str, tuple[str, ...]] = {
    "list": (*FILTER_ROLES, "limit", "ignored"),
    "search": (*FILTER_ROLES, "limit", "ignored"),
    "get": ("key", "ignored"),
    "create": ("set", "ignored"),
    "update": ("key", "set", "ignored"),
    "delete": ("key", "ignored"),
}
"""Which argument roles each operation accepts."""


class FieldDecl(_Model):
    """One record field: its JSON type (None: any value), whether it may be null or left out."""

    type: JsonType | None = None
    nullable: bool = False
    required: bool = False
    description: str = ""


class DamageDecl(_Model):
    """The write that visibly spoils a record of a collection: update tool ``tool`` sets ``field`` to ``value``."""

    tool: str
    field: str
    value: object


class CollectionDecl(_Model):
    """A collection of records; ``key`` is the field tools name a record by (its value is the record ``id``)."""

    description: str = ""
    key: str = "id"
    fields: dict[str, FieldDecl] = Field(default_factory=dict)
    damage: DamageDecl | None = Field(
        None, description="the collateral write the verifier makes on a record the task is not about"
    )

    @model_validator(mode="after")
    def _key_is_a_field(self) -> CollectionDecl:
        if "id" in self.fields:
            raise ValueError("fields: 'id' is every record's own key; do not declare it")
        if self.key != "id" and self.key not in self.fields:
            raise ValueError(f"key: {self.key!r} is not one of the fields")
        return self


class ParamDecl(_Model):
    """One tool argument, as the agent sees it (type, description, default) and what it does (role)."""

    role: Role
    field: str | None = Field(None, description="the record field it acts on (default: the argument's name)")
    type: JsonType | None = "string"
    description: str = ""
    required: bool = False
    default: object = None
    wildcard: str | None = Field(None, description="a value that means 'no filter' (e.g. 'all')")
    match: Literal["all_words", "any_token"] = Field(
        "all_words",
        description="for a 'text' argument: every word must occur, or any word or pair of characters may "
        "(the loose match of Claw-Eval's mock search, which also finds text without spaces, such as Chinese)",
    )

    def target(self, name: str) -> str:
        return self.field or name


class ToolDecl(_Model):
    """A tool: one operation over one collection; ``values`` are fields a write always sets."""

    op: Op
    collection: str
    description: str = ""
    params: dict[str, ParamDecl] = Field(default_factory=dict)
    values: dict[str, object] = Field(default_factory=dict)

    @property
    def kind(self) -> Literal["read", "write"]:
        return "read" if self.op in READ_OPS else "write"


class ServiceDecl(_Model):
    """A whole declared service: its collections and its tools (full tool names, as the agent calls them)."""

    description: str = ""
    collections: dict[str, CollectionDecl] = Field(min_length=1)
    tools: dict[str, ToolDecl] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _tools_fit(self) -> ServiceDecl:
        for name, tool in self.tools.items():
            problem = _tool_problem(tool, self.collections.get(tool.collection), self.collections)
            if problem:
                raise ValueError(f"tools.{name}: {problem}")
        for name, coll in self.collections.items():
            problem = _damage_problem(name, coll.damage, self.tools) if coll.damage else ""
            if problem:
                raise ValueError(f"collections.{name}.damage: {problem}")
        return self


def _damage_problem(collection: str, damage: DamageDecl, tools: dict[str, ToolDecl]) -> str:
    """What is wrong with a collection's damaging write (empty when nothing): it must be an update tool of the
    collection that sets the field."""
    tool = tools.get(damage.tool)
    if tool is None or tool.op != "update" or tool.collection != collection:
        return f"tool {damage.tool!r} is not an update tool of {collection}"
    if not any(p.role == "set" and p.target(n) == damage.field for n, p in tool.params.items()):
        return f"tool {damage.tool!r} has no argument that sets {damage.field!r}"
    return ""


def _tool_problem(tool: ToolDecl, coll: CollectionDecl | None, known: dict[str, CollectionDecl]) -> str:
    """What is wrong with a tool declaration (empty when nothing)."""
    if coll is None:
        return f"collection {tool.collection!r} is not declared; declared: {sorted(known)}"
    fields = {*coll.fields, "id"}
    keys = [n for n, p in tool.params.items() if p.role == "key"]
    if tool.op in KEYED_OPS and len(keys) != 1:
        return f"a {tool.op} tool needs exactly one argument with role 'key', has {len(keys)}"
    if tool.op == "search" and not any(p.role == "text" for p in tool.params.values()):
        return "a search tool needs an argument with role 'text'"
    for pname, param in tool.params.items():
        if param.role not in ROLES_OF[tool.op]:
            return f"params.{pname}: role {param.role!r} does not fit a {tool.op} tool (allowed: {ROLES_OF[tool.op]})"
        if param.match != "all_words" and param.role != "text":
            return f"params.{pname}: match {param.match!r} is for 'text' arguments only"
        if param.role in (*FILTER_ROLES[:3], "set") and param.target(pname) not in fields:
            return f"params.{pname}: field {param.target(pname)!r} is not a field of {tool.collection}"
    bad = sorted(set(tool.values) - fields)
    if bad:
        return f"values: {bad} are not fields of {tool.collection}"
    if tool.values and tool.op not in ("create", "update"):
        return "values: only create and update tools set fields"
    return ""
