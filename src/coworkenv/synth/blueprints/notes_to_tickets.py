"""Meeting notes to action items to tickets: one ticket per action item, for the right team and owner."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact, stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.world import TEAMS, Person, World, noise_tickets

TASKS = (
    "Migrate the billing cron to the new scheduler",
    "Write a runbook for cache failover",
    "Add alerting on queue depth",
    "Clean up stale feature flags",
    "Upgrade the TLS certificates",
    "Document the release checklist",
    "Fix flaky checkout tests",
    "Archive the old analytics dashboards",
)
MEETINGS = ("Platform sync", "Release review", "Incident retro", "Architecture council")
OPENINGS = [
    "Please turn the action items from the {meeting} notes {day} into tickets: one per item, for the "
    "team named in the notes, assigned to the person who owns it.",
    "Can you open tickets for every action item in the {meeting} notes {day}? Use the team each item "
    "names and assign each ticket to its owner.",
    "The action items from our {meeting} {day} need tickets. Create one ticket per item with the team "
    "the notes mention and assign it to the item's owner.",
]
Item = tuple[Person, str, str]
"""An action item: (owner, task, team)."""


class NotesToTickets(Blueprint):
    name = "notes_to_tickets"
    summary = "read meeting notes and open one ticket per action item, for the right team, assigned to its owner"
    options: ClassVar[frozenset[str]] = frozenset()

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        meeting = rng.choice(MEETINGS)
        day = world.day(-rng.randrange(1, 4))
        tasks = rng.sample(TASKS, rng.randrange(2, 4))
        items = [(world.person("Engineering"), task, rng.choice(TEAMS)) for task in tasks]
        world.contacts(*(p for p, _, _ in items), extra=2)
        notes = _notes(world, meeting, day, items)
        noise_tickets(world, rng.randrange(2, 5))
        draft = _draft(self, world, meeting, day, notes)
        draft.summary = [t for _, t, _ in items]
        ref = draft.reference
        ref.call("documents_search", {"query": f"{meeting} ${{facts.day}}"}, save_as="doc")
        ref.call("documents_read", {"document_id": "${doc.documents[0].id}"})
        for i, (person, task, team) in enumerate(items):
            ref.call("contacts_search", {"query": person.name}, save_as=f"p{i}")
            ticket = {"title": task, "description": f"Action item from the {meeting} on {day}.", "team": team}
            last = i == len(items) - 1
            ref.call(
                "tickets_create", {**ticket, "assignee": f"${{p{i}.contacts[0].email}}"}, role="main" if last else None
            )
            mine = and_(field("title").eq(task), field("team").eq(team), field("assignee").eq(person.email))
            draft.checks.record_exists(f"ticket_{i + 1}", "tickets", "tickets", mine, 2.0)
        ref.answer(
            f"I opened {len(items)} tickets: " + "; ".join(f"{t} ({team}, {p.name})" for p, t, team in items) + "."
        )
        new = field("created").eq("now")
        draft.checks.count("no_extra", "tickets", "tickets", new, len(items))
        draft.checks.unchanged("tickets_guard", "tickets", "tickets", new, 1.5)
        draft.checks.answer_contains("told_owners", [p.name for p, _, _ in items])
        return draft


def _notes(world: World, meeting: str, day: str, items: list[Item]) -> dict[str, Any]:
    """The meeting's notes (returned) and an older meeting's of the same name."""
    lines = [
        f"{meeting} notes, {day}",
        "Attendees: " + ", ".join(p.name for p, _, _ in items),
        "Discussion: " + world.fake.sentence(),
        "Action items:",
        *(f"- {p.name}: {task} (team {team})" for p, task, team in items),
    ]
    doc = {"path": f"/Meetings/{meeting} {day}", "title": f"{meeting} {day}", "content": "\n".join(lines)}
    notes = world.add("documents", "documents", {**doc, "updated": day})
    old = world.day(-8)
    content = f"{meeting} notes, {old}\nAction items:\n- {world.person().name}: {world.rng.choice(TASKS)}"
    world.add(
        "documents",
        "documents",
        {"path": f"/Meetings/{meeting} {old}", "title": f"{meeting} {old}", "updated": old, "content": content},
    )
    return notes


def _draft(bp: Blueprint, world: World, meeting: str, day: str, notes: dict[str, Any]) -> Draft:
    facts = {
        "meeting": stated("meeting", meeting),
        "day": Fact(
            "day", day, f"from {day}", ["date", "day", "when"], "Which meeting date do you mean?", f"The one on {day}."
        ),
    }
    readable = [("documents", "documents", notes["id"], "content")]
    title = f"Tickets from the {meeting} notes"
    return Draft.start(bp.name, title, world, OPENINGS, facts, set(bp.capabilities), readable)
