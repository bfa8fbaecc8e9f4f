"""What a step template is, and the chain it adds itself to.

A composed workflow is a chain of typed steps. Each step declares the entity types it
needs (``needs``) and produces (``gives``); the chain holds what is bound so far (the
record and the reference expression that names it at run time), so a later step refers
to an earlier step's output by type. A step adds its reference calls, its checks, its
facts, its look-alike records in the World, a clause of the request and a sentence of
the report. Writes declare what they may change (``Chain.allow``); the chain turns those
into one ``unchanged`` guard per collection when it becomes a Draft, so two steps that
write the same collection do not flag each other.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict, Unpack

from coworkenv.services.registry import service_class
from coworkenv.synth.checks import Checks
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.expr_builder import Expr, or_
from coworkenv.synth.expr_builder import field as record_field
from coworkenv.synth.reference import Reference
from coworkenv.synth.world import World

Record = dict[str, Any]


class WriteOptions(TypedDict, total=False):
    """A write's check weight (default 2) and whether it is the workflow's key write."""

    weight: float
    main: bool


@dataclass
class Binding:
    """An entity a step produced: its type, its fixture record, and the reference expression of its id."""

    type: str
    record: Record
    ref: str
    service: str
    collection: str = ""
    """The collection the record lives in, for a step that updates it."""

    def field_ref(self, name: str) -> str:
        """The reference expression of another field of the same record (``ref`` names its id)."""
        return self.ref.removesuffix(".id}") + f".{name}}}"


@dataclass
class Chain:
    """A workflow under construction: what the steps bound, and the parts of the Draft they filled."""

    world: World
    reference: Reference = field(default_factory=Reference)
    checks: Checks = field(default_factory=Checks)
    facts: dict[str, Fact] = field(default_factory=dict)
    clauses: list[list[str]] = field(default_factory=list)
    """Per step, the templates of its clause in the request (one is drawn per opening)."""
    report: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    readable: list[tuple[str, str, str, str]] = field(default_factory=list)
    capabilities: set[str] = field(default_factory=lambda: {"tool_coordination"})
    bound: dict[str, Binding] = field(default_factory=dict)
    allowed: dict[tuple[str, str], list[Expr]] = field(default_factory=dict)
    services: set[str] = field(default_factory=set)
    substance: list[str] = field(default_factory=list)
    """Answer checks a wrong report must fail by weight alone: a small count is among the values any dump of the
    tool results lists, so it cannot be required (the dump probe would pass), and weighs a third of the rest."""
    decoys: list[Record] = field(default_factory=list)
    """The look-alike accounts of the target (later steps give them records of their own)."""
    subject: str = ""
    """What the workflow is about, by name (a customer, a vendor, a colleague, a document): the first step sets it,
    and the report and notices must name it."""
    told: list[str] = field(default_factory=list)
    """What the report must name when the request already names the subject: something found with the tools."""

    def bind(self, type: str, record: Record, ref: str, service: str, collection: str = "") -> Binding:
        binding = Binding(type, record, ref, service, collection)
        self.bound[type] = binding
        return binding

    def need(self, type: str) -> Binding:
        try:
            return self.bound[type]
        except KeyError:
            raise ValueError(f"no step of the chain produced a {type!r}") from None

    def call(self, tool: str, args: dict[str, Any], save_as: str | None = None, main: bool = False) -> None:
        self.services.add(tool.split("_", 1)[0])
        self.reference.call(tool, args, save_as=save_as, role="main" if main else None)

    def write(
        self,
        tool: str,
        args: dict[str, Any],
        collection: str,
        check: tuple[str, Expr],
        allow: Expr,
        **opts: Unpack[WriteOptions],
    ) -> None:
        """A write that adds a record: its call, the check (id, condition) that the record is there, and what the
        write may change."""
        service = tool.split("_", 1)[0]
        self.call(tool, args, main=opts.get("main", False))
        self.checks.record_exists(check[0], service, collection, check[1], opts.get("weight", 2.0))
        self.allow(service, collection, allow)

    def update(
        self, tool: str, args: dict[str, Any], target: Binding, changes: dict[str, Any], id: str, collection: str = ""
    ) -> None:
        """A write that changes fields of one bound record (of ``collection``, by default the ticket or deal's): its
        call, a required check per field (a chain has several writes: stopping before this one, or making it on a
        look-alike, must fail whatever the others weigh), and that the write may change that record only."""
        service = target.service
        collection = collection or target.collection or {"tickets": "tickets", "crm": "deals"}[service]
        where = {"service": service, "collection": collection, "record_id": target.record["id"]}
        for i, (name, value) in enumerate(changes.items()):
            check = id if i == 0 else f"{id}_{name}"
            weight = 3.0 if i == 0 else 2.0
            self.checks.add("field_equals", check, weight, required=True, **where, field=name, value=value)
        self.call(tool, args, main=True)
        self.allow(service, collection, record_field("id").eq(target.record["id"]))

    def allow(self, service: str, collection: str, changed: Expr) -> None:
        """A write of this chain may change the records ``changed`` admits (everything else stays as it was)."""
        self.allowed.setdefault((service, collection), []).append(changed)

    def key(self) -> tuple[str, str] | None:
        """The chain's key result a message must carry, as (text to check, reference text): a ticket, else a count."""
        if "ticket" in self.bound:
            ticket = self.bound["ticket"]
            return ticket.record["id"], ticket.ref
        figure = self.bound.get("figure")
        if figure is not None and isinstance(figure.record["value"], int):
            return str(figure.record["value"]), figure.ref
        return None

    def report_found(self, found: str, sentence: str) -> None:
        """The report states ``sentence``, which names ``found``: something the tools gave, so the answer must name
        it (:attr:`told`)."""
        self.told.append(found)
        self.report.append(sentence)

    def clause(self, *templates: str) -> None:
        self.clauses.append(list(templates))

    def draft(self, name: str, title: str, openings: list[str]) -> Draft:
        """The Draft: the chain's reference, checks, facts and one collateral guard per written collection."""
        world = self.world
        for service, collections in sorted(world.fixtures.items()):
            written = {c for s, c in self.allowed if s == service}
            for collection in sorted(set(collections) & set(service_class(service, world.declared).damage) | written):
                allows = self.allowed.get((service, collection))
                allow = {} if allows is None else {"allow": str(or_(*allows))}
                where = {"service": service, "collection": collection}
                self.checks.add("unchanged", f"{service}_{collection}_guard", 1.5, required=True, **where, **allow)
        rest = sum(c.weight for c in self.checks if c.id not in self.substance)
        for check in self.checks:
            if check.id in self.substance:
                check.weight = round(rest / 2, 3)
        draft = Draft.start(name, title, world, openings, self.facts, self.capabilities, self.readable)
        draft.reference = self.reference
        draft.checks = self.checks
        draft.summary = self.summary
        self.reference.answer(" ".join(self.report or [f"Done for {self.subject}."]))
        return draft


class Step(ABC):
    """One step template: what it needs and gives, and how it adds itself to a chain."""

    kind: ClassVar[str]
    """The step kind (locate, read, derive, act, notify, report)."""
    name: ClassVar[str]
    needs: ClassVar[tuple[str, ...]] = ()
    gives: ClassVar[tuple[str, ...]] = ()

    def fits(self, chain: Chain) -> bool:
        """Whether the chain bound what this step needs (and it would not produce a type twice)."""
        return all(t in chain.bound for t in self.needs) and not any(t in chain.bound for t in self.gives)

    @abstractmethod
    def apply(self, chain: Chain) -> None:
        """Add this step's fixtures, reference calls, checks, facts, request clause and report sentence."""
