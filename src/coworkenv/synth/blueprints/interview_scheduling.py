"""Interview scheduling: the panel from the hiring doc, the candidate's day from their mail, the earliest slot."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World, busy_morning, free_slots, slot_taken

ROLES = ("Backend Engineer", "Product Designer", "Data Analyst", "Account Executive", "Support Lead")


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
        for r, people in ((role, panel), (other_role, [world.person(), world.person()])):
            world.add(
                "documents",
                "documents",
                {
                    "path": f"/Hiring/{r} panel",
                    "title": f"{r} interview panel",
                    "updated": world.day(-10),
                    "content": f"Interview panel for {r}:\n" + "\n".join(f"- {p.name} <{p.email}>" for p in people),
                },
            )
        busy_morning(world, day, (*panel, panel[0]))
        world.noise_mail(rng.randrange(1, 3))
        world.mail(
            candidate.email,
            "Application",
            f"Please find my CV attached. {candidate.name}",
            world.day(-12),
            unread=False,
        )
        offer = world.mail(
            candidate.email,
            f"Interview availability - {candidate.name}",
            f"Hello, I am available for the {role} interview on {day}. Best, {candidate.first}",
            world.day(-1),
        )
        panel_emails = [p.email for p in panel]
        slot = free_slots(world, panel_emails, day, minutes)[0]
        title = f"Interview: {candidate.name} ({role})"
        draft = Draft(
            blueprint=self.name,
            title=f"Schedule {candidate.name}'s interview",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "Please schedule {candidate}'s {minutes} interview for the {role} role with the panel listed in the "
                "hiring documents, on the day they said they are available (see their email), at the earliest slot "
                "the panel is free. Then reply to the candidate with the time.",
                "Set up a {minutes} {role} interview for {candidate} with the panel from the hiring doc, on the day "
                "the candidate offered by mail, at the earliest time the panel can do. Reply to their email with "
                "the slot.",
                "{candidate} sent their availability for the {role} interview. Book a {minutes} slot with the "
                "{role} panel from the hiring documents on that day, as early as the panel allows, and reply to "
                "the candidate's email with the time.",
            ],
            facts={
                "candidate": Fact(
                    "candidate", candidate.name, candidate.name, ["candidate"], "", "", withholdable=False
                ),
                "role": Fact("role", role, role, ["role"], "", "", withholdable=False),
                "minutes": Fact(
                    "minutes",
                    minutes,
                    f"{minutes}-minute",
                    ["long", "minutes", "duration"],
                    "How long will the interview be?",
                    f"It takes {minutes} minutes.",
                ),
            },
            reference=[
                {"call": "documents_search", "args": {"query": f"{role} panel"}, "save_as": "doc"},
                {"call": "documents_read", "args": {"document_id": "${doc.documents[0].id}"}},
                {"call": "mail_search", "args": {"query": f"availability {candidate.name}"}, "save_as": "cv"},
                {"call": "mail_read", "args": {"message_id": "${cv.messages[0].id}"}},
                {
                    "call": "calendar_find_free_slots",
                    "save_as": "free",
                    "args": {"attendees": panel_emails, "date": day, "duration_minutes": "${facts.minutes}"},
                },
            ],
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("mail", "messages", offer["id"], "body")],
        )
        ref = draft.reference
        if "dynamic" in options:
            notice = f"Calendar update: {panel[0].name} just accepted another meeting on {day}."
            event = slot_taken(world, panel[0].email, slot, notice)
            slot = free_slots(world, panel_emails, day, minutes, (event["mutations"][0]["record"],))[0]
            draft.events.append(event)
            ref.append(
                {
                    "call": "calendar_find_free_slots",
                    "save_as": "free",
                    "args": ref[-1]["args"],
                    "say": "The panel's calendar just changed; looking again.",
                }
            )
        ref += [
            {
                "call": "calendar_create_event",
                "_main": True,
                "args": {
                    "title": title,
                    "start": "${free.slots[0].start}",
                    "end": "${free.slots[0].end}",
                    "attendees": [*panel_emails, candidate.email],
                },
            },
            {
                "call": "mail_reply",
                "args": {
                    "message_id": "${cv.messages[0].id}",
                    "body": f"Dear {candidate.first}, your {role} interview is on "
                    "${free.slots[0].start}. Looking forward to it.",
                },
            },
            {
                "answer": f"Booked {candidate.name}'s interview on ${{free.slots[0].start}} with "
                f"{panel[0].name} and {panel[1].name}, and replied to the candidate."
            },
        ]
        hhmm = slot["start"][11:]
        draft.summary = [candidate.name, slot["start"]]
        everyone = " and ".join(f"'{e}' in r.attendees" for e in [*panel_emails, candidate.email])
        draft.check(
            "record_exists",
            "booked",
            3.0,
            service="calendar",
            collection="events",
            where=f"r.start == '{slot['start']}' and r.end == '{slot['end']}' and {everyone}",
        )
        draft.check(
            "record_exists",
            "candidate_told",
            2.0,
            service="mail",
            collection="messages",
            where=f"r.in_reply_to == '{offer['id']}' and contains(r.body, '{hhmm}')",
        )
        draft.check(
            "unchanged",
            "calendar_guard",
            1.5,
            service="calendar",
            collection="events",
            allow=f"r.title == '{title}' or r.id == 'evt-x1'",
        )
        draft.check("answer_contains", "told_time", 1.0, values=[hhmm])
        return draft
