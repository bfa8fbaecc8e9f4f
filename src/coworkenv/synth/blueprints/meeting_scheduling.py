"""Meeting scheduling around conflicts: find two colleagues, the earliest common slot, book it."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World, busy_morning, free_slots, slot_taken

TOPICS = (
    "Q3 roadmap review",
    "Vendor shortlist",
    "Hiring plan sync",
    "Launch retro",
    "Budget check-in",
    "Pricing workshop",
    "Security review",
    "Onboarding revamp",
)


class MeetingScheduling(Blueprint):
    name = "meeting_scheduling"
    summary = "book a meeting with two colleagues at the earliest slot both are free"
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate", "follow_up"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        a, b = world.person(), world.person()
        namesake = world.person(first=a.first)
        world.contacts(a, b, namesake, extra=2)
        day = world.day(rng.randrange(1, 6))
        minutes = rng.choice((30, 45, 60))
        topic = rng.choice(TOPICS)
        busy_morning(world, day, (a, b, a))
        world.add(
            "calendar",
            "events",
            {
                "title": "Team lunch",
                "start": world.at(day, "12:00"),
                "end": world.at(day, "13:00"),
                "attendees": [a.email, b.email],
            },
        )
        world.add(
            "calendar",
            "events",
            {
                "title": "Planning",
                "start": world.at(world.day(0), "10:00"),
                "end": world.at(world.day(0), "11:00"),
                "attendees": [namesake.email],
            },
        )
        slot = free_slots(world, [a.email, b.email], day, minutes)[0]
        reference = [
            {"call": "contacts_search", "args": {"query": a.name}, "save_as": "pa"},
            {"call": "contacts_search", "args": {"query": b.name}, "save_as": "pb"},
            {
                "call": "calendar_find_free_slots",
                "save_as": "free",
                "args": {
                    "attendees": ["${pa.contacts[0].email}", "${pb.contacts[0].email}"],
                    "date": "${facts.date}",
                    "duration_minutes": "${facts.duration}",
                },
            },
        ]
        draft = Draft(
            blueprint=self.name,
            title=f"Schedule '{topic}' with {a.name} and {b.name}",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "Please set up a {duration} meeting with {a} and {b} {date} about {topic}. Take the earliest "
                "time that works for both of them.",
                "Can you find the first slot {date} when {a} and {b} are both free and book a {duration} meeting "
                "called {topic}?",
                "I need {a} and {b} in a {duration} session on {topic} {date}. Grab the earliest common opening "
                "and send the invite.",
            ],
            facts={
                "date": Fact(
                    "date",
                    day,
                    f"on {world.weekday(day)} {day}",
                    ["day", "date", "when"],
                    "Which day should the meeting be on?",
                    f"Let's do {world.weekday(day)} {day}.",
                ),
                "duration": Fact(
                    "duration",
                    minutes,
                    f"{minutes}-minute",
                    ["long", "duration", "minutes"],
                    "How long should the meeting be?",
                    f"Make it {minutes} minutes.",
                ),
                "a": Fact("a", a.name, a.name, ["who"], "", "", withholdable=False),
                "b": Fact("b", b.name, b.name, ["who"], "", "", withholdable=False),
                "topic": Fact("topic", topic, f'"{topic}"', ["topic"], "", "", withholdable=False),
            },
            reference=reference,
            checks=[],
            capabilities={"tool_coordination"},
            readable=[],
            summary=[slot["start"][11:]],
        )
        if "dynamic" in options:
            notice = f"Calendar update: {a.name} just accepted another meeting on {day}."
            event = slot_taken(world, a.email, slot, notice)
            slot = free_slots(world, [a.email, b.email], day, minutes, (event["mutations"][0]["record"],))[0]
            draft.events.append(event)
            reference.append(
                {
                    "call": "calendar_find_free_slots",
                    "save_as": "free",
                    "args": reference[-1]["args"],
                    "say": "The calendar just changed, so I'm checking the free slots again.",
                }
            )
            draft.summary = [slot["start"][11:]]
        attendees = ["${pa.contacts[0].email}", "${pb.contacts[0].email}"]
        reference.append(
            {
                "call": "calendar_create_event",
                "_main": True,
                "args": {
                    "title": topic,
                    "start": "${free.slots[0].start}",
                    "end": "${free.slots[0].end}",
                    "attendees": attendees,
                },
            }
        )
        answer = f'Booked "{topic}" on ${{free.slots[0].start}} to ${{free.slots[0].end}} with {a.name} and {b.name}.'
        if "aggregate" in options:
            reference.append(
                {
                    "call": "calendar_list_events",
                    "save_as": "busy",
                    "args": {"start_date": day, "end_date": day, "attendee": "${pa.contacts[0].email}"},
                }
            )
            count = (
                1
                + len(draft.events)
                + sum(
                    1
                    for e in world.fixtures["calendar"]["events"]  # + the slot-taker
                    if e["start"][:10] == day and a.email in e["attendees"]
                )
            )
            answer += f" {a.first} now has ${{busy.total}} meetings that day."
            draft.ask_figure(f"Also tell me how many meetings {a.first} will have that day.", "count_told", count)
        reference.append({"answer": answer})
        who = f"'{a.email}' in r.attendees and '{b.email}' in r.attendees"
        draft.check(
            "record_exists",
            "booked",
            3.0,
            service="calendar",
            collection="events",
            where=f"r.title == '{topic}' and r.start == '{slot['start']}' and r.end == '{slot['end']}' and {who}",
        )
        draft.check(
            "count", "booked_once", 1.0, service="calendar", collection="events", where=f"r.title == '{topic}'", value=1
        )
        draft.check(
            "unchanged",
            "calendar_guard",
            2.0,
            service="calendar",
            collection="events",
            allow=f"r.title == '{topic}' or r.id == 'evt-x1'",
        )
        draft.check("answer_contains", "told_time", 1.0, values=[slot["start"][11:]])
        if "follow_up" in options:
            path = f"/Meetings/{topic} agenda"
            world.ensure("documents", "documents")
            draft.add_follow_up(
                f"Thanks! Please also create an agenda document at '{path}' listing {a.first} and {b.first} as "
                "attendees.",
                [
                    {
                        "call": "documents_create",
                        "args": {"path": path, "content": f"Agenda: {topic}\nAttendees: {a.name}, {b.name}\n1. Goals"},
                    }
                ],
                f"The agenda is at {path}.",
            )
            draft.check(
                "record_exists",
                "agenda",
                1.0,
                service="documents",
                collection="documents",
                _group="follow_up",
                where=f"r.path == '{path}' and contains(r.content, '{a.first}') and contains(r.content, '{b.first}')",
            )
        return draft
