"""Leave request: follow the written leave policy: block the calendar, announce it, get approval if long."""

from __future__ import annotations

from datetime import date
from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.world import World

CHANNEL = "team-leave"
OOO = "Out of office"
OPENINGS = [
    "I'd like to take leave {first} {last}. Please do everything the leave policy asks for.",
    "Can you sort out my time off {first} {last}? Follow the leave policy in the documents.",
    "Please book my time off {first} {last} and do whatever our leave policy requires.",
]


class LeaveRequest(Blueprint):
    name = "leave_request"
    summary = "request leave the way the leave policy says: out-of-office event, team post, approval when long"
    options: ClassVar[frozenset[str]] = frozenset({"aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng, me, boss = world.rng, world.me, world.boss
        limit = rng.choice((2, 3, 5))
        policy = _policies(world, limit)
        _team_chat(world)
        world.contacts(extra=2)
        out = rng.randrange(5, 20)
        length = rng.randrange(2, 9)
        first, last = world.day(out), world.day(out + length - 1)
        working_days = sum(1 for i in range(length) if date.fromisoformat(world.day(out + i)).weekday() < 5)
        planning = {"title": "Sprint planning", "start": world.at(first, "10:00"), "end": world.at(first, "11:00")}
        world.add("calendar", "events", {**planning, "attendees": [me.email]})
        draft = _draft(self, world, first, last, policy)
        ref = draft.reference
        ref.call("documents_search", {"query": "leave policy"}, save_as="doc")
        ref.call("documents_read", {"document_id": "${doc.documents[0].id}"})
        ooo = {"title": OOO, "start": "${facts.first}T00:00", "end": "${facts.last}T23:59"}
        ref.call("calendar_create_event", ooo, role="main")
        text = f"{me.first} is on leave ${{facts.first}} to ${{facts.last}}."
        ref.call("chat_post_message", {"channel": CHANNEL, "text": text})
        answer = f"Your leave {first} to {last} is on the calendar and announced in #{CHANNEL}"
        if working_days > limit:
            _ask_approval(draft, world, first, last)
            answer += f"; it is longer than {limit} working days, so I asked {boss.name} to approve it"
        if "aggregate" in options:
            answer += f". That is {working_days} working days"
            draft.ask_figure("And tell me how many working days that is.", "days_told", working_days)
        ref.answer(answer + ".")
        _checks(draft, first, last)
        return draft


def _policies(world: World, limit: int) -> dict[str, Any]:
    """The leave policy (returned) and an unrelated one."""
    content = (
        "How to take leave:\n1. Add an all-day event titled 'Out of office' to your calendar for "
        f"the whole leave.\n2. Announce the dates in #{CHANNEL}.\n3. Leave longer than {limit} working "
        "days needs your manager's approval: send them a direct message asking to approve."
    )
    doc = {"path": "/People/Leave policy", "title": "Leave policy", "updated": world.day(-100), "content": content}
    policy = world.add("documents", "documents", doc)
    other = {"path": "/People/Expense policy", "title": "Expense policy", "content": "Submit receipts within 30 days."}
    world.add("documents", "documents", {**other, "updated": world.day(-90)})
    return policy


def _team_chat(world: World) -> None:
    for name in (CHANNEL, "general"):
        world.add("chat", "channels", {"name": name, "members": [world.me.email], "topic": name})
    post = {"channel": CHANNEL, "author": world.person().email, "text": f"I'm off on {world.day(4)}."}
    world.add("chat", "messages", {**post, "ts": f"{world.day(-2)}T10:00"})


def _draft(bp: Blueprint, world: World, first: str, last: str, policy: dict[str, Any]) -> Draft:
    facts = {
        "first": Fact(
            "first",
            first,
            f"from {first}",
            ["start", "first day", "from when", "begin"],
            "From which day does your leave start?",
            f"It starts on {first}.",
        ),
        "last": Fact(
            "last",
            last,
            f"to {last}",
            ["last day", "until", "return", "end"],
            "What is the last day of your leave?",
            f"The last day is {last}.",
        ),
    }
    readable = [("documents", "documents", policy["id"], "content")]
    draft = Draft.start(bp.name, "Request leave", world, OPENINGS, facts, set(bp.capabilities), readable)
    draft.summary = [first, last]
    return draft


def _ask_approval(draft: Draft, world: World, first: str, last: str) -> None:
    """Leave over the limit: ask the manager (looked up in the directory) to approve by DM."""
    draft.reference.call("contacts_search", {"query": world.me.name}, save_as="me")
    text = f"Could you approve my leave from {first} to {last}?"
    draft.reference.call("chat_send_dm", {"user": "${me.contacts[0].manager_email}", "text": text})
    asked = field("channel").eq(f"dm:{world.boss.email}") & field("text").contains(first)
    draft.checks.record_exists("approval_asked", "chat", "messages", asked, 2.0)


def _checks(draft: Draft, first: str, last: str) -> None:
    ooo = and_(field("title").eq(OOO), field("start").startswith(first), field("end").startswith(last))
    draft.checks.record_exists("out_of_office", "calendar", "events", ooo, 3.0)
    announced = and_(field("channel").eq(CHANNEL), field("text").contains(first), field("text").contains(last))
    draft.checks.record_exists("announced", "chat", "messages", announced, 1.5)
    draft.checks.unchanged("calendar_guard", "calendar", "events", field("title").eq(OOO), 1.5)
