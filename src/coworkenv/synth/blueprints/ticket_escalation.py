"""Ticket escalation to the on-call owner: raise priority, assign to whoever is on call now, ping them."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import field
from coworkenv.synth.world import TEAMS, Person, World, noise_tickets

PROBLEMS = (
    "checkout returns 500 errors",
    "login emails are not delivered",
    "search results are empty",
    "invoices show the wrong currency",
    "mobile app crashes on start",
    "exports time out",
)
OPENINGS = [
    "The {team} ticket reporting that {problem} is hurting customers. Escalate it: make it urgent, "
    "assign it to whoever is on call for {team} right now, and ping them on chat with the ticket id.",
    "Please escalate the open ticket where {problem} ({team} team): set priority to urgent, hand it to "
    "the engineer currently on call for {team}, and send them a direct chat message about it.",
    "Customers say {problem}. Find that {team} ticket, bump it to urgent, assign it to the current "
    "{team} on-call person and DM them the ticket id.",
]
ENGINEER = "${oc.shifts[0].engineer}"


class TicketEscalation(Blueprint):
    name = "ticket_escalation"
    summary = "escalate a ticket: urgent priority, assign to the team's current on-call engineer, notify them"
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate", "follow_up"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        team = rng.choice(TEAMS)
        problem = rng.choice(PROBLEMS)
        now = f"{rng.randrange(9, 17):02d}:{rng.choice(('05', '20', '35', '50'))}"
        engineers = _rota(world, team)
        ticket = _tickets(world, team, problem)
        tid = ticket["id"]
        draft = _draft(self, world, team, problem, now, ticket)
        ref = draft.reference
        ref.call("tickets_search", {"query": problem.split()[0], "team": team, "status": "open"}, save_as="t")
        ref.call("tickets_get", {"ticket_id": "${t.tickets[0].id}"})
        ref.call("tickets_get_oncall", {"team": team, "at": f"{world.day(0)}T{now}"}, save_as="oc", role="oncall")
        owner = _swap(draft, world, team) if "dynamic" in options else engineers[1]
        ref.call("tickets_update", {"ticket_id": "${t.tickets[0].id}", "priority": "urgent"})
        ref.call("tickets_assign", {"ticket_id": "${t.tickets[0].id}", "assignee": ENGINEER}, role="main")
        ref.call("chat_send_dm", {"user": ENGINEER, "text": f"Escalated {tid} to you (urgent): {ticket['title']}."})
        answer = f"{tid} is now urgent and assigned to {ENGINEER}, who is on call for {team}; I sent them a DM."
        world.ensure("chat", "channels", "messages")
        if "aggregate" in options:
            answer += _count_open(draft, world, team)
        ref.answer(answer)
        draft.summary = [tid, owner.email]
        _checks(draft, tid, owner)
        if "follow_up" in options:
            _comment(draft, tid)
        return draft


def _rota(world: World, team: str) -> list[Person]:
    """On-call shifts: yesterday's, today's and tomorrow's for the team, and another team's; returns the engineers."""
    today = world.day(0)
    engineers = [world.person("Engineering", title="Site Reliability Engineer") for _ in range(4)]
    other = world.rng.choice([t for t in TEAMS if t != team])
    shifts = [
        (team, world.day(-1), today, engineers[0]),
        (team, today, world.day(1), engineers[1]),
        (team, world.day(1), world.day(2), engineers[2]),
        (other, world.day(-1), world.day(2), engineers[3]),
    ]
    for who, start, end, eng in shifts:
        shift = {"team": who, "engineer": eng.email, "start": f"{start}T08:00", "end": f"{end}T08:00"}
        world.add("tickets", "oncall", shift)
    return engineers


def _tickets(world: World, team: str, problem: str) -> dict[str, Any]:
    """Other teams' tickets, an old closed one on the same problem, the ticket to escalate (returned), noise."""
    noise_tickets(world, world.rng.randrange(2, 5), tuple(t for t in TEAMS if t != team))
    old = {"title": f"Old: {problem} (staging)", "team": team, "status": "closed", "priority": "low"}
    world.add("tickets", "tickets", {**old, "created": world.day(-30)})
    ticket = {
        "title": f"Customers report {problem}",
        "team": team,
        "priority": "high",
        "status": "open",
        "description": f"Since this morning {problem}. Several customers affected.",
        "created": world.day(0),
        "reporter": world.person("Support").email,
    }
    ticket = world.add("tickets", "tickets", ticket)
    noise_tickets(world, world.rng.randrange(1, 3), (team,))
    return ticket


def _draft(bp: Blueprint, world: World, team: str, problem: str, now: str, ticket: dict[str, Any]) -> Draft:
    facts = {
        "team": stated("team", team),
        "problem": stated("problem", problem),
    }
    readable = [("tickets", "tickets", ticket["id"], "description")]
    title = f"Escalate '{ticket['title']}'"
    draft = Draft.start(bp.name, title, world, OPENINGS, facts, set(bp.capabilities), readable)
    draft.context += f" It is now {now}."
    return draft


def _swap(draft: Draft, world: World, team: str) -> Person:
    """The ``dynamic`` option: someone takes over today's shift once the agent looked; returns them."""
    owner = world.person("Engineering", title="Site Reliability Engineer")
    shift = {
        "service": "tickets",
        "collection": "oncall",
        "op": "update",
        "id": world.fixtures["tickets"]["oncall"][1]["id"],
    }
    notice = f"On-call swap: {owner.name} has just taken over the {team} shift."
    mutation = {**shift, "record": {"engineer": owner.email}}
    draft.events.append(
        {"id": "oncall-swap", "on_tool": "tickets_get_oncall", "notify": notice, "mutations": [mutation]}
    )
    draft.reference.again("oncall", "The on-call rota just changed; checking who is on call now.")
    return owner


def _count_open(draft: Draft, world: World, team: str) -> str:
    """The ``aggregate`` option: how many open tickets the team has."""
    draft.reference.call("tickets_search", {"team": team, "status": "open"}, save_as="open")
    tickets = world.fixtures["tickets"]["tickets"]
    count = sum(1 for t in tickets if t["team"] == team and t["status"] == "open")
    draft.ask_figure("Also tell me how many open tickets {team} has.", "open_told", count, label="open ticket")
    return f" {team} has ${{open.total}} open tickets."


def _checks(draft: Draft, tid: str, owner: Person) -> None:
    draft.checks.field_equals("assigned", "tickets", "tickets", tid, "assignee", owner.email, 3.0)
    draft.checks.field_equals("urgent", "tickets", "tickets", tid, "priority", "urgent")
    pinged = field("channel").eq(f"dm:{owner.email}") & field("text").contains(tid)
    draft.checks.record_exists("pinged", "chat", "messages", pinged, 1.5)
    draft.checks.unchanged("tickets_guard", "tickets", "tickets", field("id").eq(tid), 2.0)
    draft.checks.answer_contains("told_owner", [owner.email])


def _comment(draft: Draft, tid: str) -> None:
    """The ``follow_up`` option: note on the ticket that support told the customers."""
    text = "Support has notified the affected customers."
    draft.add_follow_up(
        "Thanks. Please also comment on the ticket that support has told the affected customers.",
        [{"call": "tickets_comment", "args": {"ticket_id": "${t.tickets[0].id}", "text": text}}],
        f"I added the comment to {tid}.",
    )
    commented = field("id").eq(tid) & field("comments").join(" ").count("customers").eq(1)  # one comment, not two
    draft.checks.record_exists("commented", "tickets", "tickets", commented, group="follow_up")
