"""Static admission checks on names: everything the spec refers to must exist.

Every tool, service, collection, record, slot and result name must resolve; expressions must
parse; a reference step may use only what an earlier call saved or the user was asked; event
mutations must target records that exist (a templated id is the triggering call's, checked by
:mod:`coworkenv.verify.reads`); and a hidden fact's reply must state its value.
"""

from __future__ import annotations

import re

from coworkenv.expr import check_syntax, format_value, references, root_names
from coworkenv.runtime.ids import spec_ids
from coworkenv.runtime.interface import interface_problems
from coworkenv.services.registry import service_class, service_tools, tool_table
from coworkenv.spec.models import AskStep, CallStep, TaskSpec
from coworkenv.values import clock, mentioned, mentions
from coworkenv.verify.findings import Finding
from coworkenv.verify.leaks import value_texts
from coworkenv.verify.perturb import exposed
from coworkenv.verify.reads import context_reads, event_reads
from coworkenv.verify.targets import selector_findings


def _tool(tools: set[str], name: str | None, where: str) -> list[Finding]:
    if name is None or name in tools:
        return []
    known = "not exposed in this spec" if name in tool_table() else "no such tool"
    return [
        Finding(
            kind="unresolved_reference",
            where=where,
            evidence=f"tool {name!r}: {known}",
            hint="use a tool of the spec's services",
        )
    ]


def _expr(src: str | None, where: str) -> list[Finding]:
    err = check_syntax(src) if src else None
    return [Finding(kind="schema", where=where, evidence=err, hint="fix the expression")] if err else []


def _collection(spec: TaskSpec, service: str, collection: str, where: str) -> list[Finding]:
    if service not in spec.services:
        return [
            Finding(
                kind="unresolved_reference",
                where=where,
                evidence=f"service {service!r} is not in the spec",
                hint="add its fixtures or check another service",
            )
        ]
    records = service_class(service, spec.declared_services).records
    if collection not in records:
        return [
            Finding(
                kind="unresolved_reference",
                where=where,
                evidence=f"{service} has no collection {collection!r}",
                hint=f"collections: {', '.join(records)}",
            )
        ]
    return []


def tool_findings(spec: TaskSpec, tools: set[str]) -> list[Finding]:
    out = []
    table = tool_table(spec.declared_services)
    for i, name in enumerate(spec.tools or []):
        if name not in table or table[name].service not in spec.services:
            out += [
                Finding(
                    kind="unresolved_reference",
                    where=f"tools[{i}]",
                    evidence=f"tool {name!r} is not a tool of the spec's services",
                )
            ]
    for i, p in enumerate(spec.rules):
        out += _tool(tools, p.tool, f"rules[{i}].tool") + _tool(tools, p.prior_tool, f"rules[{i}].prior_tool")
        out += _expr(p.when, f"rules[{i}].when") + _expr(p.prior_when, f"rules[{i}].prior_when")
    for i, e in enumerate(spec.events):
        out += _tool(tools, e.on_tool, f"events[{i}].on_tool")
    out += event_reads(spec, tools) + context_reads(spec)
    for i, f in enumerate(spec.faults):
        out += _tool(tools, f.tool, f"faults[{i}].tool")
    return out


def interface_findings(spec: TaskSpec) -> list[Finding]:
    """What in the spec's interface does not fit the tools of its services."""
    if spec.interface is None:
        return []
    problems = interface_problems(spec.interface, service_tools(spec.services, spec.declared_services))
    out = [
        Finding(kind="schema", where=where, evidence=evidence, hint="rename only tools and arguments that exist")
        for where, evidence in (p.split(": ", 1) for p in problems)
    ]
    try:
        ids = spec_ids(spec)
    except ValueError:  # fixtures that do not validate: the fixture check names them
        return out
    hint = "choose an id style (or prefixes) that shows each id of the spec differently"
    clashes = ids.problems if ids is not None else ()
    return out + [
        Finding(kind="schema", where=w, evidence=e, hint=hint) for w, e in (p.split(": ", 1) for p in clashes)
    ]


def _record_ids(spec: TaskSpec, service: str, collection: str) -> set[object]:
    ids = {r["id"] for r in spec.services.get(service, {}).get(collection, [])}
    for e in spec.events:
        ids |= {
            m.record["id"]
            for m in e.mutations
            if m.op == "insert" and m.record and m.service == service and m.collection == collection
        }
    return ids


def check_findings(spec: TaskSpec) -> list[Finding]:
    out = []
    tools = exposed(spec)
    slots = {f.slot for f in spec.user.hidden_facts}
    for i, c in enumerate(spec.checks):
        where = f"checks[{i}]"
        names = c.names()
        if names.collection is not None:
            out += _collection(spec, *names.collection, where)
        for name, tool in names.tools:
            out += _tool(tools, tool, f"{where}.{name}")
        for name, expr in names.expressions:
            out += _expr(expr, f"{where}.{name}")
        if not out and names.collection is not None:  # the collection resolves: its record and field must too
            out += _record_and_field(spec, names.collection, names.record_id, names.field, where)
        if names.slot is not None and names.slot not in slots:
            out.append(
                Finding(
                    kind="unresolved_reference",
                    where=f"{where}.slot",
                    evidence=f"no hidden fact with slot {names.slot!r}",
                )
            )
    return out


def _record_and_field(
    spec: TaskSpec, collection: tuple[str, str], record_id: str | None, field: str | None, where: str
) -> list[Finding]:
    name = ".".join(collection)
    if record_id is not None and record_id not in _record_ids(spec, *collection):
        return [
            Finding(
                kind="unresolved_reference",
                where=f"{where}.record_id",
                evidence=f"no {name} record {record_id!r}",
                hint="check a record that exists, or use record_exists for a new one",
            )
        ]
    if field is not None and field not in _fields(spec, *collection):
        return [
            Finding(
                kind="unresolved_reference",
                where=f"{where}.field",
                evidence=f"{name} records have no field {field!r}",
                hint=f"fields: {', '.join(_fields(spec, *collection))}",
            )
        ]
    return []


def _fields(spec: TaskSpec, service: str, collection: str) -> list[str]:
    return list(service_class(service, spec.declared_services).records[collection].model_fields)


def reference_findings(spec: TaskSpec, tools: set[str]) -> list[Finding]:
    out = []
    facts = {f.slot: f for f in spec.user.hidden_facts}
    saved: set[str] = set()
    asked: set[str] = set()
    for i, step in enumerate(spec.reference):
        where = f"reference[{i}]"
        if isinstance(step, AskStep):
            if step.ask not in facts:
                out.append(
                    Finding(
                        kind="unresolved_reference",
                        where=where,
                        evidence=f"asks for {step.ask!r}, which is no hidden fact",
                    )
                )
            asked.add(step.ask)
            continue
        if isinstance(step, CallStep):
            out += _tool(tools, step.call, f"{where}.call")
        for expr in references(step.model_dump(exclude={"save_as"})):
            out += _expr(expr, where) or _names(expr, where, saved, asked)
        if isinstance(step, CallStep) and step.save_as:
            saved.add(step.save_as)
    today = clock(spec.context)
    for slot, fact in facts.items():
        keys = mentions(fact.reply, today)
        values = fact.value if isinstance(fact.value, list) else [fact.value]
        missing = [format_value(v) for v in values if not mentioned(v, fact.reply, keys) and value_texts(v)]
        if missing:
            out.append(
                Finding(
                    kind="unsolvable",
                    where=f"user.hidden_facts[{slot}]",
                    evidence=f"the user's reply does not state {missing[0]!r}",
                    hint="make the user's reply contain the value",
                )
            )
    return out


def _names(expr: str, where: str, saved: set[str], asked: set[str]) -> list[Finding]:
    out = []
    for name in sorted(root_names(expr)):
        if name == "facts":
            for slot in re.findall(r"facts\.([A-Za-z_][A-Za-z0-9_]*)", expr):
                if slot not in asked:
                    out.append(
                        Finding(
                            kind="unresolved_reference",
                            where=where,
                            evidence=f"uses facts.{slot} before asking the user for it",
                            hint="add an ask step for the slot first",
                        )
                    )
        elif name not in saved:
            out.append(
                Finding(
                    kind="unresolved_reference",
                    where=where,
                    evidence=f"uses {name!r}, which no earlier call saved",
                    hint="save the call's result under that name",
                )
            )
    return out


def event_findings(spec: TaskSpec) -> list[Finding]:
    out = []
    for i, e in enumerate(spec.events):
        for j, m in enumerate(e.mutations):
            where = f"events[{i}].mutations[{j}]"
            found = _collection(spec, m.service, m.collection, where)
            known = m.op == "insert" or "${" in (m.id or "") or m.id in _record_ids(spec, m.service, m.collection)
            found += selector_findings(m, where)  # a selector's record exists only when it is made: see targets
            if not found and not known and m.where is None:  # a templated id is the triggering call's: event_reads
                found.append(
                    Finding(
                        kind="unresolved_reference",
                        where=where,
                        evidence=f"{m.op} of missing record {m.service}.{m.collection}/{m.id}",
                        hint="change a record the fixtures hold or an event inserts, or insert it",
                    )
                )
            out += found
    return out
