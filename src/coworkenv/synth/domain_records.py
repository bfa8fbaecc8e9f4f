"""Records of a catalogue domain, drawn from the World's seeded Faker and random generator.

Each field draws from its declared source (:class:`~coworkenv.synth.domains.FieldSpec`), so the
same seed gives the same records. A domain whose key is not ``id`` (an asset tag, a SKU) gets
key values from the key field's pattern, unique in the collection; the record id is the key.
"""

from __future__ import annotations

from collections.abc import Callable

from coworkenv.synth.domains import Domain, FieldSpec, declaration
from coworkenv.synth.look_alikes import LIMIT
from coworkenv.synth.steps.base import Record
from coworkenv.synth.world import World

LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"
"""Letters of patterned values (no I or O, which read as digits)."""
SPARED = LIMIT + 1
"""Unrelated records in a status other than the damaging one: one more than a report check names as look-alikes,
so a careless write always finds a record that no check names and that it would change."""


def value(world: World, spec: FieldSpec) -> str | int | float:
    """One value of a field, from its source."""
    rng = world.rng
    if spec.values is not None:
        return rng.choice(spec.values)
    if spec.fake is not None:
        return str(getattr(world.fake, spec.fake)())  # one of the fixed providers Fake lists
    if spec.pattern is not None:
        return str(world.fake.bothify(spec.pattern, letters=LETTERS))
    if spec.days is not None:
        return world.day(rng.randint(*spec.days))
    if spec.range is not None:
        lo, hi = spec.range
        return rng.randint(int(lo), int(hi)) if spec.type == "integer" else round(rng.uniform(lo, hi), 2)
    return world.person().email  # a colleague field


def plant(world: World, domain: Domain) -> None:
    """Declare the domain's service in the world, with its two collections (empty so far)."""
    world.declared[domain.service] = declaration(domain.service)
    world.ensure(domain.service, domain.collection, domain.log.collection)


def add(world: World, domain: Domain, **fixed: object) -> Record:
    """A new record of the main collection: ``fixed`` fields as given, every other field drawn."""
    rec = {name: fixed[name] if name in fixed else value(world, spec) for name, spec in domain.fields.items()}
    if domain.key == "id":
        return world.add(domain.service, domain.collection, rec)
    taken = {r["id"] for r in world.fixtures[domain.service][domain.collection]}
    while rec[domain.key] in taken:
        rec[domain.key] = value(world, domain.fields[domain.key])
    return world.add(domain.service, domain.collection, {"id": rec[domain.key], **rec})


def other(world: World, values: list[str], *not_these: object) -> str:
    """A value of a vocabulary that is none of ``not_these``."""
    return str(world.rng.choice([v for v in values if v not in not_these]))


def log_entry(world: World, domain: Domain, item: Record) -> Record:
    """An earlier log entry about ``item`` by a colleague."""
    author = world.person().email
    note = world.rng.choice(domain.log.notes)
    entry = {domain.log.link: item["id"], "note": note, "author": author, "date": world.day(-world.rng.randint(1, 30))}
    return world.add(domain.service, domain.log.collection, entry)


def background(world: World, domain: Domain, n: int, clashes: Callable[[Record], bool]) -> list[Record]:
    """``SPARED + n`` unrelated records, the first ``SPARED`` of them out of the damaging status (one that
    ``clashes`` with the target's description moves to another facet value), and a log entry about two of them."""
    made = []
    for i in range(SPARED + n):
        rec = {name: value(world, spec) for name, spec in domain.fields.items()}
        if i < SPARED and rec[domain.status] == domain.damage:
            rec[domain.status] = other(world, domain.statuses, domain.damage)
        if clashes(rec):
            rec[domain.facet] = other(world, domain.facets, rec[domain.facet])
        made.append(add(world, domain, **rec))
    for item in world.rng.sample(made, min(2, len(made))):
        log_entry(world, domain, item)
    return made
