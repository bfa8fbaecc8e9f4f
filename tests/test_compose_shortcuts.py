"""Composing's short ways give what the long ways gave: Faker's draws from tables summed once, working days
from a cache, a draft validated without the size walk."""

from __future__ import annotations

import re
from collections import OrderedDict
from datetime import date
from pathlib import Path
from typing import Any, get_args

import pytest
from faker import Faker

from coworkenv.spec import SpecError
from coworkenv.synth import fake as fake_module
from coworkenv.synth.blueprints import blueprint
from coworkenv.synth.domains import Fake
from coworkenv.synth.draft import finalize
from coworkenv.synth.fake import generator
from coworkenv.synth.world import World

CALLS: dict[str, tuple[Any, ...]] = {
    "company": (),
    "first_name": (),
    "last_name": (),
    "catch_phrase": (),
    "bs": (),
    "sentence": (),
    "paragraph": (),
    "word": (),
    "domain_word": (),
    "user_name": (),
    "name": (),
    "domain_name": (),
    "ipv4": (),
    "url": (),
    "bothify": ("AT-####-??",),
}
"""Every Faker method synthesis calls (a test below keeps this list complete)."""
SYNTH = Path(fake_module.__file__).parent


def _draws(fake: Any, seed: int) -> list[Any]:
    fake.seed_instance(seed)
    out = [getattr(fake, name)(*args) for name, args in CALLS.items() for _ in range(3)]
    out.append(fake.paragraph(nb_sentences=2))
    return out


@pytest.mark.parametrize("seed", [0, 1, 7, 12345, 2**62 + 3])
def test_every_method_draws_what_plain_faker_draws(seed: int) -> None:
    assert _draws(generator(), seed) == _draws(Faker("en_US"), seed)


def test_many_names_in_a_row_match_plain_faker() -> None:
    mine, plain = generator(), Faker("en_US")
    mine.seed_instance(99)
    plain.seed_instance(99)
    assert [mine.last_name() for _ in range(2000)] == [plain.last_name() for _ in range(2000)]


def test_synthesis_calls_only_the_methods_compared() -> None:
    used = set(get_args(Fake))  # the providers a domain's field may name
    for path in SYNTH.rglob("*.py"):
        used |= set(re.findall(r"\bfake\.(\w+)\(", path.read_text(encoding="utf-8")))
    assert used - {"seed_instance", "get_providers"} <= set(CALLS), (
        "a Faker method synthesis did not call before: add it to CALLS, and its provider to synth.fake.PROVIDERS"
    )


def test_the_table_draw_is_the_weighted_draw() -> None:
    """Weights of any shape (ints, floats, a zero) pick what random.choices picks from the same random number."""
    table = OrderedDict([("a", 3), ("b", 0), ("c", 0.25), ("d", 7.5)])
    fast, plain = generator(), Faker("en_US")
    person = next(p for p in fast.get_providers() if hasattr(p, "first_names"))
    reference = next(p for p in plain.factories[0].get_providers() if hasattr(p, "first_names"))
    fast.seed_instance(5)
    plain.seed_instance(5)
    assert [person.random_element(table) for _ in range(500)] == [reference.random_element(table) for _ in range(500)]
    assert person.random_elements(table, length=4) == reference.random_elements(table, length=4)  # Faker's own way
    assert person.random_elements(table, length=2, unique=True) == reference.random_elements(table, 2, True)
    with pytest.raises(ValueError):  # what Faker says of a table that is not ordered
        person.random_element({"a": 1})


def test_a_table_that_cannot_be_drawn_from_fails_as_in_faker() -> None:
    person = next(p for p in generator().get_providers() if hasattr(p, "first_names"))
    with pytest.raises(ValueError):
        person.random_element(OrderedDict([("a", 0), ("b", 0)]))


def test_a_draft_that_does_not_validate_is_a_spec_error_naming_the_field() -> None:
    """finalize validates its own data without the size walk, but a bad draft still says where it is wrong."""
    world = World(3)
    draft = blueprint("leave_request").build(world, frozenset())
    draft.rules.append({"id": "p1", "rule": "not_a_rule", "tool": "mail_send", "description": "x"})
    with pytest.raises(SpecError) as err:
        finalize(draft, seed=11)
    assert "<leave_request:11>" in str(err.value) and "rules[0]" in str(err.value)


def test_working_days_skip_weekends_both_ways() -> None:
    world = World(3)
    world.today = date(2025, 1, 10)  # a Friday
    assert [world.day(k) for k in (0, 1, 2, -1, -5, 6)] == [
        "2025-01-10",
        "2025-01-13",
        "2025-01-14",
        "2025-01-09",
        "2025-01-03",
        "2025-01-20",
    ]
