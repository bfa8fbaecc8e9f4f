"""The clarification check: the agent asked the user for a fact instead of guessing it."""

from __future__ import annotations

from typing import ClassVar, Literal

from coworkenv.spec.checks.base import EpisodeCheck, EpisodeLog, Names, Scope


class AskedUser(EpisodeCheck):
    """The agent asked the user about the hidden fact ``slot`` (instead of guessing)."""

    kind: Literal["asked_user"] = "asked_user"
    slot: str
    reads: ClassVar[Scope] = "user"

    def names(self) -> Names:
        return Names(slot=self.slot)

    def judge(self, log: EpisodeLog) -> tuple[bool, int | None, str]:
        step = next((r.step for r in log.replies if r.kind == "fact" and self.slot in r.slots), None)
        return step is not None, step, "asked" if step is not None else "never asked"
