"""The catalogue of workplace domains declared as data: one YAML file per domain in this folder.

A domain is a small workplace app beyond the built-in services (fleet, IT assets, lab samples…):
one main collection of records with typed fields, where each field says how its values are made
(a vocabulary, a Faker provider from a fixed list, a pattern, a number range, a date window, a
colleague's mail), which fields play the parts workflows need (the record's name, a facet that
tells look-alikes apart, its status, its assignee, its date, its key), and a log collection of
entries linked to a record. :meth:`Domain.service` turns it into the ``ServiceDecl`` a spec
declares: list/search/get/create/update/delete tools and the write that damages a record.
The catalogue is validated when it loads (YAML read by libyaml, a key given twice refused); a
broken file is a :class:`DomainError` naming the file and the field.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from coworkenv.spec.base import SpecModel
from coworkenv.spec.declared import CollectionDecl, DamageDecl, FieldDecl, ParamDecl, ServiceDecl, ToolDecl
from coworkenv.spec.io import parse_document

FOLDER = Path(__file__).parent
Fake = Literal["name", "company", "catch_phrase", "bs", "sentence", "word", "user_name", "domain_name", "ipv4", "url"]
_SLUG = r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$"


class DomainError(ValueError):
    """A domain file that cannot be read or does not validate: ``file: field: message`` per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))

    @classmethod
    def of(cls, path: Path, problems: list[str]) -> DomainError:
        """The error of one file: each ``field: message`` prefixed with the file."""
        return cls([f"{path}: {p}" for p in problems])


class FieldSpec(SpecModel):
    """One field of a domain's records, and where its values come from (exactly one source)."""

    type: Literal["string", "integer", "number"] = "string"
    description: str = ""
    values: list[str] | None = Field(None, min_length=3, description="a vocabulary to draw from")
    fake: Fake | None = Field(None, description="a Faker provider, from a fixed list: a domain file names no code")
    pattern: str | None = Field(None, description="letters for '?', digits for '#' (Faker's bothify)")
    range: tuple[float, float] | None = Field(None, description="a number between the two")
    days: tuple[int, int] | None = Field(None, description="a date this many working days from today")
    colleague: bool = Field(False, description="a colleague's mail address")

    @model_validator(mode="after")
    def _one_source(self) -> FieldSpec:
        given = [n for n in ("values", "fake", "pattern", "range", "days") if getattr(self, n) is not None]
        given += ["colleague"] if self.colleague else []
        if len(given) != 1:
            raise ValueError(f"give exactly one of values, fake, pattern, range, days, colleague (given: {given})")
        if (self.range is None) != (self.type == "string"):
            raise ValueError(f"a {self.type} field takes its values from range, and only it does")
        if self.range is not None and self.range[0] > self.range[1]:
            raise ValueError(f"range: {self.range[0]} is above {self.range[1]}")
        if self.days is not None and self.days[0] > self.days[1]:
            raise ValueError(f"days: {self.days[0]} is after {self.days[1]}")
        if self.pattern is not None and not re.search(r"[#?]", self.pattern):
            raise ValueError(f"pattern: {self.pattern!r} has no '#' or '?' to fill in, so every value is the same")
        return self


class LogSpec(SpecModel):
    """The log collection: entries about one main record (``link`` holds its key), written by a colleague."""

    collection: str = Field(pattern=_SLUG)
    record: str = Field(pattern=_SLUG, description="what one entry is called (singular, snake_case)")
    link: str = Field(pattern=_SLUG, description="the field holding the main record's key")
    notes: list[str] = Field(min_length=3, description="what an entry says")


class Domain(SpecModel):
    """A workplace domain: its service, main collection, the fields' roles, and its log."""

    service: str = Field(pattern=r"^[a-z]+$", description="the service name, the prefix of its tools")
    title: str
    description: str
    record: str = Field(pattern=_SLUG, description="what one record is called (singular, snake_case)")
    collection: str = Field(pattern=_SLUG)
    key: str = Field("id", description="the field tools name a record by")
    name: str = Field(description="the field that names a record")
    facet: str = Field(description="a field of a few values that tells look-alikes apart (a site, a team)")
    status: str
    assignee: str = Field(description="the field holding the colleague in charge")
    date: str = Field(description="the record's date (due, booked, expires…)")
    when: str = Field("dated", description="how a request says what the date is ('due back', 'booked')")
    damage: str = Field(description="the status a careless write would set on a record the task is not about")
    fields: dict[str, FieldSpec] = Field(min_length=5)
    log: LogSpec

    @model_validator(mode="after")
    def _roles_fit(self) -> Domain:
        roles = {"name": self.name, "facet": self.facet, "status": self.status}
        roles |= {"assignee": self.assignee, "date": self.date}
        if self.key != "id":
            roles["key"] = self.key
        played: dict[str, str] = {}
        for role, name in roles.items():
            if name in played:
                raise ValueError(f"{role}: field {name!r} already plays the {played[name]} role")
            played[name] = role
        for role, name in roles.items():
            if name not in self.fields:
                raise ValueError(f"{role}: {name!r} is not one of the fields ({', '.join(self.fields)})")
        for role, name, source in (
            ("name", self.name, "values"),
            ("facet", self.facet, "values"),
            ("status", self.status, "values"),
            ("date", self.date, "days"),
            ("key", self.key, "pattern"),
        ):
            if name in self.fields and getattr(self.fields[name], source) is None:
                raise ValueError(f"{role}: field {name!r} must take its values from {source}")
        if not self.fields[self.assignee].colleague:
            raise ValueError(f"assignee: field {self.assignee!r} must be a colleague field")
        if self.damage not in (self.fields[self.status].values or []):
            raise ValueError(f"damage: {self.damage!r} is not one of the {self.status} values")
        if self.log.link in self.fields or self.log.collection == self.collection:
            raise ValueError("log: its link field and collection must differ from the main collection's")
        return self

    @property
    def statuses(self) -> list[str]:
        return list(self.fields[self.status].values or [])

    @property
    def facets(self) -> list[str]:
        return list(self.fields[self.facet].values or [])

    @property
    def key_arg(self) -> str:
        """The argument that names one record in the get, update and delete tools."""
        return self.key if self.key != "id" else f"{self.record}_id"

    def tool(self, op: str) -> str:
        """The name of one of the domain's tools: list, search, get, create, update, delete, list_log, add_log."""
        names = {"list": f"list_{self.collection}", "search": f"search_{self.collection}"}
        names |= {"list_log": f"list_{self.log.collection}", "add_log": f"add_{self.log.record}"}
        return f"{self.service}_{names.get(op, f'{op}_{self.record}')}"

    def service_decl(self) -> ServiceDecl:
        """The domain as a declared service: two collections, eight tools, the damaging write."""
        return _service_decl(self)


def a(noun: str) -> str:
    """``noun`` with its indefinite article."""
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


def _service_decl(d: Domain) -> ServiceDecl:
    noun = d.record.replace("_", " ")
    fields = {
        n: FieldDecl(type=f.type, description=f.description, nullable=n == d.assignee) for n, f in d.fields.items()
    }
    damage = DamageDecl(tool=d.tool("update"), field=d.status, value=d.damage)
    main = CollectionDecl(description=d.description, key=d.key, fields=fields, damage=damage)
    text = FieldDecl(type="string")
    log_fields = {d.log.link: FieldDecl(type="string", required=True), "note": text, "author": text, "date": text}
    log = CollectionDecl(description=f"entries, each about one {noun}", fields=log_fields)
    tools = {**_main_tools(d, noun), **_log_tools(d, noun)}
    return ServiceDecl(description=d.description, collections={d.collection: main, d.log.collection: log}, tools=tools)


def _limit() -> ParamDecl:
    return ParamDecl(role="limit", type="integer", description="at most this many results")


def _main_tools(d: Domain, noun: str) -> dict[str, ToolDecl]:
    """List (by facet, status, assignee, month), search, get, create, update and delete over the main collection."""
    key = ParamDecl(role="key", field="id", required=True, description=f"the {noun}'s {d.key_arg.replace('_', ' ')}")
    facet = ParamDecl(role="equals", field=d.facet, description=f"only {d.facet.replace('_', ' ')} equal to this")
    month = ParamDecl(role="prefix", field=d.date, description=f"only {d.date} starting with this (YYYY-MM)")

    def equals(name: str) -> ParamDecl:
        return ParamDecl(role="equals", field=name, description=f"only records whose {name} is exactly this")

    def sets(name: str, required: bool = False) -> ParamDecl:
        return ParamDecl(role="set", field=name, type=d.fields[name].type, required=required, description=f"new {name}")

    editable = [n for n in d.fields if n != d.key]
    listing = {d.facet: facet, d.status: equals(d.status), d.assignee: equals(d.assignee), d.date: month}
    search = {"query": ParamDecl(role="text", required=True, description="words to find"), d.facet: facet}
    coll = d.collection
    return {
        d.tool("list"): ToolDecl(
            op="list",
            collection=coll,
            description=f"List {noun}s, filtered by {', '.join(listing)} (a month: YYYY-MM).",
            params={**listing, "limit": _limit()},
        ),
        d.tool("search"): ToolDecl(
            op="search",
            collection=coll,
            description=f"Search {noun}s by words in any field, optionally in one {d.facet.replace('_', ' ')}.",
            params=search,
        ),
        d.tool("get"): ToolDecl(
            op="get", collection=coll, description=f"Get one {noun} by its {d.key_arg}.", params={d.key_arg: key}
        ),
        d.tool("create"): ToolDecl(
            op="create",
            collection=coll,
            description=f"Create {a(noun)}.",
            params={n: sets(n, n == d.name) for n in editable},
        ),
        d.tool("update"): ToolDecl(
            op="update",
            collection=coll,
            description=f"Change fields of {a(noun)}.",
            params={d.key_arg: key, **{n: sets(n) for n in editable}},
        ),
        d.tool("delete"): ToolDecl(
            op="delete", collection=coll, description=f"Delete {a(noun)}.", params={d.key_arg: key}
        ),
    }


def _log_tools(d: Domain, noun: str) -> dict[str, ToolDecl]:
    """List the log entries of a record, and add one."""
    entry = d.log.record.replace("_", " ")
    link = ParamDecl(role="equals", description=f"the {noun}'s {d.key_arg.replace('_', ' ')}")
    adding = {
        d.log.link: ParamDecl(role="set", required=True, description=f"the {noun}'s {d.key_arg.replace('_', ' ')}"),
        "note": ParamDecl(role="set", required=True, description="what the entry says"),
        "author": ParamDecl(role="set", description="who writes it (a mail address)"),
        "date": ParamDecl(role="set", description="YYYY-MM-DD"),
    }
    return {
        d.tool("list_log"): ToolDecl(
            op="list",
            collection=d.log.collection,
            description=f"List the {entry} entries of {a(noun)}.",
            params={d.log.link: link, "limit": _limit()},
        ),
        d.tool("add_log"): ToolDecl(
            op="create",
            collection=d.log.collection,
            description=f"Add {a(entry)} entry about {a(noun)}.",
            params=adding,
        ),
    }


def _problem(error: ErrorDetails) -> str:
    """``field: message`` of one validation error (a whole-model check names its field in its message)."""
    message = str(error["msg"]).removeprefix("Value error, ")
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {message}" if where else message


def load_domain(path: str | Path) -> Domain:
    """One domain file, validated (its declared service too); a :class:`DomainError` when it is broken."""
    path = Path(path)
    try:
        data = parse_document(path.read_text(encoding="utf-8"), path.suffix)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DomainError.of(path, [f"<root>: cannot be read: {str(exc).splitlines()[0]}"]) from None
    if not isinstance(data, dict):
        raise DomainError.of(path, [f"<root>: expected a mapping, got {type(data).__name__}"])
    try:
        domain = Domain.model_validate(data)
    except ValidationError as exc:
        raise DomainError.of(path, [_problem(e) for e in exc.errors()]) from None
    if domain.service != path.stem:
        raise DomainError.of(path, [f"service: {domain.service!r} differs from the file name {path.stem!r}"])
    try:
        domain.service_decl()
    except ValidationError as exc:
        raise DomainError.of(path, [f"declared service: {_problem(e)}" for e in exc.errors()]) from None
    return domain


def load_catalogue(folder: str | Path = FOLDER) -> dict[str, Domain]:
    """Every domain file of ``folder`` by service name, in name order; all problems of all files at once."""
    domains: dict[str, Domain] = {}
    problems: list[str] = []
    for path in sorted(Path(folder).glob("*.yaml")):
        try:
            domains[path.stem] = load_domain(path)
        except DomainError as exc:
            problems.extend(exc.problems)
    if problems:
        raise DomainError(problems)
    return domains


@cache
def catalogue() -> dict[str, Domain]:
    """The shipped catalogue (loaded once)."""
    return load_catalogue()


@cache
def declaration(service: str) -> ServiceDecl:
    """The declared service of a catalogue domain (built once)."""
    return catalogue()[service].service_decl()
