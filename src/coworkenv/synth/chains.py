"""Composed workflows: a seeded grammar chains typed steps into a Draft.

A chain starts with a locate step (its *family*: which entity the workflow is about and
how it is found: a CRM account, a vendor's invoice, a colleague's expense or leave
request, a shift, a directory entry, a document, a drive file, a meeting) or with an act
that needs nothing bound (file my expense, book my leave, add a contact, write a
handover, set up a folder). It then draws reads, derives, acts and a notify whose inputs
earlier steps produced, and ends with a report to the user. Chains run 2 to 8 steps (an
act and the report always among them; two steps only when the first is an act) and
most cross services. The opening is phrased from the chain: one clause per step, several
templates each, joined into sentences. ``ComposedWorkflow`` wraps a family as a
Blueprint, so the composer, modifiers, verifier and repair loop treat it like any other;
``HELD_OUT_COMPOSED`` names the families of the grammar-level held-out split.
"""

from __future__ import annotations

import random
import re
from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft
from coworkenv.synth.steps import ACT, DERIVE, LOCATE, NOTIFY, READ, REPORT, START, STEPS, Chain, Step
from coworkenv.synth.world import World

MAX_STEPS = 8
LEADS = ("", "Please ", "Could you ", "Can you ", "I need you to ")
USES_DATE = frozenset({"act_create_ticket", "act_update_ticket"})
NEXT = ("Then", "After that,", "Once that's done,", "Next,")


def _pick(rng: random.Random, chain: Chain, pool: tuple[Step, ...], used: list[Step]) -> Step | None:
    fitting = [s for s in pool if s not in used and s.fits(chain)]
    return rng.choice(fitting) if fitting else None


def build_chain(world: World, locate: Step, options: frozenset[str] = frozenset()) -> tuple[Chain, list[Step]]:
    """Draw and apply a chain that starts with ``locate`` (or an act that needs nothing bound); returns the chain
    and its steps in order. A chain that starts with an act may end there, with the report: two steps.

    With the ``aggregate`` option (information_synthesis), the chain reads deals or tickets right after the
    locate step and derives the figure the report must state.
    """
    rng = random.Random(world.rng.random())
    chain = Chain(world)
    steps: list[Step] = []

    def add(step: Step | None, room: int) -> None:
        """Apply ``step`` if ``room`` steps still fit after it (an act, the report; and a notify while the chain
        touches one service only)."""
        room += step is not None and step.kind != "notify" and len(chain.services) < 2
        if step is not None and len(steps) + 1 + room <= MAX_STEPS:
            step.apply(chain)
            steps.append(step)

    add(locate, 2)
    if "aggregate" in options:
        read, figure = rng.choice(
            ((STEPS["read_deals"], STEPS["derive_sum"]), (STEPS["read_tickets"], STEPS["derive_count"]))
        )
        add(read, 2)
        add(figure, 2)
    acted = int(locate.kind != "act")
    draws = ((READ, 0, 2, 2), (DERIVE, 0, 2, 2), (READ, 0, 1, 2), (ACT, acted, 3, 1), (NOTIFY, 0, 1, 1))
    for pool, lo, hi, room in draws:  # a second read may look at what a derive picked
        for _ in range(rng.randint(lo, hi)):
            add(_pick(rng, chain, pool, steps), room)
        if pool is ACT and not any(s.kind == "act" for s in steps):
            add(_pick(rng, chain, ACT, steps), room)
    if len(chain.services) < 2 and (acted or rng.random() < 0.5):  # most workflows cross services: tell someone
        add(_pick(rng, chain, NOTIFY, steps), 1)
    if "date" in chain.bound and not any(s.name in USES_DATE for s in steps):
        steps.remove(STEPS["derive_deadline"])  # a date nothing used: no call, no check, not a step of the workflow
    REPORT.apply(chain)  # every workflow reports back: a bare "Done" must not pass
    steps.append(REPORT)
    return chain, steps


def phrase(rng: random.Random, clauses: list[list[str]]) -> str:
    """One opening: a template per clause, joined into sentences of up to three clauses."""
    picked = [re.sub(r"^(then|and) ", "", rng.choice(c)) for c in clauses if c]
    sentences: list[str] = []
    while picked:
        size = min(len(picked), rng.choice((2, 3)))
        part, picked = picked[:size], picked[size:]
        text = part[0] if len(part) == 1 else ", ".join(part[:-1]) + " and " + part[-1]
        if sentences:
            sentences.append(f"{rng.choice(NEXT)} {text}.")
        else:
            lead = rng.choice(LEADS)
            text = lead + text if lead else text[0].upper() + text[1:]
            sentences.append(text + ("?" if lead.startswith(("Could", "Can")) else "."))
    return " ".join(sentences)


class ComposedWorkflow(Blueprint):
    """A family of composed workflows: chains that start with one locate step."""

    capabilities: ClassVar[tuple[str, ...]] = ("tool_coordination",)
    options: ClassVar[frozenset[str]] = frozenset({"aggregate"})

    def __init__(self, locate: Step) -> None:
        self.locate = locate
        if "account" not in locate.gives:  # the aggregate reads a customer's deals or tickets
            self.options = frozenset()  # type: ignore[misc]
        self.name = f"composed:{locate.name.removeprefix('locate_').removeprefix('start_')}"  # type: ignore[misc]
        self.summary = f"a workflow composed from typed steps, starting {locate.name.replace('_', ' ')}"  # type: ignore[misc]

    def build(self, world: World, options: frozenset[str]) -> Draft:
        chain, steps = build_chain(world, self.locate, options)
        rng = random.Random(world.rng.random())
        openings = list(dict.fromkeys(phrase(rng, chain.clauses) for _ in range(3)))
        draft = chain.draft(self.name, f"Follow-up on {chain.subject}", openings)
        draft.description = "composed: " + " > ".join(s.name for s in steps)
        return draft


COMPOSED: dict[str, ComposedWorkflow] = {w.name: w for w in map(ComposedWorkflow, (*LOCATE, *START))}
HELD_OUT_COMPOSED: tuple[str, ...] = ("composed:from_ticket",)
"""The grammar-level held-out split: chains that find the customer through a ticket never train."""
