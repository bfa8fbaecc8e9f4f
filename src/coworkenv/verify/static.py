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

from collections.abc import Callable

from coworkenv.capabilities.registry import CAPABILITIES, missing_ingredients
from coworkenv.runtime.environment import Environment
from coworkenv.spec.models import Event, TaskSpec
from coworkenv.spec.stages import stage_view, stage_views
from coworkenv.verify.findings import Finding, Location
from coworkenv.verify.fixtures import fixture_findings
from coworkenv.verify.leaks import leak_findings
from coworkenv.verify.names import (
    check_findings,
    event_findings,
    interface_findings,
    reference_findings,
    tool_findings,
)
from coworkenv.verify.perturb import exposed
from coworkenv.verify.vacuity import vacuous_findings


def static_findings(spec: TaskSpec, initial: Callable[[], Environment] | None = None) -> list[Finding]:
    """All static problems of a spec (empty when it may go on to the dynamic checks).

    ``initial``: gives an environment of ``spec`` just reset (called only once the fixtures load), for the checks
    that read the initial state; the verifier's reference run is then played in it."""
    findings = fixture_findings(spec)
    if findings:  # nothing below can be judged on fixtures that do not load
        return findings
    findings = interface_findings(spec)
    if findings:  # no environment can be made with an interface that does not fit
        return findings
    if spec.stages:
        return _staged(spec, initial)
    tools = exposed(spec)
    findings += tool_findings(spec, tools)
    findings += check_findings(spec)
    findings += reference_findings(spec, tools)
    findings += event_findings(spec)
    findings += leak_findings(spec)
    findings += _capabilities(spec)
    if not findings:
        findings += vacuous_findings(spec, initial() if initial is not None else None)
    return findings


def _staged(spec: TaskSpec, initial: Callable[[], Environment] | None = None) -> list[Finding]:
    """Each stage judged as its own request (a later stage's changes as events that fire at its start, its
    reference standing on its own); capabilities on the whole spec; vacuity on the first stage's initial state
    (a later stage's is judged when the reference reaches it: see :mod:`coworkenv.verify.stages`), read from the
    spec's own environment where ``initial`` gives it (just reset, it is in the first stage: its fixtures, and
    only the spec's own events fired)."""
    tools = exposed(spec)
    out: list[Finding] = []
    changes: list[Event] = []
    for k, view in enumerate(stage_views(spec)):
        if k:
            stage = (spec.stages or [])[k - 1]
            if stage.mutations:
                changes.append(Event(id=f"stage:{stage.id}", after_step=0, mutations=stage.mutations))
            view = view.model_copy(update={"events": [*view.events, *changes]})  # its own first: their places hold
        found = tool_findings(view, tools) + check_findings(view) + reference_findings(view, tools)
        found += event_findings(view) + leak_findings(view)
        if k and all(c.guard for c in view.checks):
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
    return out or vacuous_findings(stage_view(spec, 0), initial() if initial is not None else None)


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
