"""robustness: recover from transient tool errors instead of giving up or reporting false success."""

from __future__ import annotations

from coworkenv.capabilities.base import Capability, Ingredient, called_tools
from coworkenv.spec.models import TaskSpec


def _fault_on_path(spec: TaskSpec) -> bool:
    """A fault is injected on a tool the reference actually calls often enough to hit it."""
    calls = called_tools(spec)
    return any(calls.count(f.tool) >= f.on_call for f in spec.faults)


CAPABILITY = Capability(
    name="robustness",
    description="Retry or work around transient tool errors (503s, timeouts) and still finish the job.",
    ingredients=(Ingredient("fault", "an injected transient error on a tool the reference calls", _fault_on_path),),
    probes=("give_up_on_error",),
)
