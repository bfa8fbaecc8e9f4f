"""dynamic_state: notice and react to a change of the workspace made during the episode."""

from __future__ import annotations

from coworkenv.capabilities.base import Capability, Ingredient

CAPABILITY = Capability(
    name="dynamic_state",
    description=(
        "React to the workspace changing mid-episode (a colleague reassigns, a slot gets booked, a new "
        "message arrives): re-read the state and act on the new facts, not on a stale plan."
    ),
    ingredients=(
        Ingredient(
            "event",
            "a scheduled event, or a change between stages, that alters the workspace",
            lambda spec: bool(spec.events) or any(s.mutations for s in spec.stages or []),
        ),
    ),
    probes=("ignore_event", "ignore_change"),
)
