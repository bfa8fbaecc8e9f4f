"""Background records: the rest of a realistic workspace, drawn with the task and out of its reach.

A task's fixtures are the few records its workflow is about; a real workspace holds hundreds
more (weeks of mail in threads and folders, calendars, accounts, queues, channels). For each
service the task uses, :func:`background` adds such records, sized by the workspace knob and
seeded by the world, from pools the task's words, values, days and flags were taken out of
(:mod:`coworkenv.synth.reserved`): no search, filter or check of the task can select one. Their
people and companies are new to the world and their ids continue the task's sequences.
"""

from __future__ import annotations

import random

from coworkenv.synth import background_business, background_records
from coworkenv.synth.backdrop import Backdrop, Fixtures
from coworkenv.synth.background_domains import domains
from coworkenv.synth.draft import Draft
from coworkenv.synth.reserved import pool, reserved
from coworkenv.synth.world import World

MAKERS = {**background_records.MAKERS, **background_business.MAKERS}

WORKSPACES = {"small": 0.0, "realistic": 1.0}
"""Workspace sizes: the share of a realistic background each draws (``small`` is the task's records alone)."""
DEFAULT_WORKSPACE = "realistic"


def background(draft: Draft, world: World, workspace: str = DEFAULT_WORKSPACE) -> Fixtures:
    """Background records for the services ``draft`` uses, out of reach of its task (empty for ``small``)."""
    if workspace not in WORKSPACES:
        raise ValueError(f"unknown workspace {workspace!r}; known: {', '.join(WORKSPACES)}")
    scale = WORKSPACES[workspace]
    if not scale:
        return {}
    taken = reserved(draft)
    drop = Backdrop(world, taken, scale, random.Random(f"background:{world.seed}"))
    drop.own_searched = taken.searched_in(world.domain) or taken.searched_in(world.company)
    drop.words = pool("words").without(taken)
    drop.firsts = pool("first").without(taken)
    drop.lasts = pool("last").without(taken)
    if len(drop.words) < 50 or len(drop.firsts) < 20 or len(drop.lasts) < 20:
        return {}  # a task whose words leave too little to draw from gets no background
    for service in sorted(draft.fixtures):
        make = MAKERS.get(service)
        if make is not None:
            make(drop)
    domains(drop)
    return drop.records
