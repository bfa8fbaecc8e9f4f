"""robustness: the key write fails transiently on its first call, and the agent must retry."""

from __future__ import annotations

from coworkenv.synth.draft import Draft
from coworkenv.synth.modifiers.base import Modifier
from coworkenv.synth.world import World

MESSAGES = (
    "503 Service Unavailable: temporary failure, please retry",
    "504 Gateway Timeout: the request timed out, retry in a moment",
    "429 Too Many Requests: temporarily rate limited, retry shortly",
)


def fail_once(draft: Draft, world: World) -> bool:
    main = draft.main_write()
    if main is None or any(f["tool"] == main["call"] for f in draft.faults):
        return False
    draft.faults.append({"tool": main["call"], "on_call": 1, "message": world.rng.choice(MESSAGES)})
    return True


MODIFIER = Modifier("faults", "robustness", "give_up_on_error", edit=fail_once)
