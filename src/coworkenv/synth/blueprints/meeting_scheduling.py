"""Meeting scheduling around conflicts: find two colleagues, the earliest common slot, book it."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.blueprints.scheduling import at_slot, book, find_slot, guard_calendar, lose_first_slot
from coworkenv.synth.draft import Draft, Fact, stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.world import Person, World, busy_morning, free_slots

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
OPENINGS = [
    "Please set up a {duration} meeting with {a} and {b} {date} about {topic}. Take the earliest "
    "time that works for both of them.",
    "Can you find the first slot {date} when {a} and {b} are both free and book a {duration} meeting called {topic}?",
    "I need {a} and {b} in a {duration} session on {topic} {date}. Grab the earliest common opening "
    "and send the invite.",
]
ATTENDEES = ["${pa.contacts[0].email}", "${pb.contacts[0].email}"]


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
        _calendars(world, a, b, namesake, day)
        emails = [a.email, b.email]
        slot = free_slots(world, emails, day, minutes)[0]
        draft = _draft(self.name, world, a, b, day, minutes, topic)
        draft.reference.call("contacts_search", {"query": a.name}, save_as="pa")
        draft.reference.call("contacts_search", {"query": b.name}, save_as="pb")
        find_slot(draft, ATTENDEES, "${facts.date}", "${facts.duration}")
        draft.summary = [slot["start"][11:]]
        if "dynamic" in options:
            say = "The calendar just changed, so I'm checking the free slots again."
            slot = lose_first_slot(draft, world, a, emails, slot, day, minutes, say)
            draft.summary = [slot["start"][11:]]
        book(draft, topic, ATTENDEES)
        answer = (
            f'Booked "{topic}" on ${{free.slots[0].start}} for ${{facts.duration}} minutes with {a.name} and {b.name}.'
        )
        if "aggregate" in options:
            answer += _count_meetings(draft, world, a, day)
        draft.reference.answer(answer)
        _check_booking(draft, topic, slot, emails)
        if "follow_up" in options:
            _agenda(draft, world, topic, a, b)
        return draft


def _calendars(world: World, a: Person, b: Person, namesake: Person, day: str) -> None:
    """A busy morning, a shared lunch, and a meeting of a's namesake."""
    busy_morning(world, day, (a, b, a))
    lunch = {"title": "Team lunch", "start": world.at(day, "12:00"), "end": world.at(day, "13:00")}
    world.add("calendar", "events", {**lunch, "attendees": [a.email, b.email]})
    today = world.day(0)
    planning = {"title": "Planning", "start": world.at(today, "10:00"), "end": world.at(today, "11:00")}
    world.add("calendar", "events", {**planning, "attendees": [namesake.email]})


def _draft(name: str, world: World, a: Person, b: Person, day: str, minutes: int, topic: str) -> Draft:
    weekday = world.weekday(day)
    facts = {
        "date": Fact(
            "date",
            day,
            f"on {weekday} {day}",
            ["day", "date", "when"],
            "Which day should the meeting be on?",
            f"Let's do {weekday} {day}.",
        ),
        "duration": Fact(
            "duration",
            minutes,
            f"{minutes}-minute",
            ["long", "duration", "minutes"],
            "How long should the meeting be?",
            f"Make it {minutes} minutes.",
        ),
        "a": stated("a", a.name, "who"),
        "b": stated("b", b.name, "who"),
        "topic": stated("topic", topic, given=f'"{topic}"'),
    }
    title = f"Schedule '{topic}' with {a.name} and {b.name}"
    return Draft.start(name, title, world, OPENINGS, facts, {"tool_coordination"})


def _count_meetings(draft: Draft, world: World, a: Person, day: str) -> str:
    """The ``aggregate`` option: how many meetings ``a`` has that day, the new one included."""
    args = {"start_date": day, "end_date": day, "attendee": "${pa.contacts[0].email}"}
    draft.reference.call("calendar_list_events", args, save_as="busy")
    events = world.fixtures["calendar"]["events"]
    count = 1 + len(draft.events) + sum(1 for e in events if e["start"][:10] == day and a.email in e["attendees"])
    question = f"Also tell me how many meetings {a.first} will have that day."
    draft.ask_figure(question, "count_told", count, label="meeting")
    return f" {a.first} now has ${{busy.total}} meetings that day."


def _check_booking(draft: Draft, topic: str, slot: dict[str, str], emails: list[str]) -> None:
    titled = field("title").eq(topic)
    draft.checks.record_exists("booked", "calendar", "events", and_(titled, at_slot(slot, emails)), 3.0)
    draft.checks.count("booked_once", "calendar", "events", titled, 1)
    guard_calendar(draft, topic, 2.0)
    draft.checks.answer_contains("told_time", [slot["start"][11:]])


def _agenda(draft: Draft, world: World, topic: str, a: Person, b: Person) -> None:
    """The ``follow_up`` option: an agenda document naming both attendees."""
    path = f"/Meetings/{topic} agenda"
    world.ensure("documents", "documents")
    content = f"Agenda: {topic}\nAttendees: {a.name}, {b.name}\n1. Goals"
    draft.add_follow_up(
        f"Thanks! Please also create an agenda document at '{path}' listing {a.first} and {b.first} as attendees.",
        [{"call": "documents_create", "args": {"path": path, "content": content}}],
        f"The agenda is at {path}.",
    )
    where = and_(field("path").eq(path), field("content").contains(a.first), field("content").contains(b.first))
    draft.checks.record_exists("agenda", "documents", "documents", where, group="follow_up")
