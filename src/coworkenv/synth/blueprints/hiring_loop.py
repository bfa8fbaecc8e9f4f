"""A hiring loop over three days: book the onsite, move it when the manager's day fills, log his feedback.

Day 1: book the candidate's one-hour onsite with the hiring manager at his first free
slot from 10:00 on the interview day, and email the candidate the time. Before day 2 a
meeting lands on that slot and the manager mails asking to move the interview: move it to
his next free hour and email the new time. On the interview day's evening his feedback
arrives by mail: append it to the candidate's hiring document and report his
recommendation. As the agent reads the feedback, he sends a correction of the level (a
stage event on that read): the document and the report must carry the corrected level.
The conversation goes on across the days.
"""

from __future__ import annotations

from typing import Any

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import field
from coworkenv.synth.reference import Reference
from coworkenv.synth.stages import DraftStage, insertion
from coworkenv.synth.world import Person, World, free_slots

OPENINGS = [
    "Please book {candidate_name}'s onsite interview with {manager_name} ({manager}) on {day}, one hour at his "
    "first free slot from 10:00, invite them both, and email {candidate_first} ({candidate}) the time.",
    "Could you schedule a one-hour onsite for {candidate_name} with {manager_name} ({manager}) on {day}? Take the "
    "first free hour from 10:00 in his calendar, invite both, and send {candidate_first} ({candidate}) the time.",
    "{candidate_name} comes in for an onsite on {day}. Book one hour with {manager_name} ({manager}) at the first "
    "slot he has free from 10:00, invite both of them, and email {candidate_first} ({candidate}) when it is.",
]
LEVELS = ("L3", "L4", "L5")
VERDICTS = ("strong hire", "hire", "lean hire")


class HiringLoop(Blueprint):
    name = "hiring_loop"
    summary = "three days: book an onsite, move it when the manager's day fills up, log his feedback"
    capabilities = ("tool_coordination", "dynamic_state")

    def build(self, world: World, options: frozenset[str]) -> Draft:
        manager = world.person("Engineering", title="Engineering Manager")
        candidate = world.person("Engineering", domain="gmail.com", company="")
        day = world.day(2)
        _calendar(world, manager, day)
        _documents(world, candidate)
        world.noise_mail(world.rng.randrange(3, 6))
        recruiter = world.person("People", title="Recruiter")
        intro = f"{candidate.name} passed the phone screen; {manager.first} runs the onsite this week."
        world.mail(recruiter.email, f"{candidate.name} onsite", intro, world.day(-2), unread=False)
        facts = {
            "candidate_name": stated("candidate_name", candidate.name),
            "candidate_first": stated("candidate_first", candidate.first),
            "candidate": stated("candidate", candidate.email),
            "manager_name": stated("manager_name", manager.name),
            "manager": stated("manager", manager.email),
            "day": stated("day", day),
        }
        title = f"Hiring loop for {candidate.name}"
        draft = Draft.start(self.name, title, world, OPENINGS, facts, set())
        draft.clock = f"{world.today.isoformat()}T09:00"
        first = _first_free(world, manager, day)
        draft.summary = [first["start"]]
        _book(draft, manager, candidate, day, first)
        second = _move(draft, world, manager, candidate, day, first)
        _feedback(draft, world, manager, candidate, day, second)
        return draft


def _calendar(world: World, manager: Person, day: str) -> None:
    """The manager's interview day: a sync until 10:00 and one or two later meetings; noise on other days."""
    world.add("calendar", "events", _meeting("Team sync", world.at(day, "09:00"), world.rng.choice((60, 90)), manager))
    for start in world.rng.sample(("11:30", "12:30", "14:00", "15:00"), world.rng.randrange(1, 3)):
        world.add("calendar", "events", _meeting(world.fake.catch_phrase(), world.at(day, start), 60, manager))
    for offset in (0, 1, 3):
        other = world.person()
        when = world.at(world.day(offset), world.rng.choice(("10:00", "13:00", "16:00")))
        world.add("calendar", "events", _meeting(world.fake.catch_phrase(), when, 30, other))


def _meeting(title: str, start: str, minutes: int, who: Person) -> dict[str, Any]:
    end = World.at(start[:10], start[11:], minutes)
    return {"title": title, "start": start, "end": end, "attendees": [who.email], "organizer": who.email}


def _documents(world: World, candidate: Person) -> None:
    world.add("documents", "documents", {"path": "/Hiring/Process", "content": "Phone screen, onsite, feedback."})
    for who in (candidate, world.person(), world.person()):
        content = f"Candidate: {who.name}. Phone screen: passed."
        world.add("documents", "documents", {"path": f"/Hiring/{who.name}", "content": content})


def _first_free(world: World, manager: Person, day: str, extra: tuple[dict[str, Any], ...] = ()) -> dict[str, str]:
    """The manager's first free hour on ``day`` from 10:00, as the calendar tool finds it."""
    return next(s for s in free_slots(world, [manager.email], day, 60, extra) if s["start"][11:] >= "10:00")


def _find_slot(ref: Reference, manager: Person, day: str) -> None:
    args = {"attendees": [manager.email], "date": day, "duration_minutes": 60, "day_start": "10:00"}
    ref.call("calendar_find_free_slots", args, save_as="free")


def _book(draft: Draft, manager: Person, candidate: Person, day: str, slot: dict[str, str]) -> None:
    ref = draft.reference
    _find_slot(ref, manager, day)
    event = {
        "title": f"Onsite interview: {candidate.name}",
        "start": "${free.slots[0].start}",
        "end": "${free.slots[0].end}",
        "attendees": [manager.email, candidate.email],
    }
    ref.call("calendar_create_event", event, role="main")
    body = f"Hi {candidate.first}, your onsite with {manager.name} is on ${{free.slots[0].start}} (one hour)."
    ref.call("mail_send", {"to": [candidate.email], "subject": "Your onsite interview", "body": body})
    ref.answer(f"Booked {candidate.first}'s onsite with {manager.first} at ${{free.slots[0].start}} and emailed them.")
    named = field("title").contains(candidate.name)
    checks = draft.checks
    booked = named & field("start").eq(slot["start"]) & field("attendees").has(manager.email)
    checks.count("booked", "calendar", "events", booked & field("attendees").has(candidate.email), 1, 3.0)
    told = field("folder").eq("sent") & field("to").has(candidate.email) & field("body").contains(slot["start"])
    checks.count("candidate_told", "mail", "messages", told, 1, 2.0)
    checks.unchanged("calendar_guard", "calendar", "events", named)


def _move(
    draft: Draft, world: World, manager: Person, candidate: Person, day: str, slot: dict[str, str]
) -> dict[str, str]:
    """Day 2: a two-hour meeting lands on the slot; the onsite moves to the next free hour. Returns that slot."""
    opening = (
        f"{manager.first} mailed me about {candidate.first}'s interview. Please sort it out, and let "
        f"{candidate.first} know the new time."
    )
    stage = draft.add_stage("day_two", opening, {"to": f"{world.day(1)}T09:00"})
    stage.notify = "New mail arrived since yesterday."
    booked = {**_meeting("onsite", slot["start"], 60, manager), "id": "evt-0"}
    unmoved = _first_free(world, manager, day, (booked,))
    for minutes in (120, 150, 180, 240):  # long enough that the next free hour is not the one it would be anyway
        clash = {**_meeting("Board prep", slot["start"], minutes, manager), "id": "evt-d2"}
        new = _first_free(world, manager, day, (clash, booked))
        if new != unmoved:
            break
    stage.insert("calendar", "events", clash)
    ask = (
        f"Board prep landed on {slot['start']} ({minutes} minutes), sorry. Please move {candidate.first}'s "
        "interview to my next free hour."
    )
    _mail(stage, "msg-d2", manager, world, f"{candidate.first}'s onsite", ask, f"{world.today.isoformat()}T18:05")
    ref = stage.reference
    ref.call("mail_search", {"query": candidate.first, "folder": "inbox"}, save_as="inbox")
    ref.call("mail_read", {"message_id": "${inbox.messages[0].id}"})
    listed = {"query": candidate.name, "start_date": day, "end_date": day}
    ref.call("calendar_list_events", listed, save_as="booked")
    _find_slot(ref, manager, day)
    moved = {"event_id": "${booked.events[0].id}", "start": "${free.slots[0].start}", "end": "${free.slots[0].end}"}
    ref.call("calendar_update_event", moved, role="main")
    body = f"Hi {candidate.first}, we had to move your onsite with {manager.name} to ${{free.slots[0].start}}."
    ref.call("mail_send", {"to": [candidate.email], "subject": "New time for your onsite", "body": body})
    ref.answer(f"Moved the onsite to ${{free.slots[0].start}}, {manager.first}'s next free hour, and told them.")
    named = field("title").contains(candidate.name)
    checks = stage.checks
    checks.count("moved", "calendar", "events", named & field("start").eq(new["start"]), 1, 3.0)
    told = field("folder").eq("sent") & field("to").has(candidate.email) & field("body").contains(new["start"])
    checks.count("candidate_retold", "mail", "messages", told, 1, 2.0)
    checks.unchanged("calendar_guard_2", "calendar", "events", named)
    return new


def _feedback(draft: Draft, world: World, manager: Person, candidate: Person, day: str, slot: dict[str, str]) -> None:
    """Day 3, the interview day's evening: the manager's feedback arrives, and a correction of the level once the
    agent reads it; log both and report the corrected level."""
    level, verdict = world.rng.choice(LEVELS), world.rng.choice(VERDICTS)
    corrected = world.rng.choice([lv for lv in LEVELS if lv != level])
    opening = (
        f"{candidate.first}'s interview is done. Please add {manager.first}'s feedback to {candidate.first}'s hiring "
        f"document and tell me what {manager.first} recommends."
    )
    stage = draft.add_stage("day_three", opening, {"to": f"{day}T17:00"}, notify="New mail arrived today.")
    text = f"{candidate.name}: {verdict}. Solid system design round. I recommend an offer at level {level}."
    sent = world.at(day, slot["end"][11:], 30)
    _mail(stage, "msg-d3", manager, world, f"Feedback {candidate.name}", text, sent)
    _correction(stage, world, manager, candidate, (level, corrected), World.at(day, max(sent[11:], "17:00"), 10))
    ref = stage.reference
    ref.call("mail_search", {"query": candidate.first, "folder": "inbox"}, save_as="inbox")
    ref.call("mail_read", {"message_id": "${inbox.messages[0].id}"}, save_as="feedback")
    ref.call("mail_search", {"query": candidate.first, "folder": "inbox"}, save_as="later")
    ref.call("mail_read", {"message_id": "${later.messages[0].id}"}, save_as="correction")
    ref.call("documents_search", {"query": candidate.name}, save_as="docs")
    text = f"Onsite feedback ({manager.name}): ${{feedback.body}} ${{correction.body}}"
    appended = {"document_id": "${docs.documents[0].id}", "text": text}
    ref.call("documents_append", appended, role="main")
    ref.answer(f"Logged {manager.first}'s feedback. He says: ${{feedback.body}} Then: ${{correction.body}}")
    path = f"/Hiring/{candidate.name}"
    checks = stage.checks
    # the level once: the feedback appended twice names it twice
    logged = (
        field("path").eq(path) & field("content").count(corrected).eq(1) & field("content").contains("Phone screen")
    )
    checks.record_exists("feedback_logged", "documents", "documents", logged, 3.0)
    checks.answer_contains("recommendation_told", [corrected], 2.0)
    checks.unchanged("documents_guard", "documents", "documents", field("path").eq(path))
    checks.unchanged("calendar_left_alone", "calendar", "events")


def _correction(
    stage: DraftStage, world: World, manager: Person, candidate: Person, levels: tuple[str, str], date: str
) -> None:
    """The manager's correction of the level, arriving right after the agent reads his feedback (``msg-d3``)."""
    level, corrected = levels
    body = f"Correction after the panel debrief: please record level {corrected} for {candidate.first}, not {level}."
    record = {
        "id": "msg-d3c",
        "sender": manager.email,
        "to": [world.me.email],
        "subject": f"Re: Feedback {candidate.name}",
        "body": body,
        "date": date,
    }
    notice = f"New mail from {manager.email}."
    added = [insertion("mail", "messages", record)]
    stage.event("level-correction", "mail_read", added, notice, when="args.message_id == 'msg-d3'")


def _mail(stage: DraftStage, id: str, sender: Person, world: World, subject: str, body: str, date: str) -> None:
    record = {"id": id, "sender": sender.email, "to": [world.me.email], "subject": subject, "body": body}
    stage.insert("mail", "messages", {**record, "date": date})
