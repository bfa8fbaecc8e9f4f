"""One draw of background records: the reserved pools, the workspace's new people and days, and the record adder.

The per-service makers (:mod:`coworkenv.synth.background_records`) draw every value through a
Backdrop, so every value they use is one the task cannot select (see :mod:`coworkenv.synth.reserved`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from coworkenv.services.registry import service_class
from coworkenv.synth.reserved import Reserved
from coworkenv.synth.world import World

Fixtures = dict[str, dict[str, list[dict[str, Any]]]]


@dataclass
class Backdrop:
    """One draw of background: the world's people and calendar, the reserved pools, and the records made so far."""

    world: World
    reserved: Reserved
    scale: float
    rng: random.Random
    records: Fixtures = field(default_factory=dict)
    words: list[str] = field(default_factory=list)
    firsts: list[str] = field(default_factory=list)
    lasts: list[str] = field(default_factory=list)
    _people: list[dict[str, str]] = field(default_factory=list)
    own_searched: bool = False
    """Whether the reference searches by the company's name (then no background colleague has its domain)."""
    _sentences: list[str] = field(default_factory=list)
    _allowed: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    _days: dict[int, str] = field(default_factory=dict)
    """Each day offset drawn so far: its ISO date, or "" where background may not use it."""
    _prefixes: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    """Each collection added to: how many records the task holds there, and its id prefix."""

    def count(self, lo: int, hi: int) -> int:
        """How many records of a kind, scaled by the workspace size."""
        return round(self.rng.randint(lo, hi) * self.scale)

    def phrase(self, lo: int = 2, hi: int = 5) -> str:
        """A few vocabulary words, the first capitalised."""
        text = " ".join(self.rng.choices(self.words, k=self.rng.randint(lo, hi)))
        return text[:1].upper() + text[1:]

    def prose(self, sentences: int = 2) -> str:
        """Sentences drawn from the backdrop's own few dozen (made once: prose is most of what background costs)."""
        if not self._sentences:
            self._sentences = [f"{self.phrase(4, 9)}." for _ in range(48)]
        return " ".join(self.rng.choices(self._sentences, k=sentences))

    def pick(self, options: tuple[str, ...]) -> str | None:
        """One of the options background may use (None when the task reserved them all)."""
        allowed = self._allowed.get(options)
        if allowed is None:
            allowed = self._allowed[options] = self.reserved.choices(options)
        return self.rng.choice(allowed) if allowed else None

    def day(self, lo: int, hi: int) -> str | None:
        """A working day ``lo``..``hi`` days from today that the task never names (None if it names them all)."""
        for _ in range(8):
            offset = self.rng.randint(lo, hi)
            iso = self._days.get(offset)
            if iso is None:
                d = self.world.today + timedelta(days=offset)
                iso = d.isoformat()
                iso = self._days[offset] = iso if d.weekday() < 5 and iso not in self.reserved.days else ""
            if iso:
                return iso
        return None

    def person(self, outside: bool = False) -> dict[str, str]:
        """A new person, named from the reserved pools: a colleague, or someone at another company."""
        if self._people and self.rng.random() < 0.6:
            return self.rng.choice(self._people)
        name = f"{self.rng.choice(self.firsts)} {self.rng.choice(self.lasts)}"
        while not self.world.claim(name):
            name = f"{self.rng.choice(self.firsts)} {self.rng.choice(self.lasts)}"
        first, last = name.lower().split(" ")  # the name pools hold letters only
        own = not outside and not self.own_searched
        domain = self.world.domain if own else f"{self.rng.choice(self.lasts).lower()}-{self.company_word()}.net"
        who = {"name": name, "email": f"{first}.{last}@{domain}"}
        if not outside:
            self._people.append(who)
        return who

    def money(self, lo: float, hi: float) -> float:
        return round(self.rng.uniform(lo, hi), 2)

    def company_word(self) -> str:
        return self.rng.choice(self.words).lower()

    def company(self) -> str:
        """A new company's name, unique in the world."""
        name = f"{self.rng.choice(self.lasts)} {self.phrase(1, 1)}"
        while not self.world.claim(name):
            name = f"{self.rng.choice(self.lasts)} {self.phrase(1, 1)}"
        return name

    def add(self, service: str, collection: str, record: dict[str, Any], key: str | None = None) -> dict[str, Any]:
        """Add a record with the next id after the task's (and the background's) records, or with ``key``
        for a collection that names its records by a key of their own."""
        known = self._prefixes.get((service, collection))
        if known is None:
            task_rows = len(self.world.fixtures.get(service, {}).get(collection, []))
            prefix = service_class(service, self.world.declared).id_prefix.get(collection, collection[:3])
            known = self._prefixes[(service, collection)] = (task_rows, prefix)
        rows = self.records.setdefault(service, {}).setdefault(collection, [])
        rec = {"id": key or f"{known[1]}-{known[0] + len(rows) + 1}", **record}
        rows.append(rec)
        return rec
