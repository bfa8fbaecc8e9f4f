"""The workflow blueprints, one module each, and the default held-out set.

HELD_OUT names the blueprints whose environments form the held-out evaluation split
(unseen workflows). They are chosen to cover different services and all offer the
generic multi_turn modifiers, like every blueprint, so both splits exercise multi_turn.
"""

from __future__ import annotations

from coworkenv.synth.blueprints import expense_report, meeting_scheduling
from coworkenv.synth.blueprints.base import OPTIONS, Blueprint

BLUEPRINTS: dict[str, Blueprint] = {
    cls.name: cls()
    for cls in (
        meeting_scheduling.MeetingScheduling,
        expense_report.ExpenseReport,
    )
}
HELD_OUT: tuple[str, ...] = ()


def blueprint(name: str) -> Blueprint:
    try:
        return BLUEPRINTS[name]
    except KeyError:
        raise KeyError(f"unknown blueprint {name!r}; known: {', '.join(BLUEPRINTS)}") from None


__all__ = ["BLUEPRINTS", "HELD_OUT", "OPTIONS", "Blueprint", "blueprint"]
