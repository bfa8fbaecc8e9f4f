"""Weekly report synthesis: count a team's tickets, total the won deals, file the report, state the figures."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import TEAMS, World, noise_tickets


class WeeklyReport(Blueprint):
    name = "weekly_report"
    summary = "write the weekly report from the tracker and the CRM into a document and state the numbers"
    capabilities = ("tool_coordination", "information_synthesis")
    options: ClassVar[frozenset[str]] = frozenset({"dynamic"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        team = rng.choice(TEAMS)
        for _ in range(rng.randrange(5, 10)):
            world.add(
                "tickets",
                "tickets",
                {
                    "title": world.fake.catch_phrase(),
                    "team": team,
                    "status": rng.choice(("open", "open", "resolved", "in_progress")),
                    "created": world.day(-rng.randrange(1, 10)),
                },
            )
        world.add(
            "tickets",
            "tickets",
            {"title": world.fake.catch_phrase(), "team": team, "status": "open", "created": world.day(-1)},
        )
        noise_tickets(world, rng.randrange(3, 6), tuple(t for t in TEAMS if t != team))
        seller = world.person("Sales", title="Account Executive")
        others = [world.person("Sales", title="Account Executive") for _ in range(2)]
        for who in (seller, *others):
            for _ in range(rng.randrange(2, 4)):
                company, _ = world.customer()
                acc = world.add("crm", "accounts", {"name": company, "owner": who.email})
                world.add(
                    "crm",
                    "deals",
                    {
                        "account_id": acc["id"],
                        "name": f"{company} deal",
                        "owner": who.email,
                        "stage": rng.choice(("won", "won", "negotiation", "lost")),
                        "amount": float(rng.randrange(5, 80) * 1000),
                        "close_date": world.day(-2),
                    },
                )
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
        day = world.day(0)
        path = f"/Reports/{team} weekly {day}"
        tickets = world.fixtures["tickets"]["tickets"]
        resolved = sum(1 for t in tickets if t["team"] == team and t["status"] == "resolved")
        still_open = sum(1 for t in tickets if t["team"] == team and t["status"] == "open")
        won = sum(
            d["amount"] for d in world.fixtures["crm"]["deals"] if d["owner"] == seller.email and d["stage"] == "won"
        )
        draft = Draft(
            blueprint=self.name,
            title=f"Weekly report for {team}",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "Please write this week's report for the {team} team using the report template: how many of their "
                "tickets are resolved, how many are still open, and the total of deals won by {seller}. Save it as "
                "'{path}' and tell me the numbers.",
                "Time for the weekly report. Count the {team} team's resolved and open tickets and total the deals "
                "won by {seller}, fill in the report template, save it at '{path}', and give me the figures.",
                "Please put together the {team} weekly report from the report template: resolved and open ticket "
                "counts for the {team} team plus the total of deals won by {seller}. Save it as '{path}' and tell me "
                "the figures.",
            ],
            facts={
                "team": Fact("team", team, team, ["team"], "", "", withholdable=False),
                "seller": Fact(
                    "seller", seller.name, f"{seller.name} ({seller.email})", ["seller"], "", "", withholdable=False
                ),
                "path": Fact("path", path, path, ["path"], "", "", withholdable=False),
            },
            reference=[
                {"call": "documents_search", "args": {"query": "report template"}, "save_as": "tpl"},
                {"call": "documents_read", "args": {"document_id": "${tpl.documents[0].id}"}},
                {"call": "tickets_search", "args": {"team": team, "status": "resolved"}, "save_as": "res"},
                {"call": "tickets_search", "args": {"team": team, "status": "open"}, "save_as": "open"},
            ],
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("documents", "documents", template["id"], "content")],
        )
        ref = draft.reference
        if "dynamic" in options:
            flip = next(t for t in tickets if t["team"] == team and t["status"] == "open")
            draft.events.append(
                {
                    "id": "ticket-resolved",
                    "on_tool": "tickets_search",
                    "notify": f"Tracker update: {flip['id']} was just resolved.",
                    "mutations": [
                        {
                            "service": "tickets",
                            "collection": "tickets",
                            "op": "update",
                            "id": flip["id"],
                            "record": {"status": "resolved"},
                        }
                    ],
                }
            )
            ref[2:4] = [
                ref[2],
                {
                    "call": "tickets_search",
                    "args": {"team": team, "status": "resolved"},
                    "save_as": "res",
                    "say": "A ticket just changed; counting again.",
                },
                ref[3],
            ]
            resolved, still_open = resolved + 1, still_open - 1
        content = (
            "Weekly report\nResolved tickets: ${res.total}\nOpen tickets: ${open.total}\n"
            "Won deals (USD): ${sum(won.deals[*].amount)}"
        )
        ref += [
            {"call": "crm_list_deals", "args": {"owner": seller.email, "stage": "won"}, "save_as": "won"},
            {"call": "documents_create", "args": {"path": path, "content": content}, "_main": True},
            {
                "answer": f"Saved {path}: ${{res.total}} resolved and ${{open.total}} open {team} tickets; "
                f"{seller.first}'s won deals total ${{sum(won.deals[*].amount)}} USD."
            },
        ]
        draft.summary = [f"resolved {resolved}", f"open {still_open}"]
        figures = (
            f"contains(r.content, 'Resolved tickets: {resolved}') and contains(r.content, 'Open tickets: "
            f"{still_open}') and contains(r.content, '{won:.0f}')"
        )
        draft.check(
            "record_exists",
            "report_saved",
            3.0,
            service="documents",
            collection="documents",
            where=f"r.path == '{path}' and {figures}",
        )
        draft.check("answer_number", "told_resolved", 1.0, value=resolved, tolerance=0)
        draft.check("answer_number", "told_open", 1.0, value=still_open, tolerance=0)
        draft.check("answer_number", "told_won", 1.0, value=won, tolerance=0.01)
        draft.check(
            "unchanged", "docs_guard", 1.0, service="documents", collection="documents", allow=f"r.path == '{path}'"
        )
        return draft
