"""Capability modifiers, composable onto blueprints; applied in the order of MODIFIERS."""

from coworkenv.synth.modifiers import aggregate, event, faults, follow_up, injection, policy, withhold
from coworkenv.synth.modifiers.base import Modifier

MODIFIERS: dict[str, Modifier] = {
    m.MODIFIER.name: m.MODIFIER for m in (event, aggregate, withhold, policy, faults, injection, follow_up)
}

__all__ = ["MODIFIERS", "Modifier"]
