"""Static admission checks: what can be judged without running an episode.

Every tool, service, collection, record, slot and result name the spec refers to must
exist; expressions must parse; no hidden fact may already be in the opening request;
no check may hold on the initial state (guards excepted: ``unchanged``,
``tool_not_called``, ``max_calls`` and ``record_absent`` say what must *not* happen, so they
hold until the agent errs — but a spec made only of guards is vacuous); event filters and
templates read only the triggering call's arguments, and context replies only the state
and the calls;
and every capability the spec claims must have its ingredients.
"""

from __future__ import annotations

import re
from typing import Any

from coworkenv.capabilities.registry import CAPABILITIES, missing_ingredients
from coworkenv.expr import check_syntax, format_value, references, root_names
from coworkenv.grading.answers import given_values, prompt_of
from coworkenv.grading.checks import EpisodeLog, episode_check, state_check
from coworkenv.runtime.environment import Environment
from coworkenv.services.registry import service_class, tool_table
from coworkenv.spec.models import GUARD_CHECKS, STATE_CHECKS, AskStep, CallStep, Event, TaskSpec
from coworkenv.spec.stages import stage_view, stage_views
from coworkenv.values import clock, forms, kinds_of, mentioned, mentions
from coworkenv.verify.findings import Finding, Location
from coworkenv.verify.fixtures import fixture_findings
from coworkenv.verify.perturb import absent_breaker, exposed
from coworkenv.verify.reads import context_reads, event_reads

_TOOL_FIELDS = {
    "tool_called": ("tool",),
    "tool_not_called": ("tool",),
    "max_calls": ("tool",),
    "order": ("first", "then"),
    "confirmed_before": ("tool",),
}
_EXPR_FIELDS = ("where", "allow")


def static_findings(spec: TaskSpec) -> list[Finding]:
    """All static problems of a spec (empty when it may go on to the dynamic checks)."""
    findings = fixture_findings(spec)
    if findings:  # nothing below can be judged on fixtures that do not load
        return findings
    if spec.stages:
        return _staged(spec)
    tools = exposed(spec)
    findings += _tools(spec, tools)
    findings += _checks(spec)
    findings += _reference(spec, tools)
    findings += _events(spec)
    findings += _leaks(spec)
    findings += _capabilities(spec)
    if not findings:
        findings += _vacuous(spec)
    return findings


def _staged(spec: TaskSpec) -> list[Finding]:
    """Each stage judged as its own request (a later stage's changes as events that fire at its start, its
    reference standing on its own); capabilities on the whole spec; vacuity on the first stage's initial state
    (a later stage's is judged when the reference reaches it: see :mod:`coworkenv.verify.stages`)."""
    tools = exposed(spec)
    out: list[Finding] = []
    changes: list[Event] = []
    for k, view in enumerate(stage_views(spec)):
        if k:
            stage = (spec.stages or [])[k - 1]
            if stage.mutations:
                changes.append(Event(id=f"stage:{stage.id}", after_step=0, mutations=stage.mutations))
            view = view.model_copy(update={"events": [*view.events, *changes]})  # its own first: their places hold
        found = _tools(view, tools) + _checks(view) + _reference(view, tools) + _events(view) + _leaks(view)
        if k and all(c.kind in GUARD_CHECKS for c in view.checks):
            found.append(
                Finding(
                    kind="vacuous_check",
                    where="checks",
                    evidence="every check of the stage is a guard",
                    location=Location.checks(),
                )
            )
        out += [f.in_stage(k - 1) if k else f for f in found]
    out += _capabilities(spec)
    return out or _vacuous(stage_view(spec, 0))


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


def _tools(spec: TaskSpec, tools: set[str]) -> list[Finding]:
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
    for i, p in enumerate(spec.policies):
        out += _tool(tools, p.tool, f"policies[{i}].tool") + _tool(tools, p.prior_tool, f"policies[{i}].prior_tool")
        out += _expr(p.when, f"policies[{i}].when") + _expr(p.prior_when, f"policies[{i}].prior_when")
    for i, e in enumerate(spec.events):
        out += _tool(tools, e.on_tool, f"events[{i}].on_tool")
    out += event_reads(spec, tools) + context_reads(spec)
    for i, f in enumerate(spec.faults):
        out += _tool(tools, f.tool, f"faults[{i}].tool")
    return out


def _record_ids(spec: TaskSpec, service: str, collection: str) -> set[str]:
    ids = {r["id"] for r in spec.services.get(service, {}).get(collection, [])}
    for e in spec.events:
        ids |= {
            m.record["id"]
            for m in e.mutations
            if m.op == "insert" and m.record and m.service == service and m.collection == collection
        }
    return ids


def _checks(spec: TaskSpec) -> list[Finding]:
    out = []
    tools = exposed(spec)
    slots = {f.slot for f in spec.user.hidden_facts}
    for i, c in enumerate(spec.checks):
        where = f"checks[{i}]"
        if c.kind in STATE_CHECKS:
            out += _collection(spec, c.service, c.collection, where)
        for name in _TOOL_FIELDS.get(c.kind, ()):
            out += _tool(tools, getattr(c, name), f"{where}.{name}")
        for name in _EXPR_FIELDS:
            out += _expr(getattr(c, name, None), f"{where}.{name}")
        if c.kind == "field_equals" and not out and c.record_id not in _record_ids(spec, c.service, c.collection):
            out.append(
                Finding(
                    kind="unresolved_reference",
                    where=f"{where}.record_id",
                    evidence=f"no {c.service}.{c.collection} record {c.record_id!r}",
                    hint="check a record that exists, or use record_exists for a new one",
                )
            )
        if (
            c.kind in ("field_matches", "field_number")
            and not out
            and c.field not in _fields(spec, c.service, c.collection)
        ):
            out.append(
                Finding(
                    kind="unresolved_reference",
                    where=f"{where}.field",
                    evidence=f"{c.service}.{c.collection} records have no field {c.field!r}",
                    hint=f"fields: {', '.join(_fields(spec, c.service, c.collection))}",
                )
            )
        if c.kind == "asked_user" and c.slot not in slots:
            out.append(
                Finding(
                    kind="unresolved_reference", where=f"{where}.slot", evidence=f"no hidden fact with slot {c.slot!r}"
                )
            )
    return out


def _fields(spec: TaskSpec, service: str, collection: str) -> list[str]:
    return list(service_class(service, spec.declared_services).records[collection].model_fields)


def _reference(spec: TaskSpec, tools: set[str]) -> list[Finding]:
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
        missing = [format_value(v) for v in values if not mentioned(v, fact.reply, keys) and _value_texts(v)]
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


def _events(spec: TaskSpec) -> list[Finding]:
    out = []
    for i, e in enumerate(spec.events):
        for j, m in enumerate(e.mutations):
            where = f"events[{i}].mutations[{j}]"
            found = _collection(spec, m.service, m.collection, where)
            known = m.op == "insert" or "${" in (m.id or "") or m.id in _record_ids(spec, m.service, m.collection)
            if not found and not known:  # a templated id is the triggering call's: checked by event_reads
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


def _value_texts(value: Any) -> list[str]:
    if isinstance(value, list):
        return [t for v in value for t in _value_texts(v)]
    text = format_value(value).strip()
    return [text] if text else []


def _leaks(spec: TaskSpec) -> list[Finding]:
    """Hidden facts the opening request or context already states, in any form.

    Values are compared normalised ("after 2pm" leaks "14:00", "$1,200" leaks 1200,
    "tomorrow" leaks the date after the workspace's today, "Ortiz, Sam" leaks
    sam.ortiz@corp.com), not only as exact strings.
    """
    out: list[Finding] = []
    facts = spec.user.hidden_facts
    if not facts:
        return out
    visible = f"{spec.user.opening}\n{spec.context}"
    wanted = kinds_of([alt for f in facts for alt in forms(f.value)])
    keys = mentions(visible, clock(spec.context), wanted) if wanted else set()
    for fact in facts:
        values = fact.value if isinstance(fact.value, list) else [fact.value]
        leaked = next((v for v in values if mentioned(v, visible, keys)), None)
        if leaked is not None:
            out.append(
                Finding(
                    kind="leaked_fact",
                    where=f"user.hidden_facts[{fact.slot}]",
                    location=Location.hidden_fact(fact.slot),
                    evidence=f"{format_value(leaked)!r} is already in the opening request or context",
                    hint="rephrase the opening so it does not state the hidden value in any form",
                )
            )
    return out


def answer_findings(spec: TaskSpec) -> list[Finding]:
    """Answer checks whose values the prompt (request, persona, context) already states entirely.

    Such a check cannot tell a report from a reply that names what it was told, so it earns
    weight for no work. Part of admission, not of ``static_findings``: an imported
    evaluation task (Claw-Eval) is graded as its source grades it, not judged by design.
    """
    prompt = prompt_of(spec)
    out = []
    for i, c in enumerate(spec.checks):
        if c.kind not in ("answer_contains", "answer_number"):
            continue
        given = given_values(c, prompt)
        if len(given) == (1 if c.kind == "answer_number" else len(c.values)):
            out.append(
                Finding(
                    kind="answer_in_prompt",
                    where=f"checks[{i}]",
                    location=Location.check(i, c.id),
                    evidence=f"answer check {c.id!r} asks only for {', '.join(map(format_value, given))}, which the "
                    "request, persona or context already states: a reply that restates the prompt satisfies it",
                    hint="ask the report for something the agent must find out with the tools, or drop the check",
                )
            )
    return out


def _capabilities(spec: TaskSpec) -> list[Finding]:
    out = [
        Finding(
            kind="unresolved_reference",
            where=f"capabilities[{i}]",
            evidence=f"unknown capability {c!r}",
            hint=f"known: {', '.join(CAPABILITIES)}",
        )
        for i, c in enumerate(spec.capabilities)
        if c not in CAPABILITIES
    ]
    for cap, ing in missing_ingredients(spec):
        out.append(
            Finding(
                kind="missing_ingredient",
                where=f"capabilities[{spec.capabilities.index(cap)}]",
                evidence=f"{cap} needs {ing.name}: {ing.description}",
                hint=f"add {ing.name} or drop the {cap} tag",
            )
        )
    return out


def _vacuous(spec: TaskSpec) -> list[Finding]:
    """Checks that already hold before the agent does anything (on the state after reset).

    A ``record_absent`` that does not hold at the start asks for a removal, not a guard; one that
    holds is a guard only where the guarded_action probe can break it (else it is free weight).
    """
    env = Environment(spec)
    log = EpisodeLog()
    holds = [
        state_check(c, env.workspace)[0] if c.kind in STATE_CHECKS else episode_check(c, log)[0] for c in spec.checks
    ]
    guards = [
        c.kind in GUARD_CHECKS and (c.kind != "record_absent" or h) for c, h in zip(spec.checks, holds, strict=True)
    ]
    if all(guards):
        return [
            Finding(
                kind="vacuous_check",
                where="checks",
                location=Location.checks(),
                evidence=f"every check is a guard ({' / '.join(GUARD_CHECKS)}): doing nothing satisfies them all",
                hint="add a check on what the task must achieve",
            )
        ]
    tools = exposed(spec)
    out = []
    for i, c in enumerate(spec.checks):
        if not holds[i] or (guards[i] and (c.kind != "record_absent" or absent_breaker(spec, c, tools) is not None)):
            continue
        out.append(
            Finding(
                kind="vacuous_check",
                where=f"checks[{i}]",
                location=Location.check(i, c.id),
                evidence=f"{c.kind} check {c.id!r} already holds on the initial state",
                hint="check something the task must change, guard against something an agent can do, or drop the check",
            )
        )
    return out
