"""What an event's filter and templates, and a context reply's condition, may read.

An ``on_tool`` event reads the triggering call's arguments (``args``) and nothing else, and
only arguments its tool takes: ``${args.thread}`` on a tool whose argument is ``thread_id``
resolves on no call, so the event would never fire — a typo that must fail admission with
its place named, not quietly turn a dynamic task into a static one. A context reply reads
``state`` (the workspace) and ``calls`` (the calls made), and must not state a hidden fact:
the agent would get it without asking.
"""

from __future__ import annotations

import re

from coworkenv.expr import check_syntax, references, root_names
from coworkenv.services.registry import tool_table
from coworkenv.spec.models import TaskSpec
from coworkenv.values import clock, mentioned, mentions
from coworkenv.verify.findings import Finding, Location

_ARG = re.compile(r"\bargs\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)")


def _read(src: str, where: str, allowed: set[str]) -> list[Finding]:
    """A syntax error, or a root name outside ``allowed``, in one expression."""
    err = check_syntax(src)
    if err:
        return [Finding(kind="schema", where=where, evidence=err, hint="fix the expression")]
    bad = sorted(root_names(src) - allowed)
    if bad:
        return [
            Finding(
                kind="unresolved_reference",
                where=where,
                evidence=f"reads {bad[0]!r}; it can read only {', '.join(sorted(allowed))}",
                hint="refer to what is there when it is evaluated",
            )
        ]
    return []


def event_reads(spec: TaskSpec, tools: set[str]) -> list[Finding]:
    """Problems in the ``when`` filters and ``${args...}`` templates of on_tool events."""
    out: list[Finding] = []
    table = tool_table(spec.declared_services)
    for i, event in enumerate(spec.events):
        exprs = [(f"events[{i}].when", event.when)] if event.when else []
        exprs += [(f"events[{i}].notify", r) for r in references(event.notify)]
        exprs += [
            (f"events[{i}].mutations[{j}]", r)
            for j, m in enumerate(event.mutations)
            for r in references(m.model_dump())
        ]
        info = table.get(event.on_tool or "")
        params = set(info.schema()["function"]["parameters"]["properties"]) if info and event.on_tool in tools else None
        for where, src in exprs:
            found = _read(src, where, {"args"})
            if not found and params is not None:
                found = [
                    Finding(
                        kind="unresolved_reference",
                        where=where,
                        evidence=f"reads args.{name}, which {event.on_tool} has no argument for",
                        hint=f"arguments of {event.on_tool}: {', '.join(sorted(params))}",
                    )
                    for name in dict.fromkeys(_ARG.findall(src))
                    if name not in params
                ]
            out += found
    return out


def context_reads(spec: TaskSpec) -> list[Finding]:
    """Context replies whose condition does not parse or reads something else, or that state a hidden fact."""
    out: list[Finding] = []
    today = clock(spec.context)
    for i, reply in enumerate(spec.user.context_replies or []):
        where = f"user.context_replies[{i}]"
        out += _read(reply.when, f"{where}.when", {"state", "calls"})
        keys = mentions(reply.reply, today)
        for fact in spec.user.hidden_facts:
            values = fact.value if isinstance(fact.value, list) else [fact.value]
            if any(mentioned(v, reply.reply, keys) for v in values):
                out.append(
                    Finding(
                        kind="leaked_fact",
                        where=f"{where}.reply",
                        location=Location.hidden_fact(fact.slot),
                        evidence=f"the reply states hidden fact {fact.slot!r}, so an agent gets it without asking",
                        hint="answer with what the agent did, not with a hidden fact",
                    )
                )
    return out
