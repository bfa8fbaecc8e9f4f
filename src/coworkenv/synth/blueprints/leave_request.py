"""Leave request: follow the written leave policy: block the calendar, announce it, get approval if long."""

from __future__ import annotations

from datetime import date
from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World


class LeaveRequest(Blueprint):
    name = "leave_request"
    summary = "request leave the way the leave policy says: out-of-office event, team post, approval when long"
    options: ClassVar[frozenset[str]] = frozenset({"aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng, me, boss = world.rng, world.me, world.boss
        limit = rng.choice((2, 3, 5))
        channel = "team-leave"
        policy = world.add(
            "documents",
            "documents",
            {
                "path": "/People/Leave policy",
                "title": "Leave policy",
                "updated": world.day(-100),
                "content": "How to take leave:\n1. Add an all-day event titled 'Out of office' to your calendar for "
                f"the whole leave.\n2. Announce the dates in #{channel}.\n3. Leave longer than {limit} working "
                "days needs your manager's approval: send them a direct message asking to approve.",
            },
        )
        world.add(
            "documents",
            "documents",
            {
                "path": "/People/Expense policy",
                "title": "Expense policy",
                "content": "Submit receipts within 30 days.",
                "updated": world.day(-90),
            },
        )
        for name in (channel, "general"):
            world.add("chat", "channels", {"name": name, "members": [me.email], "topic": name})
        world.add(
            "chat",
            "messages",
            {
                "channel": channel,
                "author": world.person().email,
                "text": f"I'm off on {world.day(4)}.",
                "ts": f"{world.day(-2)}T10:00",
            },
        )
        world.contacts(extra=2)
        out = rng.randrange(5, 20)
        length = rng.randrange(2, 9)
        first, last = world.day(out), world.day(out + length - 1)
        working_days = sum(1 for i in range(length) if date.fromisoformat(world.day(out + i)).weekday() < 5)
        long = working_days > limit
        world.add(
            "calendar",
            "events",
            {
                "title": "Sprint planning",
                "start": world.at(first, "10:00"),
                "end": world.at(first, "11:00"),
                "attendees": [me.email],
            },
        )
        draft = Draft(
            blueprint=self.name,
            title="Request leave",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "I'd like to take leave {first} {last}. Please do everything the leave policy asks for.",
                "Can you sort out my time off {first} {last}? Follow the leave policy in the documents.",
                "Please book my time off {first} {last} and do whatever our leave policy requires.",
            ],
            facts={
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
            },
            reference=[
                {"call": "documents_search", "args": {"query": "leave policy"}, "save_as": "doc"},
                {"call": "documents_read", "args": {"document_id": "${doc.documents[0].id}"}},
                {
                    "call": "calendar_create_event",
                    "_main": True,
                    "args": {"title": "Out of office", "start": "${facts.first}T00:00", "end": "${facts.last}T23:59"},
                },
                {
                    "call": "chat_post_message",
                    "args": {
                        "channel": channel,
                        "text": f"{me.first} is on leave ${{facts.first}} to ${{facts.last}}.",
                    },
                },
            ],
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("documents", "documents", policy["id"], "content")],
            summary=[first, last],
        )
        ref = draft.reference
        answer = f"Your leave {first} to {last} is on the calendar and announced in #{channel}"
        if long:
            ref += [
                {"call": "contacts_search", "args": {"query": me.name}, "save_as": "me"},
                {
                    "call": "chat_send_dm",
                    "args": {
                        "user": "${me.contacts[0].manager_email}",
                        "text": f"Could you approve my leave from {first} to {last}?",
                    },
                },
            ]
            answer += f"; it is longer than {limit} working days, so I asked {boss.name} to approve it"
            draft.check(
                "record_exists",
                "approval_asked",
                2.0,
                service="chat",
                collection="messages",
                where=f"r.channel == 'dm:{boss.email}' and contains(r.text, '{first}')",
            )
        if "aggregate" in options:
            answer += f". That is {working_days} working days"
            draft.ask_figure("And tell me how many working days that is.", "days_told", working_days)
        ref.append({"answer": answer + "."})
        draft.check(
            "record_exists",
            "out_of_office",
            3.0,
            service="calendar",
            collection="events",
            where=f"r.title == 'Out of office' and startswith(r.start, '{first}') and startswith(r.end, '{last}')",
        )
        draft.check(
            "record_exists",
            "announced",
            1.5,
            service="chat",
            collection="messages",
            where=f"r.channel == '{channel}' and contains(r.text, '{first}') and contains(r.text, '{last}')",
        )
        draft.check(
            "unchanged",
            "calendar_guard",
            1.5,
            service="calendar",
            collection="events",
            allow="r.title == 'Out of office'",
        )
        return draft
