"""What a blueprint is: a workplace workflow that builds a complete Draft from a seeded World.

A blueprint knows its workflow well enough to offer variants the generic modifiers cannot
make on their own: ``dynamic`` (a mid-episode event that changes the facts the task
depends on, and a reference that re-reads them), ``aggregate`` (a computed figure the
answer must state), ``follow_up`` (a natural second request). ``options`` lists the ones
it offers; ``build`` receives those the composer chose.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from coworkenv.synth.draft import Draft
from coworkenv.synth.world import World

OPTIONS = ("dynamic", "aggregate", "follow_up")


class Blueprint(ABC):
    name: ClassVar[str]
    summary: ClassVar[str]
    capabilities: ClassVar[tuple[str, ...]] = ("tool_coordination",)
    options: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    def build(self, world: World, options: frozenset[str]) -> Draft:
        """The complete draft: fixtures with distractors, phrasings, facts, reference and checks."""
