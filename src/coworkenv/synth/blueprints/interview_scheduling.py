"""Interview scheduling: the panel from the hiring doc, the candidate's day from their mail, the earliest slot."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.blueprints.scheduling import at_slot, book, find_slot, guard_calendar, lose_first_slot
from coworkenv.synth.draft import Draft, Fact, stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.world import Person, World, busy_morning, free_slots

ROLES = ("Backend Engineer", "Product Designer", "Data Analyst", "Account Executive", "Support Lead")
OPENINGS = [
    "Please schedule {candidate}'s {minutes} interview for the {role} role with the panel listed in the "
    "hiring documents, on the day they said they are available (see their email), at the earliest slot "
    "the panel is free. Then reply to the candidate with the time.",
    "Set up a {minutes} {role} interview for {candidate} with the panel from the hiring doc, on the day "
    "the candidate offered by mail, at the earliest time the panel can do. Reply to their email with "
    "the slot.",
    "{candidate} sent their availability for the {role} interview. Book a {minutes} slot with the "
    "{role} panel from the hiring documents on that day, as early as the panel allows, and reply to "
    "the candidate's email with the time.",
]


class InterviewScheduling(Blueprint):
    name = "interview_scheduling"
    summary = "book a candidate's interview with the hiring panel on the day they offered, then tell the candidate"
    options: ClassVar[frozenset[str]] = frozenset({"dynamic"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        role, other_role = rng.sample(ROLES, 2)
        panel = [world.person(), world.person()]
        candidate = world.person(domain="gmail.com", company="")
        minutes = rng.choice((45, 60))
        day = world.day(rng.randrange(2, 8))
        _panels(world, {role: panel, other_role: [world.person(), world.person()]})
        busy_morning(world, day, (*panel, panel[0]))
        offer = _candidate_mail(world, candidate, role, day)
        emails = [p.email for p in panel]
        slot = free_slots(world, emails, day, minutes)[0]
        draft = _draft(self, world, candidate, role, minutes, offer)
        ref = draft.reference
        ref.call("documents_search", {"query": f"{role} panel"}, save_as="doc")
        ref.call("documents_read", {"document_id": "${doc.documents[0].id}"})
        ref.call("mail_search", {"query": f"availability {candidate.name}"}, save_as="cv")
        ref.call("mail_read", {"message_id": "${cv.messages[0].id}"})
        find_slot(draft, emails, day, "${facts.minutes}")
        if "dynamic" in options:
            say = "The panel's calendar just changed; looking again."
            slot = lose_first_slot(draft, world, panel[0], emails, slot, day, minutes, say)
        title = f"Interview: {candidate.name} ({role})"
        book(draft, title, [*emails, candidate.email])
        body = f"Dear {candidate.first}, your {role} interview is on ${{free.slots[0].start}}. Looking forward to it."
        ref.call("mail_reply", {"message_id": "${cv.messages[0].id}", "body": body})
        ref.answer(
            f"Booked {candidate.name}'s interview on ${{free.slots[0].start}} with "
            f"{panel[0].name} and {panel[1].name}, and replied to the candidate."
        )
        draft.summary = [candidate.name, slot["start"]]
        _checks(draft, slot, [*emails, candidate.email], offer["id"], title)
        return draft


def _panels(world: World, panels: dict[str, list[Person]]) -> None:
    """One hiring document per role, listing its interview panel."""
    for role, people in panels.items():
        lines = "\n".join(f"- {p.name} <{p.email}>" for p in people)
        doc = {"path": f"/Hiring/{role} panel", "title": f"{role} interview panel", "updated": world.day(-10)}
        world.add("documents", "documents", {**doc, "content": f"Interview panel for {role}:\n{lines}"})


def _candidate_mail(world: World, candidate: Person, role: str, day: str) -> dict[str, Any]:
    """An older application mail and the availability mail (returned) naming the day."""
    world.noise_mail(world.rng.randrange(1, 3))
    cv = f"Please find my CV attached. {candidate.name}"
    world.mail(candidate.email, "Application", cv, world.day(-12), unread=False)
    body = f"Hello, I am available for the {role} interview on {day}. Best, {candidate.first}"
    return world.mail(candidate.email, f"Interview availability - {candidate.name}", body, world.day(-1))


def _draft(bp: Blueprint, world: World, candidate: Person, role: str, minutes: int, offer: dict[str, Any]) -> Draft:
    facts = {
        "candidate": stated("candidate", candidate.name),
        "role": stated("role", role),
        "minutes": Fact(
            "minutes",
            minutes,
            f"{minutes}-minute",
            ["long", "minutes", "duration"],
            "How long will the interview be?",
            f"It takes {minutes} minutes.",
        ),
    }
    title = f"Schedule {candidate.name}'s interview"
    readable = [("mail", "messages", offer["id"], "body")]
    return Draft.start(bp.name, title, world, OPENINGS, facts, set(bp.capabilities), readable)


def _checks(draft: Draft, slot: dict[str, str], invited: list[str], offer: str, title: str) -> None:
    hhmm = slot["start"][11:]
    draft.checks.record_exists("booked", "calendar", "events", at_slot(slot, invited), 3.0)
    told = and_(field("in_reply_to").eq(offer), field("body").contains(hhmm))
    draft.checks.record_exists("candidate_told", "mail", "messages", told, 2.0)
    guard_calendar(draft, title, 1.5)
    draft.checks.unchanged("mail_guard", "mail", "messages", field("folder").eq("sent") | field("id").eq(offer), 1.5)
    draft.checks.answer_contains("told_time", [hhmm])
