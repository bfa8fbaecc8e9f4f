"""Which environments a server, a Gymnasium env or ``coworkenv.make`` can open, by spec id.

Sources are the ones rollouts read (a bank folder, a folder of spec files, one spec file),
loaded through :func:`coworkenv.bank.sources.load_specs`, so ids and splits agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from coworkenv.bank.sources import load_specs
from coworkenv.spec.models import TaskSpec


class Catalog:
    """An immutable id → spec map. Specs are never mutated by an episode, so sessions may share them."""

    def __init__(self, specs: Iterable[TaskSpec]) -> None:
        self.specs: dict[str, TaskSpec] = {}
        for spec in specs:
            if spec.id in self.specs:
                raise ValueError(f"duplicate environment id {spec.id!r}")
            self.specs[spec.id] = spec

    @classmethod
    def load(cls, sources: Iterable[str | Path], split: str | None = None) -> Catalog:
        specs: list[TaskSpec] = []
        for source in sources:
            specs.extend(load_specs(source, split=split))
        return cls(specs)

    def __len__(self) -> int:
        return len(self.specs)

    def ids(self) -> list[str]:
        return sorted(self.specs)

    def get(self, env_id: str) -> TaskSpec:
        try:
            return self.specs[env_id]
        except KeyError:
            raise KeyError(f"unknown environment {env_id!r} ({len(self.specs)} available)") from None

    def summary(self) -> list[dict[str, object]]:
        """What ``GET /environments`` lists: enough to choose, nothing the agent should not see."""
        return [
            {
                "id": s.id,
                "title": s.title,
                "capabilities": list(s.capabilities),
                "difficulty": s.difficulty,
                "multi_turn": s.is_multi_turn,
                "blueprint": s.provenance.blueprint,
            }
            for s in (self.specs[i] for i in self.ids())
        ]
