"""Composed workflows over the catalogue's domains: one family per way of finding the record.

A family draws a domain from the catalogue by the world's seed, declares it in the world, and
chains a locate step, an optional read, one to three writes (status, assignee, a linked log
entry), an optional notice by chat or mail and the report; a workflow always crosses services
(a notice is added when its writes stayed inside the domain). ``DomainWorkflow`` is a
Blueprint, so the composer, modifiers, verifier and repair loop treat it like any other.
"""

from __future__ import annotations

import random
from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.chains import phrase
from coworkenv.synth.domain_records import plant
from coworkenv.synth.domains import catalogue
from coworkenv.synth.draft import Draft
from coworkenv.synth.steps.base import Chain, Step
from coworkenv.synth.steps.domain import ACT_ITEM, LOCATE_ITEM, NOTIFY_ITEM, READ_ITEM, REPORT_ITEM, domain_of
from coworkenv.synth.world import World

PREFIX = "domain:"


def build_domain_chain(world: World, locate: Step, domain: str) -> tuple[Chain, list[Step]]:
    """Declare ``domain`` in the world and draw a chain that starts with ``locate``; the chain and its steps."""
    plant(world, catalogue()[domain])
    rng = random.Random(world.rng.random())
    chain = Chain(world)
    steps = [locate]
    if rng.random() < 0.5:
        steps.append(READ_ITEM[0])
    steps += rng.sample(ACT_ITEM, rng.randint(1, len(ACT_ITEM)))
    notify = rng.choice(NOTIFY_ITEM)
    if rng.random() < 0.5 or not any(s.name == "act_item_assign" for s in steps):
        steps.append(notify)  # a workflow crosses services: the writes alone stay in the domain unless one reassigns
    for step in steps:
        step.apply(chain)
    REPORT_ITEM.apply(chain)
    return chain, [*steps, REPORT_ITEM]


class DomainWorkflow(Blueprint):
    """A family of composed workflows over a catalogue domain, starting with one locate step."""

    capabilities: ClassVar[tuple[str, ...]] = ("tool_coordination",)

    def __init__(self, locate: Step, domains: tuple[str, ...] = ()) -> None:
        """``domains``: the catalogue domains it draws from (default: all of them)."""
        self.locate = locate
        self.domains = domains
        self.name = PREFIX + locate.name.removeprefix("locate_item_")  # type: ignore[misc]
        self.summary = f"a workflow over a catalogue domain, finding the record {self.name.removeprefix(PREFIX)}"  # type: ignore[misc]

    def build(self, world: World, options: frozenset[str]) -> Draft:
        domain = world.rng.choice(self.domains or sorted(catalogue()))
        chain, steps = build_domain_chain(world, self.locate, domain)
        rng = random.Random(world.rng.random())
        openings = list(dict.fromkeys(phrase(rng, chain.clauses) for _ in range(3)))
        d = domain_of(chain)
        title = f"{d.title}: {chain.need('item').record[d.name]}"
        draft = chain.draft(self.name, title, openings)
        draft.description = "composed: " + " > ".join(s.name for s in steps)
        return draft


DOMAIN_WORKFLOWS: dict[str, DomainWorkflow] = {w.name: w for w in map(DomainWorkflow, LOCATE_ITEM)}
"""The domain families by name (``domain:by_attribute``, ``domain:by_name``, ``domain:by_date``)."""
