"""The held-out split tests new workflows, not unseen tools: every tool a held-out blueprint's
reference calls is called by some training blueprint's reference."""

from __future__ import annotations

from coworkenv.spec.models import CallStep, TaskSpec
from coworkenv.synth.blueprints import BLUEPRINTS, HELD_OUT
from coworkenv.synth.composer import compose, plan


def _called(spec: TaskSpec) -> set[str]:
    references = [spec.reference, *(stage.reference for stage in spec.stages or [])]
    return {step.call for reference in references for step in reference if isinstance(step, CallStep)}


def test_every_tool_a_heldout_workflow_calls_is_called_in_training() -> None:
    calls: dict[str, set[str]] = {name: set() for name in BLUEPRINTS}
    for index in range(len(BLUEPRINTS) * 6):  # six recipes per blueprint: modifiers add calls too
        recipe = plan(0, index)
        calls[recipe.blueprint] |= _called(compose(recipe))
    training = set().union(*(tools for name, tools in calls.items() if name not in HELD_OUT))
    unseen = {name: sorted(calls[name] - training) for name in HELD_OUT if calls[name] - training}
    assert not unseen, f"held-out blueprints call tools no training blueprint calls: {unseen}"
