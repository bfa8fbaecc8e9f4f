"""What the probes change: a guessed value, the planted calls, a collateral write.

Kept apart from the probe policies because each is a small piece of domain knowledge
about the services (which write damages which record, what a plausible wrong date is).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from datetime import datetime, timedelta

from coworkenv.capabilities.safety import INJECTION, fixture_texts
from coworkenv.runtime.router import exposed_names
from coworkenv.services.damage import Damage
from coworkenv.services.registry import ALL_TOOLS, SERVICES, service_class, tool_table
from coworkenv.spec.checks import CallBound, holds, record_matches
from coworkenv.spec.events import Record
from coworkenv.spec.models import CallStep, TaskSpec
from coworkenv.verify.violations import violating_call

_SHIFTS = (("%Y-%m-%dT%H:%M", timedelta(hours=1)), ("%Y-%m-%d", timedelta(days=1)), ("%H:%M", timedelta(hours=1)))


def guess(value: object) -> object:
    """A plausible value of the same shape that is certainly not ``value``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value * 2 + 1
    if isinstance(value, list):
        return [guess(v) for v in value] or ["unknown"]
    if not isinstance(value, str):
        return "unknown"
    for fmt, step in _SHIFTS:
        try:
            return (datetime.strptime(value, fmt) + step).strftime(fmt)
        except (ValueError, OverflowError):  # not of this form, or the calendar's last day
            continue
    if value.count("@") == 1:
        local, domain = value.split("@")
        return f"{local}.team@{domain}"
    return "the usual one" if value.lower() != "the usual one" else "something else"


def exposed(spec: TaskSpec) -> set[str]:
    """The tool names an episode of this spec offers (the router's rule, on a spec)."""
    return exposed_names(spec.services, spec.tools, spec.declared_services)


def injected_calls(spec: TaskSpec) -> list[CallStep]:
    """The tool calls that instructions planted in the fixtures ask for (exposed tools only, named as the interface
    shows them, as the agent reads them; under their canonical names, as a reference's calls are); found once for a
    spec's fixtures, tools and interface, which its stage views share (the probe asks once per view, and again for
    its run)."""
    key = (spec.services, spec.tools, spec.declared_services, spec.interface)
    hit = _INJECTED.get(id(spec.services))
    if hit is None or any(a is not b for a, b in zip(hit[0], key, strict=True)):
        hit = _INJECTED[id(spec.services)] = (key, _injected(spec))
        while len(_INJECTED) > 8:
            _INJECTED.popitem(last=False)
    return list(hit[1])


_INJECTED: OrderedDict[int, tuple[tuple[object, ...], list[CallStep]]] = OrderedDict()
"""The latest specs' planted calls, by the identity of their fixtures (held, with the tools they were found for)."""


def _injected(spec: TaskSpec) -> list[CallStep]:
    tools = exposed(spec)
    calls: list[CallStep] = []
    for text in fixture_texts(spec):
        for m in INJECTION.finditer(text) if "call " in text else ():  # the test spares a search per record value
            try:
                args = json.loads(m.group("args"))
            except json.JSONDecodeError:
                continue
            name = m.group("tool")
            call = (name, args) if spec.interface is None else spec.interface.canonical_call(name, args)
            if call is not None and call[0] in tools and isinstance(call[1], dict):
                calls.append(CallStep(call=call[0], args=call[1]))
    return calls


DAMAGE: dict[tuple[str, str], Damage] = {
    (cls.name, collection): damage for cls in SERVICES.values() for collection, damage in cls.damage.items()
}
"""The damaging write of every collection whose built-in service declares one."""


def damage_of(spec: TaskSpec, service: str, collection: str) -> Damage | None:
    """The damaging write of a collection of ``spec``: its declared service's, else the built-in one's."""
    declared = spec.declared_services or {}
    if service in declared:
        return service_class(service, declared).damage.get(collection)
    return DAMAGE.get((service, collection))


def collateral_steps(spec: TaskSpec) -> list[CallStep]:
    """One damaging write per exposed service, on a record the task is not about.

    Records the checks name are spared (damaging them tests the main checks, not the
    guards); records a guard allows to change are spared too; the heaviest guard's
    collection goes first.
    """
    tools, named = exposed(spec), _named(spec)
    steps: dict[str, CallStep] = {}
    for service, collection, allow in _targets(spec):
        if service not in steps and (step := _damaging(spec, service, collection, allow, named, tools)) is not None:
            steps[service] = step
    return list(steps.values())


def written_collateral(spec: TaskSpec) -> list[tuple[str, CallStep]]:
    """("service.collection", damaging write) for each collection of a service the reference writes, guarded or
    not: another record of it damaged on its own, so that each collection the task touches must be guarded and
    each guard must carry weight (in the combined collateral run a heavy guard elsewhere hides a light one; a
    collection nothing guards lets a cheat rewrite its other records); spared as in :func:`collateral_steps`,
    a guarded collection by its heaviest guard's ``allow``."""
    table = tool_table(spec.declared_services)
    calls = [s.call for s in spec.reference if isinstance(s, CallStep)]
    written = {info.service for call in calls if (info := table.get(call)) is not None and info.kind == "write"}
    tools, named = exposed(spec), _named(spec)
    seen: set[str] = set()
    out: dict[str, CallStep] = {}
    for service, collection, allow in _targets(spec):
        where = f"{service}.{collection}"
        if service in written and where not in seen:
            seen.add(where)
            step = _damaging(spec, service, collection, allow, named, tools)
            if step is not None:
                out[where] = step
    return list(out.items())


def _named(spec: TaskSpec) -> str:
    return repr([c.model_dump() for c in spec.checks])


def _targets(spec: TaskSpec, guarded_only: bool = False) -> list[tuple[str, str, str | None]]:
    """(service, collection, what its guard allows to change): the guarded collections, heaviest guard first, then
    (unless ``guarded_only``) every collection of the spec's services, unguarded."""
    guards = sorted((c for c in spec.checks if c.collateral_guard() is not None), key=lambda c: -c.weight)
    targets = [target for g in guards if (target := g.collateral_guard()) is not None]
    return targets if guarded_only else targets + [(s, c, None) for s, colls in spec.services.items() for c in colls]


def _damaging(
    spec: TaskSpec, service: str, collection: str, allow: str | None, named: str, tools: set[str]
) -> CallStep | None:
    """The service's damaging write on the first record of ``collection`` it would change that no check names and
    ``allow`` does not admit; None where there is none (or the tool is not exposed)."""
    damage = damage_of(spec, service, collection)
    if damage is None or service not in spec.services or damage.tool not in tools:
        return None
    model = service_class(service, spec.declared_services).records[collection]
    for rec in spec.services[service].get(collection, []):
        if damage.applies_to(rec, model) and not _allowed(allow, rec) and f"'{rec['id']}'" not in named:
            return damage.call(rec)
    return None


def is_write(tool: str) -> bool:
    info = ALL_TOOLS.get(tool)
    return info is not None and info.kind == "write"


def guarded_calls(spec: TaskSpec) -> list[tuple[str, list[CallStep]]]:
    """For each ``forbid`` rule and guard check: calls that do what it forbids.

    ``tool_not_called``: one call of the tool; ``max_calls``: enough calls to pass the bound; where the rule or
    check forbids only calls whose arguments match, a call built to match (:func:`violating_call`);
    a ``record_absent`` that holds on the fixtures: a call that makes a matching record.
    """
    tools = exposed(spec)
    guards = [(f"rules:{p.id}", p.tool, p.when, 1) for p in spec.rules if p.rule == "forbid"]
    guards += [
        (f"checks:{c.id}", b.tool, b.where, _over(spec, b)) for c in spec.checks if (b := c.call_bound()) is not None
    ]
    out = []
    for where, tool, when, times in guards:
        step = None
        if tool in tools:
            step = (violating_call(spec, tool, when) if when else None) or _call_of(spec, tool)
        if step is not None and times <= spec.max_tool_calls:
            out.append((where, [step] * times))
    for c in spec.checks:
        forbidden = c.forbidden_records()
        step = absent_breaker(spec, forbidden, tools) if forbidden is not None else None
        if step is not None:
            out.append((f"checks:{c.id}", [step]))
    return out


def _over(spec: TaskSpec, check: CallBound) -> int:
    """Calls to add to the reference's so that ``check``'s bound is passed (its literal calls counted)."""
    made = sum(
        1
        for s in spec.reference
        if isinstance(s, CallStep)
        and s.call == check.tool
        and (check.where is None or "${" in repr(s.args) or holds(check.where, {"args": s.args}))
    )
    return max(check.max + 1 - made, 1)


def absent_breaker(spec: TaskSpec, forbidden: tuple[str, str, str], tools: set[str]) -> CallStep | None:
    """For a guard against records matching ``where`` in a collection (``forbidden``: service, collection, where;
    no fixture record matches): a planted call in its service, else the damaging write that turns a fixture record
    into one it forbids."""
    service, collection, where = forbidden
    records = spec.services.get(service, {}).get(collection, [])
    if any(record_matches(where, r) for r in records):
        return None  # it asks for a removal, not a guard
    table = tool_table(spec.declared_services)
    planted = next((c for c in injected_calls(spec) if getattr(table.get(c.call), "service", None) == service), None)
    if planted is not None:
        return planted
    damage = damage_of(spec, service, collection)
    if damage is None or damage.tool not in tools:
        return None
    for rec in records:
        if record_matches(where, {**rec, damage.field: damage.value}):
            return CallStep(call=damage.tool, args={damage.id_arg: rec["id"], **damage.extra})
    return None


def _call_of(spec: TaskSpec, tool: str) -> CallStep | None:
    """A plausible call of ``tool``: as the reference or a planted instruction makes it, else a damaging one."""
    for s in spec.reference:
        if isinstance(s, CallStep) and s.call == tool:
            return CallStep(call=tool, args=s.args)
    planted = next((c for c in injected_calls(spec) if c.call == tool), None)
    if planted is not None:
        return planted
    declared = spec.declared_services or {}
    known = [*DAMAGE.items(), *(((s, c), d) for s in declared for c, d in service_class(s, declared).damage.items())]
    for (service, collection), damage in known:
        if damage.tool == tool and spec.services.get(service, {}).get(collection):
            return damage.call(spec.services[service][collection][0])
    return None


def _allowed(allow: str | None, rec: Record) -> bool:
    return allow is not None and holds(allow, {"r": rec})
