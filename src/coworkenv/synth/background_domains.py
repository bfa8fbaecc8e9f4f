"""The background records of a catalogue domain the task declares: more of its records and log entries.

Each field draws from its declared source as :mod:`coworkenv.synth.domain_records` does, but through
the :class:`~coworkenv.synth.backdrop.Backdrop`: a vocabulary value the task uses (its facet, its
status, its record's name) is never drawn, free text comes from the reserved word pool, and a key is
none the task names. A background record is so never one the task's list, search or checks select.
"""

from __future__ import annotations

from collections.abc import Callable

from coworkenv.synth.backdrop import Backdrop
from coworkenv.synth.domain_records import LETTERS
from coworkenv.synth.domains import Domain, FieldSpec, catalogue

FAKES: dict[str, Callable[[Backdrop], str]] = {
    "sentence": lambda b: b.prose(1),
    "catch_phrase": lambda b: b.phrase(3, 5),
    "company": lambda b: b.company(),
    "name": lambda b: b.person()["name"],
    "user_name": lambda b: f"{b.rng.choice(b.firsts).lower()}{b.rng.randint(10, 99)}",
    "url": lambda b: f"https://{b.company_word()}.{b.company_word()}.net/{b.company_word()}",
    "ipv4": lambda b: ".".join(str(b.rng.randint(1, 254)) for _ in range(4)),
}
"""Each fake source's background draw (a provider not listed here draws a phrase)."""


def domains(b: Backdrop) -> None:
    """Background for each catalogue domain the world declares."""
    for name in sorted(n for n in b.world.declared if n in catalogue()):
        _domain(b, catalogue()[name])


def _domain(b: Backdrop, d: Domain) -> None:
    keys = {str(r["id"]) for r in b.world.fixtures.get(d.service, {}).get(d.collection, [])}
    made: list[str] = []
    for _ in range(b.count(25, 50)):
        rec = {name: _value(b, spec) for name, spec in d.fields.items()}
        key = rec[d.key] if d.key != "id" else None
        if any(v is None for v in rec.values()) or key in keys:
            continue
        if key is not None:
            keys.add(str(key))
        made.append(str(b.add(d.service, d.collection, rec, key=None if key is None else str(key))["id"]))
    for item in b.rng.sample(made, min(len(made), b.count(6, 14))):
        note, day = b.pick(tuple(d.log.notes)), b.day(-30, -1)
        if note and day:
            entry = {d.log.link: item, "note": note, "author": b.person()["email"], "date": day}
            b.add(d.service, d.log.collection, entry)


def _value(b: Backdrop, spec: FieldSpec) -> str | int | float | None:
    """One field's background value (None where the task leaves its source nothing to draw)."""
    if spec.values is not None:
        return b.pick(tuple(spec.values))
    if spec.fake is not None:
        fake = FAKES.get(spec.fake)
        return fake(b) if fake is not None else b.phrase(2, 3)
    if spec.pattern is not None:
        text = "".join(_fill(b, c) for c in spec.pattern)
        return text if b.reserved.allows(text) else None
    if spec.days is not None:
        return b.day(*spec.days)
    if spec.range is not None:
        lo, hi = spec.range
        return b.rng.randint(int(lo), int(hi)) if spec.type == "integer" else round(b.rng.uniform(lo, hi), 2)
    return b.person()["email"]


def _fill(b: Backdrop, char: str) -> str:
    """A pattern's character: ``#`` a digit, ``?`` a letter, any other itself."""
    if char == "#":
        return str(b.rng.randint(0, 9))
    return b.rng.choice(LETTERS) if char == "?" else char
