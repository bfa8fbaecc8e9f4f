"""tool_coordination: chain several services, feeding one tool's result into the next call."""

from __future__ import annotations

from coworkenv.capabilities.base import Capability, Ingredient, called_services
from coworkenv.expr import references, root_names
from coworkenv.spec.models import CallStep, TaskSpec


def _chained(spec: TaskSpec) -> bool:
    """Some call's arguments use an earlier call's result."""
    saved = {s.save_as for s in spec.reference if isinstance(s, CallStep) and s.save_as}
    return any(root_names(ref) & saved for s in spec.reference if isinstance(s, CallStep) for ref in references(s.args))


CAPABILITY = Capability(
    name="tool_coordination",
    description="Complete a workflow that spans several services, carrying results from one tool into the next.",
    ingredients=(
        Ingredient(
            "two_services",
            "the reference calls tools of at least two services",
            lambda spec: len(called_services(spec)) >= 2,
        ),
        Ingredient("chained_call", "a call's arguments depend on an earlier call's result", _chained),
    ),
    probes=(),
)
