"""Weekly report synthesis: count a team's tickets, total the won deals, file the report, state the figures."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.world import TEAMS, Person, World, noise_tickets

OPENINGS = [
    "Please write this week's report for the {team} team using the report template: how many of their "
    "tickets are resolved, how many are still open, and the total of deals won by {seller}. Save it as "
    "'{path}' and tell me the numbers.",
    "Time for the weekly report. Count the {team} team's resolved and open tickets and total the deals "
    "won by {seller}, fill in the report template, save it at '{path}', and give me the figures.",
    "Please put together the {team} weekly report from the report template: resolved and open ticket "
    "counts for the {team} team plus the total of deals won by {seller}. Save it as '{path}' and tell me "
    "the figures.",
]
REPORT = (
    "Weekly report\nResolved tickets: ${res.total}\nOpen tickets: ${open.total}\n"
    "Won deals (USD): ${sum(won.deals[*].amount)}"
)


class WeeklyReport(Blueprint):
    name = "weekly_report"
    summary = "write the weekly report from the tracker and the CRM into a document and state the numbers"
    capabilities = ("tool_coordination", "information_synthesis")
    options: ClassVar[frozenset[str]] = frozenset({"dynamic"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        team = world.rng.choice(TEAMS)
        _tickets(world, team)
        seller = _deals(world)
        template = world.add(
            "documents",
            "documents",
            {
                "path": "/Reports/Template",
                "title": "Weekly report template",
                "updated": world.day(-90),
                "content": "Weekly report\nResolved tickets: <n>\nOpen tickets: <n>\nWon deals (USD): <total>",
            },
        )
        path = f"/Reports/{team} weekly {world.day(0)}"
        tickets = [t for t in world.fixtures["tickets"]["tickets"] if t["team"] == team]
        resolved = sum(1 for t in tickets if t["status"] == "resolved")
        still_open = sum(1 for t in tickets if t["status"] == "open")
        deals = world.fixtures["crm"]["deals"]
        won = sum(d["amount"] for d in deals if d["owner"] == seller.email and d["stage"] == "won")
        draft = _draft(self, world, team, seller, path, template)
        ref = draft.reference
        ref.call("documents_search", {"query": "report template"}, save_as="tpl")
        ref.call("documents_read", {"document_id": "${tpl.documents[0].id}"})
        ref.call("tickets_search", {"team": team, "status": "resolved"}, save_as="res", role="resolved")
        ref.call("tickets_search", {"team": team, "status": "open"}, save_as="open", role="open")
        if "dynamic" in options:
            _resolve_one(draft, next(t for t in tickets if t["status"] == "open"))
            resolved, still_open = resolved + 1, still_open - 1
        ref.call("crm_list_deals", {"owner": seller.email, "stage": "won"}, save_as="won")
        ref.call("documents_create", {"path": path, "content": REPORT}, role="main")
        ref.answer(
            f"Saved {path}: ${{res.total}} resolved and ${{open.total}} open {team} tickets; "
            f"{seller.first}'s won deals total ${{sum(won.deals[*].amount)}} USD."
        )
        draft.summary = [f"resolved {resolved}", f"open {still_open}"]
        _checks(draft, path, resolved, still_open, won)
        return draft


def _tickets(world: World, team: str) -> None:
    """The team's tickets in assorted states (one surely open) and other teams' tickets."""
    rng = world.rng
    for _ in range(rng.randrange(5, 10)):
        ticket = {"title": world.fake.catch_phrase(), "team": team}
        status = rng.choice(("open", "open", "resolved", "in_progress"))
        world.add("tickets", "tickets", {**ticket, "status": status, "created": world.day(-rng.randrange(1, 10))})
    ticket = {"title": world.fake.catch_phrase(), "team": team, "status": "open", "created": world.day(-1)}
    world.add("tickets", "tickets", ticket)
    noise_tickets(world, rng.randrange(3, 6), tuple(t for t in TEAMS if t != team))


def _deals(world: World) -> Person:
    """Accounts and deals of three account executives; returns the one the report is about."""
    rng = world.rng
    seller = world.person("Sales", title="Account Executive")
    others = [world.person("Sales", title="Account Executive") for _ in range(2)]
    for who in (seller, *others):
        for _ in range(rng.randrange(2, 4)):
            company, _ = world.customer()
            acc = world.add("crm", "accounts", {"name": company, "owner": who.email})
            deal = {"account_id": acc["id"], "name": f"{company} deal", "owner": who.email}
            stage = rng.choice(("won", "won", "negotiation", "lost"))
            amount = float(rng.randrange(5, 80) * 1000)
            world.add("crm", "deals", {**deal, "stage": stage, "amount": amount, "close_date": world.day(-2)})
    return seller


def _draft(bp: Blueprint, world: World, team: str, seller: Person, path: str, template: dict[str, Any]) -> Draft:
    facts = {
        "team": stated("team", team),
        "seller": stated("seller", seller.name, given=f"{seller.name} ({seller.email})"),
        "path": stated("path", path),
    }
    readable = [("documents", "documents", template["id"], "content")]
    title = f"Weekly report for {team}"
    return Draft.start(bp.name, title, world, OPENINGS, facts, set(bp.capabilities), readable)


def _resolve_one(draft: Draft, flip: dict[str, Any]) -> None:
    """The ``dynamic`` option: an open ticket is resolved once the agent counted; count the resolved again."""
    change = {"service": "tickets", "collection": "tickets", "op": "update", "id": flip["id"]}
    mutation = {**change, "record": {"status": "resolved"}}
    notice = f"Tracker update: {flip['id']} was just resolved."
    draft.events.append(
        {"id": "ticket-resolved", "on_tool": "tickets_search", "notify": notice, "mutations": [mutation]}
    )
    resolved = draft.reference.role("resolved")
    again = {
        "call": "tickets_search",
        "args": resolved["args"],
        "save_as": "res",
        "say": "A ticket just changed; counting again.",
    }
    draft.reference.insert_before("open", again)


def _checks(draft: Draft, path: str, resolved: int, still_open: int, won: float) -> None:
    content = field("content")
    figures = [
        content.contains(f"Resolved tickets: {resolved}"),
        content.contains(f"Open tickets: {still_open}"),
        content.contains(f"{won:.0f}"),
    ]
    draft.checks.record_exists("report_saved", "documents", "documents", and_(field("path").eq(path), *figures), 3.0)
    draft.checks.answer_counts("told_tickets", {"resolved": resolved, "open": still_open}, 2.0)
    draft.checks.answer_number("told_won", won, 0.01, 1.0)
    draft.checks.unchanged("docs_guard", "documents", "documents", field("path").eq(path))
