"""What a capability is made of: a meaning, the ingredients a task needs, and its negative probes.

A task tagged with a capability must contain every ingredient (else it cannot exercise the
skill), and every probe named here must fail on it (else its grader cannot tell the skill
from its absence). The verifier checks the ingredients by tag, but runs probes by what a
spec contains, tagged or not: the ingredients are what makes these probes apply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from coworkenv.spec.models import CallStep, TaskSpec
from coworkenv.spec.stages import stage_views


@dataclass(frozen=True)
class Ingredient:
    """Something a task must contain to exercise a capability, with a test on the spec."""

    name: str
    description: str
    present: Callable[[TaskSpec], bool]


@dataclass(frozen=True)
class Capability:
    name: str
    description: str
    ingredients: tuple[Ingredient, ...]
    probes: tuple[str, ...]

    def missing(self, spec: TaskSpec) -> list[Ingredient]:
        """The ingredients this spec lacks; a multi-stage spec has one when the whole spec or any stage has it."""
        views = [spec, *stage_views(spec)] if spec.stages else [spec]
        return [i for i in self.ingredients if not any(i.present(v) for v in views)]


def called_tools(spec: TaskSpec) -> list[str]:
    """The tools the reference solution calls, in order."""
    return [s.call for s in spec.reference if isinstance(s, CallStep)]


def called_services(spec: TaskSpec) -> set[str]:
    return {t.split("_", 1)[0] for t in called_tools(spec)}
