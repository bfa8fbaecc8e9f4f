"""Incident post-mortem over two days: hand the incident to tonight's on-call, write the post-mortem next morning.

Day 1 (evening): assign the open incident to the engineer on call from 18:00, comment the
hand-over on the ticket, and leave a hand-off note in the documents. Overnight the engineer
resolves the ticket and mails the root cause. Day 2 starts a fresh conversation that shows
only the note (``context: notes``): find the engineer's mail, write the post-mortem with
the root cause and the fix time, and report the root cause.
"""

from __future__ import annotations

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import field
from coworkenv.synth.world import TEAMS, Person, World, noise_tickets

SERVICES = ("checkout", "search", "login", "notifications", "reporting", "file uploads")
CAUSES = (
    ("certificate", "the {service} gateway's TLS certificate expired"),
    ("disk", "a full disk on the {service} database host"),
    ("config", "a bad config flag shipped with the afternoon {service} release"),
    ("quota", "an exhausted API quota at the {service} provider"),
    ("memory", "a memory leak in the {service} worker pool"),
)
OPENINGS = [
    "The {service} incident ticket {ticket} must not sit unowned overnight. Please assign it to whoever is on call "
    "for {team} tonight (from 18:00), comment on the ticket that they own it now, and leave yourself a hand-off "
    "note at {note} with the ticket id and the owner: tomorrow we write the post-mortem.",
    "Before you log off: {ticket} ({service} incident) needs an owner for the night. Give it to the {team} engineer "
    "on call from 18:00, say so in a ticket comment, and write a hand-off note at {note} naming the ticket and the "
    "owner, so we can do the post-mortem tomorrow.",
    "Please hand the {service} incident {ticket} to tonight's {team} on-call (the shift starting 18:00): assign it, "
    "comment the hand-over on the ticket, and put a hand-off note with the ticket id and the owner at {note} for "
    "tomorrow's post-mortem.",
]
NEXT_MORNING = (
    "Good morning! Please write the post-mortem for yesterday's {service} incident at {path}, with the root cause "
    "and the time it was fixed, and tell me the root cause."
)


class IncidentPostmortem(Blueprint):
    name = "incident_postmortem"
    summary = "two days: hand an incident to tonight's on-call with a note; next morning write its post-mortem"
    capabilities = ("tool_coordination", "dynamic_state")

    def build(self, world: World, options: frozenset[str]) -> Draft:
        service = world.rng.choice(SERVICES)
        team = world.rng.choice(TEAMS)
        today = world.today.isoformat()
        tid = _incident(world, service, team)
        night = _rota(world, team, today)
        world.ensure("documents", "documents")
        for _ in range(world.rng.randrange(2, 4)):
            world.add("documents", "documents", {"path": f"/Postmortems/{world.fake.bs().title()}"})
        world.noise_mail(world.rng.randrange(3, 6))
        note = f"/Notes/Handoff {today}"
        facts = {
            "service": stated("service", service),
            "ticket": stated("ticket", tid),
            "team": stated("team", team),
            "note": stated("note", note),
        }
        draft = Draft.start(self.name, f"Incident hand-over and post-mortem: {service}", world, OPENINGS, facts, set())
        draft.clock = f"{today}T17:30"
        draft.summary = [tid]
        _hand_over(draft, tid, team, today, note)
        checks = draft.checks
        checks.field_equals("assigned", "tickets", "tickets", tid, "assignee", night.email, 3.0)
        comment = field("id").eq(tid) & field("comments").join().count(night.email).eq(1)  # one hand-over comment
        checks.record_exists("handed_over", "tickets", "tickets", comment)
        noted = field("path").eq(note) & field("content").contains(tid) & field("content").contains(night.email)
        checks.record_exists("note_left", "documents", "documents", noted)
        checks.unchanged("tickets_guard", "tickets", "tickets", field("id").eq(tid))
        _postmortem(draft, world, service, tid, night.email, note)
        return draft


def _incident(world: World, service: str, team: str) -> str:
    noise_tickets(world, world.rng.randrange(3, 6))
    old = {"title": f"{service} errors (resolved)", "team": team, "status": "resolved", "tags": ["incident"]}
    world.add("tickets", "tickets", {**old, "created": world.day(-12)})
    ticket = {
        "title": f"Incident: {service} failing for customers",
        "team": team,
        "status": "open",
        "priority": "urgent",
        "tags": ["incident"],
        "created": world.day(0),
        "description": f"{service.capitalize()} has been failing for part of our users since the afternoon.",
    }
    return str(world.add("tickets", "tickets", ticket)["id"])


def _rota(world: World, team: str, today: str) -> Person:
    """Yesterday night, today's day shift and tonight's shift for the team, plus another team's night."""
    people = [world.person("Engineering", title="Site Reliability Engineer") for _ in range(4)]
    tomorrow = world.at(today, "09:00", 24 * 60)
    shifts = [
        (team, people[0], world.at(today, "09:00", -15 * 60), world.at(today, "09:00")),
        (team, people[1], world.at(today, "09:00"), world.at(today, "18:00")),
        (team, people[2], world.at(today, "18:00"), tomorrow),
        (world.rng.choice([t for t in TEAMS if t != team]), people[3], world.at(today, "18:00"), tomorrow),
    ]
    world.rng.shuffle(shifts)
    for name, who, start, end in shifts:
        world.add("tickets", "oncall", {"team": name, "engineer": who.email, "start": start, "end": end})
    return people[2]


def _hand_over(draft: Draft, tid: str, team: str, today: str, note: str) -> None:
    ref = draft.reference
    ref.call("tickets_get_oncall", {"team": team, "at": f"{today}T18:00"}, save_as="oncall")
    owner = "${oncall.shifts[0].engineer}"
    ref.call("tickets_assign", {"ticket_id": tid, "assignee": owner}, role="main")
    ref.call("tickets_comment", {"ticket_id": tid, "text": f"Handed over to {owner}, on call tonight; they own it."})
    text = f"Incident {tid} is owned overnight by {owner}. Tomorrow: write the post-mortem."
    ref.call("documents_create", {"path": note, "content": text})
    ref.answer(f"{tid} is assigned to {owner}, with a hand-over comment; the hand-off note is at {note}.")


def _postmortem(draft: Draft, world: World, service: str, tid: str, engineer: str, note: str) -> None:
    word, cause = world.rng.choice(CAUSES)
    fixed = f"0{world.rng.randrange(1, 6)}:{world.rng.choice(('05', '20', '40'))}"
    path = f"/Postmortems/{world.today.isoformat()} {service.capitalize()} incident"
    stage = draft.add_stage(
        "next_morning",
        NEXT_MORNING.format(service=service, path=path),
        {"days": 1, "at": "09:00"},
        notify="New mail arrived overnight.",
        context="notes",
        notes=note,
    )
    stage.update("tickets", "tickets", tid, {"status": "resolved"})
    body = f"{tid} is resolved. Root cause: {cause.format(service=service)}. I fixed it at {fixed} and it is stable."
    sent = world.at(world.today.isoformat(), fixed, 24 * 60 + 10)
    mail = {"id": "msg-d2", "sender": engineer, "to": [world.me.email], "subject": f"Re: {tid}", "body": body}
    stage.insert("mail", "messages", {**mail, "date": sent})
    ref = stage.reference
    ref.call("mail_search", {"query": tid, "folder": "inbox"}, save_as="found")
    ref.call("mail_read", {"message_id": "${found.messages[0].id}"}, save_as="news")
    content = f"Incident {tid} ({service}). From the on-call engineer: ${{news.body}}"
    ref.call("documents_create", {"path": path, "content": content}, role="main")
    ref.answer(f"The post-mortem is at {path}. From the on-call engineer: ${{news.body}}")
    checks = stage.checks
    written = field("path").eq(path) & field("content").contains(word) & field("content").contains(fixed)
    checks.record_exists("postmortem_written", "documents", "documents", written, 3.0)
    checks.answer_contains("root_cause_told", [word], 2.0)
    checks.unchanged("documents_guard", "documents", "documents", field("path").eq(path))
    checks.unchanged("tickets_left_alone", "tickets", "tickets")
