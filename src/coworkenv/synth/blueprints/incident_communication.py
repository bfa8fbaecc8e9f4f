"""Incident communication: status post, heads-up to the owners of enterprise accounts, ticket comment."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World, noise_tickets

SERVICES = ("checkout", "search", "login", "notifications", "reporting", "file uploads")


class IncidentCommunication(Blueprint):
    name = "incident_communication"
    summary = "communicate an incident: post status in #incidents, email enterprise account owners, comment the ticket"
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        service = rng.choice(SERVICES)
        noise_tickets(world, rng.randrange(2, 4))
        world.add(
            "tickets",
            "tickets",
            {
                "title": f"{service} latency (resolved)",
                "team": "sre",
                "status": "resolved",
                "tags": ["incident"],
                "created": world.day(-20),
            },
        )
        ticket = world.add(
            "tickets",
            "tickets",
            {
                "title": f"Incident: {service} degraded",
                "team": "sre",
                "status": "in_progress",
                "priority": "urgent",
                "tags": ["incident"],
                "created": world.day(0),
                "comments": ["sre: investigating"],
                "description": f"{service.capitalize()} has been failing for part of our users since this morning.",
            },
        )
        owners = [world.person("Sales", title="Account Manager") for _ in range(4)]
        enterprise, rest = [], []
        for i in range(rng.randrange(4, 7)):
            company, _ = world.customer()
            tier = "enterprise" if i < 2 or rng.random() < 0.3 else "standard"
            acc = world.add(
                "crm",
                "accounts",
                {
                    "name": company,
                    "tier": tier,
                    "owner": owners[i % 4].email,
                    "arr": float(rng.randrange(20, 300) * 1000),
                },
            )
            (enterprise if tier == "enterprise" else rest).append(acc)
        for name in ("incidents", "general"):
            world.add("chat", "channels", {"name": name, "members": [world.me.email], "topic": name})
        tid = ticket["id"]
        draft = Draft(
            blueprint=self.name,
            title=f"Incident comms: {service}",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "We have an incident on {service}. Post a status update in #incidents with the incident ticket id, "
                "email the owners of our enterprise accounts (from the CRM) a heads-up, and comment on the ticket "
                "that customer comms went out.",
                "Our {service} service is degraded. Please handle comms: a status post in #incidents naming the "
                "ticket, one email to all enterprise account owners, and a comment on the incident ticket saying "
                "comms are out.",
                "Incident on {service}: please post an update in #incidents that names the incident ticket, send "
                "the owners of all enterprise accounts in the CRM one heads-up email, and note on the ticket that "
                "customer comms went out.",
            ],
            facts={"service": Fact("service", service, service, ["service"], "", "", withholdable=False)},
            reference=[
                {
                    "call": "tickets_search",
                    "args": {"query": service, "tag": "incident", "status": "in_progress"},
                    "save_as": "inc",
                },
                {"call": "tickets_get", "args": {"ticket_id": "${inc.tickets[0].id}"}},
                {
                    "call": "chat_post_message",
                    "args": {
                        "channel": "incidents",
                        "text": f"Incident ${{inc.tickets[0].id}}: {service} degraded, team is investigating.",
                    },
                },
                {"call": "crm_search_accounts", "args": {"tier": "enterprise", "limit": 50}, "save_as": "ent"},
                {
                    "call": "mail_send",
                    "_main": True,
                    "args": {
                        "to": "${unique(ent.accounts[*].owner)}",
                        "subject": f"Heads-up: {service} incident",
                        "body": f"We are handling an incident affecting {service} (ticket ${{inc.tickets[0].id}}). "
                        "Please reassure your enterprise customers.",
                    },
                },
                {
                    "call": "tickets_comment",
                    "args": {
                        "ticket_id": "${inc.tickets[0].id}",
                        "text": "Customer comms sent: #incidents post and owner email.",
                    },
                },
            ],
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("tickets", "tickets", tid, "description")],
            summary=[tid],
        )
        ref = draft.reference
        if "dynamic" in options and rest:
            upgraded = rest.pop(0)
            enterprise.append(upgraded)
            draft.events.append(
                {
                    "id": "tier-upgrade",
                    "on_tool": "chat_post_message",
                    "notify": f"CRM update: {upgraded['name']} was just upgraded to enterprise.",
                    "mutations": [
                        {
                            "service": "crm",
                            "collection": "accounts",
                            "op": "update",
                            "id": upgraded["id"],
                            "record": {"tier": "enterprise"},
                        }
                    ],
                }
            )
        emails = sorted({a["owner"] for a in enterprise})
        answer = (
            f"Posted the status for {tid} in #incidents, emailed {len(emails)} enterprise account owner(s) and "
            "commented on the ticket."
        )
        if "aggregate" in options:
            answer += " The affected enterprise accounts are worth ${sum(ent.accounts[*].arr)} USD in ARR."
            draft.ask_figure(
                "Also tell me the total ARR of those enterprise accounts.",
                "arr_told",
                sum(a["arr"] for a in enterprise),
                0.01,
            )
        ref.append({"answer": answer})
        world.ensure("mail", "messages")
        draft.check(
            "record_exists",
            "status_posted",
            2.0,
            service="chat",
            collection="messages",
            where=f"r.channel == 'incidents' and contains(r.text, '{tid}')",
        )
        to_all = " and ".join(f"'{e}' in r.to" for e in emails)
        draft.check(
            "record_exists",
            "owners_emailed",
            3.0,
            service="mail",
            collection="messages",
            where=f"{to_all} and len(r.to) == {len(emails)}",
        )
        draft.check(
            "record_exists",
            "ticket_commented",
            1.0,
            service="tickets",
            collection="tickets",
            where=f"r.id == '{tid}' and len(r.comments) == 2",
        )
        draft.check(
            "unchanged", "tickets_guard", 1.0, service="tickets", collection="tickets", allow=f"r.id == '{tid}'"
        )
        draft.check("answer_contains", "told_ticket", 1.0, values=[tid])
        return draft
