"""Whether a spec's services load: known or declared services, declarations that do not clash with the
built-in ones, and fixture records that fit their record models. Nothing else can be judged before this holds."""

from __future__ import annotations

from coworkenv.runtime.workspace import prepared_state
from coworkenv.services.registry import SERVICES, service_class, service_tools
from coworkenv.spec.models import TaskSpec
from coworkenv.verify.findings import Finding


def fixture_findings(spec: TaskSpec) -> list[Finding]:
    """Unknown services, declarations that clash with built-in ones, and fixture records that do not fit
    their service's record model."""
    out = _declaration_findings(spec)
    declared = spec.declared_services or {}
    if all(name in SERVICES or name in declared for name in spec.services):
        try:  # validated as the episodes' workspaces will hold them, and kept for them
            prepared_state(spec.services, spec.declared_services)
            return out
        except ValueError:
            pass  # some records do not fit: each service's are judged below, for a finding per service
    for name in spec.services:
        if name not in SERVICES and name not in declared:
            out.append(
                Finding(
                    kind="unresolved_reference",
                    where=f"services.{name}",
                    evidence=f"unknown service {name!r}",
                    hint=f"known: {', '.join(SERVICES)}; or declare it under declared_services",
                )
            )
            continue
        try:
            service_class(name, declared).normalize_fixtures(spec.services[name])
        except ValueError as exc:
            out.append(
                Finding(
                    kind="schema",
                    where=f"services.{name}",
                    evidence=str(exc),
                    hint="make the fixture records fit the service's record model",
                )
            )
    return out


def _declaration_findings(spec: TaskSpec) -> list[Finding]:
    """A declared service may not take a built-in service's name, nor its tools a name the spec's
    built-in services already use (one name, one tool)."""
    out = []
    declared = spec.declared_services or {}
    builtin_tools = service_tools([s for s in spec.services if s not in declared])
    for name, decl in declared.items():
        if name in SERVICES:
            out.append(
                Finding(
                    kind="schema",
                    where=f"declared_services.{name}",
                    evidence=f"{name!r} is a built-in service",
                    hint="give the declared service another name",
                )
            )
        for tool in decl.tools:
            if tool in builtin_tools:
                out.append(
                    Finding(
                        kind="schema",
                        where=f"declared_services.{name}.tools.{tool}",
                        evidence=f"tool {tool!r} is also a tool of the built-in {builtin_tools[tool].service!r}",
                        hint="rename the declared tool",
                    )
                )
    return out
