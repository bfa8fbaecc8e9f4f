"""Access request: get the requester's manager to approve, then open the access ticket for IT."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World, manager_change, noise_tickets

SYSTEMS = (
    "Salesforce",
    "the finance data warehouse",
    "GitHub admin",
    "the payroll system",
    "Tableau",
    "the production database",
    "Figma",
    "the HR portal",
)


class AccessRequest(Blueprint):
    name = "access_request"
    summary = "handle an access request from chat: ask the requester's manager to approve, open the IT ticket"
    capabilities = ("tool_coordination", "workflow_compliance")
    options: ClassVar[frozenset[str]] = frozenset({"dynamic"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        manager = world.person()
        requester = world.person(manager.department, manager=manager)
        bystander = world.person(manager=world.person())
        world.contacts(requester, manager, bystander, extra=2)
        system, other_system = rng.sample(SYSTEMS, 2)
        world.add("chat", "channels", {"name": "it-requests", "members": [world.me.email], "topic": "Access requests"})
        world.add("chat", "channels", {"name": "general", "members": [world.me.email], "topic": "Everything else"})
        world.add(
            "chat",
            "messages",
            {
                "channel": "it-requests",
                "author": bystander.email,
                "text": f"Could I get access to {other_system}?",
                "ts": f"{world.day(-2)}T11:00",
            },
        )
        request = world.add(
            "chat",
            "messages",
            {
                "channel": "it-requests",
                "author": requester.email,
                "ts": f"{world.day(-1)}T15:20",
                "text": f"Hi! I need access to {system} for the quarterly close. Thanks, {requester.first}",
            },
        )
        world.add(
            "chat",
            "messages",
            {"channel": "general", "author": manager.email, "text": "Lunch at noon?", "ts": f"{world.day(-1)}T11:00"},
        )
        noise_tickets(world, rng.randrange(2, 4))
        world.add(
            "tickets",
            "tickets",
            {
                "title": f"Laptop replacement for {bystander.name}",
                "team": "it",
                "status": "open",
                "created": world.day(-3),
            },
        )
        title = f"Access to {system} for {requester.name}"
        draft = Draft(
            blueprint=self.name,
            title=f"Access request from {requester.name}",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "{requester} asked for access in #it-requests. Please handle it: ask their manager to approve it "
                "by direct message, then open a ticket for the it team tagged 'access'.",
                "Can you process {requester}'s access request from the #it-requests channel? Their manager has to "
                "approve (DM them), and IT needs a ticket (team it, tag access).",
                "There's an access request from {requester} in #it-requests. Per our process, DM their manager to "
                "approve it and then raise a ticket for the it team with the tag 'access'.",
            ],
            facts={
                "requester": Fact(
                    "requester", requester.name, requester.name, ["requester"], "", "", withholdable=False
                )
            },
            reference=[
                {"call": "contacts_search", "args": {"query": requester.name}, "save_as": "who"},
                {
                    "call": "chat_search_messages",
                    "args": {"channel": "it-requests", "author": "${who.contacts[0].email}"},
                },
            ],
            checks=[],
            capabilities=set(self.capabilities),
            policies=[
                {
                    "id": "manager-first",
                    "tool": "tickets_create",
                    "rule": "require_prior",
                    "when": "'access' in args.tags",
                    "prior_tool": "chat_send_dm",
                    "prior_when": "contains(prior.text, 'approv')",
                    "description": "Access tickets may only be opened after asking the requester's manager to approve.",
                }
            ],
            readable=[("chat", "messages", request["id"], "text")],
            summary=[system, manager.name],
        )
        ref = draft.reference
        approver = manager
        if "dynamic" in options:
            approver = world.person(manager.department, title=f"{manager.department} Manager")
            draft.events.append(manager_change(world, requester, approver))
            ref.append(
                {
                    "call": "contacts_search",
                    "args": {"query": requester.name},
                    "save_as": "who",
                    "say": "The directory just changed; checking their manager again.",
                }
            )
            draft.summary = [system, approver.name]
        ref += [
            {
                "call": "chat_send_dm",
                "args": {
                    "user": "${who.contacts[0].manager_email}",
                    "text": f"{requester.name} requests access to {system}. Could you approve this request?",
                },
            },
            {
                "call": "tickets_create",
                "_main": True,
                "args": {
                    "title": title,
                    "team": "it",
                    "tags": ["access"],
                    "description": f"Requested in #it-requests by {requester.email}; manager approval asked.",
                },
            },
            {
                "answer": f"I asked ${{who.contacts[0].manager_email}} to approve {requester.first}'s access to "
                f"{system} and opened the IT ticket."
            },
        ]
        draft.check(
            "record_exists",
            "ticket",
            3.0,
            service="tickets",
            collection="tickets",
            where=f"r.team == 'it' and 'access' in r.tags and contains(r.title, '{system}')",
        )
        draft.check(
            "record_exists",
            "approval_asked",
            2.0,
            service="chat",
            collection="messages",
            where=f"r.channel == 'dm:{approver.email}' and contains(r.text, '{system}')",
            **({"_group": "event"} if draft.events else {}),
        )
        draft.check(
            "unchanged", "tickets_guard", 1.5, service="tickets", collection="tickets", allow="r.created == 'now'"
        )
        draft.check("answer_contains", "told_system", 1.0, values=[system])
        return draft
