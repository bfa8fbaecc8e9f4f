"""The capability taxonomy, and which ingredients a task tagged with a capability must have."""

from __future__ import annotations

from coworkenv.capabilities import (
    dynamic_state,
    information_synthesis,
    multi_turn,
    robustness,
    safety,
    tool_coordination,
    workflow_compliance,
)
from coworkenv.capabilities.base import Capability, Ingredient
from coworkenv.spec.models import TaskSpec

CAPABILITIES: dict[str, Capability] = {
    m.CAPABILITY.name: m.CAPABILITY
    for m in (
        tool_coordination,
        multi_turn,
        dynamic_state,
        workflow_compliance,
        robustness,
        information_synthesis,
        safety,
    )
}
BASELINE_PROBES = ("do_nothing", "answer_without_acting", "claim_without_write")
"""Probes every task must fail, whatever it contains (the verifier picks the rest by content)."""


def capability(name: str) -> Capability:
    try:
        return CAPABILITIES[name]
    except KeyError:
        raise KeyError(f"unknown capability {name!r}; known: {', '.join(CAPABILITIES)}") from None


def missing_ingredients(spec: TaskSpec) -> list[tuple[str, Ingredient]]:
    """(capability, ingredient) pairs the spec is tagged with but lacks."""
    return [(cap, ing) for cap in spec.capabilities if cap in CAPABILITIES for ing in CAPABILITIES[cap].missing(spec)]
