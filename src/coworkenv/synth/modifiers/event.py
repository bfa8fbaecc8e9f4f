"""dynamic_state: a mid-episode event changes the facts the task depends on.

Only the workflow knows which change matters, so this modifier switches on the
blueprint's ``dynamic`` option: the blueprint adds the event and a reference that
re-reads the state after it.
"""

from __future__ import annotations

from coworkenv.synth.modifiers.base import Modifier

MODIFIER = Modifier("event", "dynamic_state", "ignore_event", option="dynamic")
