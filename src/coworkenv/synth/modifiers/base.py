"""What a capability modifier is: an edit of a Draft that makes it exercise one more capability.

Generic modifiers (``edit``) work on any draft that has what they need; the others switch
on a blueprint option (``option``), because only the workflow knows which mid-episode
event matters or which figure is worth computing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from coworkenv.synth.draft import Draft
from coworkenv.synth.world import World

Edit = Callable[[Draft, World], bool]


@dataclass(frozen=True)
class Modifier:
    name: str
    capability: str
    probe: str
    """The probe that must fail once this modifier is applied."""
    option: str | None = None
    edit: Edit | None = None
    fallback: bool = False
    """With ``option`` and ``edit``: use the edit where the blueprint lacks the option."""

    def offered_by(self, options: frozenset[str]) -> bool:
        return self.option is None or self.option in options or self.fallback
