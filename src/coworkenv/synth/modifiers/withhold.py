"""multi_turn: withhold a fact the request needs, so the agent must ask instead of guessing."""

from __future__ import annotations

from coworkenv.synth.draft import Draft
from coworkenv.synth.modifiers.base import Modifier
from coworkenv.synth.reference import uses
from coworkenv.synth.world import World


def withhold(draft: Draft, world: World) -> bool:
    slots = [
        s
        for s, f in draft.facts.items()
        if f.withholdable and s not in draft.withheld and any(uses(step, s) for step in draft.reference)
    ]
    if not slots:
        return False
    slot = world.rng.choice(slots)
    draft.withheld.append(slot)
    draft.checks.asked_user(slot)
    return True


MODIFIER = Modifier("withhold", "multi_turn", "guess_without_asking", edit=withhold)
