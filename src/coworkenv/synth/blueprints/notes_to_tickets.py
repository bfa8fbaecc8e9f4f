"""Meeting notes to action items to tickets: one ticket per action item, for the right team and owner."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import TEAMS, World, noise_tickets

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
        lines = [
            f"{meeting} notes, {day}",
            "Attendees: " + ", ".join(p.name for p, _, _ in items),
            "Discussion: " + world.fake.sentence(),
            "Action items:",
        ]
        lines += [f"- {p.name}: {task} (team {team})" for p, task, team in items]
        notes = world.add(
            "documents",
            "documents",
            {
                "path": f"/Meetings/{meeting} {day}",
                "title": f"{meeting} {day}",
                "content": "\n".join(lines),
                "updated": day,
            },
        )
        old_day = world.day(-8)
        world.add(
            "documents",
            "documents",
            {
                "path": f"/Meetings/{meeting} {old_day}",
                "title": f"{meeting} {old_day}",
                "updated": old_day,
                "content": f"{meeting} notes, {old_day}\nAction items:\n- {world.person().name}: {rng.choice(TASKS)}",
            },
        )
        noise_tickets(world, rng.randrange(2, 5))
        reference: list[dict] = [
            {"call": "documents_search", "args": {"query": f"{meeting} {day}"}, "save_as": "doc"},
            {"call": "documents_read", "args": {"document_id": "${doc.documents[0].id}"}},
        ]
        draft = Draft(
            blueprint=self.name,
            title=f"Tickets from the {meeting} notes",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "Please turn the action items from the {meeting} notes {day} into tickets: one per item, for the "
                "team named in the notes, assigned to the person who owns it.",
                "Can you open tickets for every action item in the {meeting} notes {day}? Use the team each item "
                "names and assign each ticket to its owner.",
                "The action items from our {meeting} {day} need tickets. Create one ticket per item with the team "
                "the notes mention and assign it to the item's owner.",
            ],
            facts={
                "meeting": Fact("meeting", meeting, meeting, ["meeting"], "", "", withholdable=False),
                "day": Fact(
                    "day",
                    day,
                    f"from {day}",
                    ["date", "day", "when"],
                    "Which meeting date do you mean?",
                    f"The one on {day}.",
                ),
            },
            reference=reference,
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("documents", "documents", notes["id"], "content")],
            summary=[t for _, t, _ in items],
        )
        reference[0]["args"]["query"] = f"{meeting} ${{facts.day}}"
        for i, (person, task, team) in enumerate(items):
            reference += [
                {"call": "contacts_search", "args": {"query": person.name}, "save_as": f"p{i}"},
                {
                    "call": "tickets_create",
                    "_main": i == len(items) - 1,
                    "args": {
                        "title": task,
                        "description": f"Action item from the {meeting} on {day}.",
                        "team": team,
                        "assignee": f"${{p{i}.contacts[0].email}}",
                    },
                },
            ]
            draft.check(
                "record_exists",
                f"ticket_{i + 1}",
                2.0,
                service="tickets",
                collection="tickets",
                where=f"r.title == '{task}' and r.team == '{team}' and r.assignee == '{person.email}'",
            )
        reference.append(
            {
                "answer": f"I opened {len(items)} tickets: "
                + "; ".join(f"{t} ({team}, {p.name})" for p, t, team in items)
                + "."
            }
        )
        draft.check(
            "count",
            "no_extra",
            1.0,
            service="tickets",
            collection="tickets",
            where="r.created == 'now'",
            value=len(items),
        )
        draft.check(
            "unchanged", "tickets_guard", 1.5, service="tickets", collection="tickets", allow="r.created == 'now'"
        )
        draft.check("answer_contains", "told_owners", 1.0, values=[p.name for p, _, _ in items])
        return draft
