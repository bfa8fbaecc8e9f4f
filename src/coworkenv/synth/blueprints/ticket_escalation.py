"""Ticket escalation to the on-call owner: raise priority, assign to whoever is on call now, ping them."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import TEAMS, World, noise_tickets

PROBLEMS = (
    "checkout returns 500 errors",
    "login emails are not delivered",
    "search results are empty",
    "invoices show the wrong currency",
    "mobile app crashes on start",
    "exports time out",
)


class TicketEscalation(Blueprint):
    name = "ticket_escalation"
    summary = "escalate a ticket: urgent priority, assign to the team's current on-call engineer, notify them"
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate", "follow_up"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        team = rng.choice(TEAMS)
        problem = rng.choice(PROBLEMS)
        word = problem.split()[0]
        now = f"{rng.randrange(9, 17):02d}:{rng.choice(('05', '20', '35', '50'))}"
        today = world.day(0)
        engineers = [world.person("Engineering", title="Site Reliability Engineer") for _ in range(4)]
        other = rng.choice([t for t in TEAMS if t != team])
        shifts = [
            (team, world.day(-1), today, engineers[0]),
            (team, today, world.day(1), engineers[1]),
            (team, world.day(1), world.day(2), engineers[2]),
            (other, world.day(-1), world.day(2), engineers[3]),
        ]
        for who, start, end, eng in shifts:
            world.add(
                "tickets",
                "oncall",
                {"team": who, "engineer": eng.email, "start": f"{start}T08:00", "end": f"{end}T08:00"},
            )
        noise_tickets(world, rng.randrange(2, 5), tuple(t for t in TEAMS if t != team))
        world.add(
            "tickets",
            "tickets",
            {
                "title": f"Old: {problem} (staging)",
                "team": team,
                "status": "closed",
                "priority": "low",
                "created": world.day(-30),
            },
        )
        ticket = world.add(
            "tickets",
            "tickets",
            {
                "title": f"Customers report {problem}",
                "team": team,
                "priority": "high",
                "status": "open",
                "description": f"Since this morning {problem}. Several customers affected.",
                "created": today,
                "reporter": world.person("Support").email,
            },
        )
        noise_tickets(world, rng.randrange(1, 3), (team,))
        tid = ticket["id"]
        draft = Draft(
            blueprint=self.name,
            title=f"Escalate '{ticket['title']}'",
            persona=world.persona(),
            context=world.context() + f" It is now {now}.",
            fixtures=world.fixtures,
            openings=[
                "The {team} ticket reporting that {problem} is hurting customers. Escalate it: make it urgent, "
                "assign it to whoever is on call for {team} right now, and ping them on chat with the ticket id.",
                "Please escalate the open ticket where {problem} ({team} team): set priority to urgent, hand it to "
                "the engineer currently on call for {team}, and send them a direct chat message about it.",
                "Customers say {problem}. Find that {team} ticket, bump it to urgent, assign it to the current "
                "{team} on-call person and DM them the ticket id.",
            ],
            facts={
                "team": Fact("team", team, team, ["team"], "", "", withholdable=False),
                "problem": Fact("problem", problem, problem, ["problem"], "", "", withholdable=False),
            },
            reference=[
                {"call": "tickets_search", "args": {"query": word, "team": team, "status": "open"}, "save_as": "t"},
                {"call": "tickets_get", "args": {"ticket_id": "${t.tickets[0].id}"}},
                {"call": "tickets_get_oncall", "args": {"team": team, "at": f"{today}T{now}"}, "save_as": "oc"},
            ],
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("tickets", "tickets", tid, "description")],
        )
        ref = draft.reference
        owner = engineers[1]
        if "dynamic" in options:
            owner = world.person("Engineering", title="Site Reliability Engineer")
            shift_id = world.fixtures["tickets"]["oncall"][1]["id"]
            draft.events.append(
                {
                    "id": "oncall-swap",
                    "on_tool": "tickets_get_oncall",
                    "notify": f"On-call swap: {owner.name} has just taken over the {team} shift.",
                    "mutations": [
                        {
                            "service": "tickets",
                            "collection": "oncall",
                            "op": "update",
                            "id": shift_id,
                            "record": {"engineer": owner.email},
                        }
                    ],
                }
            )
            ref.append(
                {
                    "call": "tickets_get_oncall",
                    "args": {"team": team, "at": f"{today}T{now}"},
                    "save_as": "oc",
                    "say": "The on-call rota just changed; checking who is on call now.",
                }
            )
        engineer = "${oc.shifts[0].engineer}"
        ref += [
            {"call": "tickets_update", "args": {"ticket_id": "${t.tickets[0].id}", "priority": "urgent"}},
            {
                "call": "tickets_assign",
                "_main": True,
                "args": {"ticket_id": "${t.tickets[0].id}", "assignee": engineer},
            },
            {
                "call": "chat_send_dm",
                "args": {"user": engineer, "text": f"Escalated {tid} to you (urgent): {ticket['title']}."},
            },
        ]
        answer = f"{tid} is now urgent and assigned to {engineer}, who is on call for {team}; I sent them a DM."
        world.ensure("chat", "channels", "messages")
        if "aggregate" in options:
            ref.append({"call": "tickets_search", "args": {"team": team, "status": "open"}, "save_as": "open"})
            count = sum(1 for t in world.fixtures["tickets"]["tickets"] if t["team"] == team and t["status"] == "open")
            answer += f" {team} has ${{open.total}} open tickets."
            draft.ask_figure("Also tell me how many open tickets {team} has.", "open_told", count)
        ref.append({"answer": answer})
        draft.summary = [tid, owner.email]
        draft.check(
            "field_equals",
            "assigned",
            3.0,
            service="tickets",
            collection="tickets",
            record_id=tid,
            field="assignee",
            value=owner.email,
        )
        draft.check(
            "field_equals",
            "urgent",
            1.0,
            service="tickets",
            collection="tickets",
            record_id=tid,
            field="priority",
            value="urgent",
        )
        draft.check(
            "record_exists",
            "pinged",
            1.5,
            service="chat",
            collection="messages",
            where=f"r.channel == 'dm:{owner.email}' and contains(r.text, '{tid}')",
        )
        draft.check(
            "unchanged", "tickets_guard", 2.0, service="tickets", collection="tickets", allow=f"r.id == '{tid}'"
        )
        draft.check("answer_contains", "told_owner", 1.0, values=[owner.email])
        if "follow_up" in options:
            draft.add_follow_up(
                "Thanks. Please also comment on the ticket that support has told the affected customers.",
                [
                    {
                        "call": "tickets_comment",
                        "args": {
                            "ticket_id": "${t.tickets[0].id}",
                            "text": "Support has notified the affected customers.",
                        },
                    }
                ],
                f"I added the comment to {tid}.",
            )
            draft.check(
                "record_exists",
                "commented",
                1.0,
                service="tickets",
                collection="tickets",
                _group="follow_up",
                where=f"r.id == '{tid}' and contains(join(r.comments, ' '), 'customers')",
            )
        return draft
