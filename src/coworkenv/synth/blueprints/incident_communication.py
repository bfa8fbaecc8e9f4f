"""Incident communication: status post, heads-up to the owners of enterprise accounts, ticket comment."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.world import World, noise_tickets

SERVICES = ("checkout", "search", "login", "notifications", "reporting", "file uploads")
OPENINGS = [
    "We have an incident on {service}. Post a status update in #incidents with the incident ticket id, "
    "email the owners of our enterprise accounts (from the CRM) a heads-up, and comment on the ticket "
    "that customer comms went out.",
    "Our {service} service is degraded. Please handle comms: a status post in #incidents naming the "
    "ticket, one email to all enterprise account owners, and a comment on the incident ticket saying "
    "comms are out.",
    "Incident on {service}: please post an update in #incidents that names the incident ticket, send "
    "the owners of all enterprise accounts in the CRM one heads-up email, and note on the ticket that "
    "customer comms went out.",
]
Accounts = list[dict[str, Any]]


class IncidentCommunication(Blueprint):
    name = "incident_communication"
    summary = "communicate an incident: post status in #incidents, email enterprise account owners, comment the ticket"
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        service = world.rng.choice(SERVICES)
        tid = _tickets(world, service)
        enterprise, rest = _accounts(world)
        for name in ("incidents", "general"):
            world.add("chat", "channels", {"name": name, "members": [world.me.email], "topic": name})
        facts = {"service": stated("service", service)}
        readable = [("tickets", "tickets", tid, "description")]
        title = f"Incident comms: {service}"
        draft = Draft.start(self.name, title, world, OPENINGS, facts, set(self.capabilities), readable)
        draft.summary = [tid]
        _communicate(draft, service)
        if "dynamic" in options and rest:
            enterprise.append(_upgrade(draft, rest.pop(0)))
        emails = sorted({a["owner"] for a in enterprise})
        answer = (
            f"Posted the status for {tid} in #incidents, emailed {len(emails)} enterprise account owner(s) and "
            "commented on the ticket."
        )
        if "aggregate" in options:
            answer += " The affected enterprise accounts are worth ${sum(ent.accounts[*].arr)} USD in ARR."
            arr = sum(a["arr"] for a in enterprise)
            draft.ask_figure("Also tell me the total ARR of those enterprise accounts.", "arr_told", arr, 0.01)
        draft.reference.answer(answer)
        world.ensure("mail", "messages")
        _checks(draft, tid, emails)
        return draft


def _tickets(world: World, service: str) -> str:
    """Noise, a resolved incident on the same service, and the open incident (its id returned)."""
    noise_tickets(world, world.rng.randrange(2, 4))
    old = {"title": f"{service} latency (resolved)", "team": "sre", "status": "resolved", "tags": ["incident"]}
    world.add("tickets", "tickets", {**old, "created": world.day(-20)})
    ticket = {
        "title": f"Incident: {service} degraded",
        "team": "sre",
        "status": "in_progress",
        "priority": "urgent",
        "tags": ["incident"],
        "created": world.day(0),
        "comments": ["sre: investigating"],
        "description": f"{service.capitalize()} has been failing for part of our users since this morning.",
    }
    return str(world.add("tickets", "tickets", ticket)["id"])


def _accounts(world: World) -> tuple[Accounts, Accounts]:
    """Four to six accounts over four owners; returns (enterprise, the rest)."""
    rng = world.rng
    owners = [world.person("Sales", title="Account Manager") for _ in range(4)]
    enterprise: Accounts = []
    rest: Accounts = []
    for i in range(rng.randrange(4, 7)):
        company, _ = world.customer()
        tier = "enterprise" if i < 2 or rng.random() < 0.3 else "standard"
        account = {"name": company, "tier": tier, "owner": owners[i % 4].email}
        acc = world.add("crm", "accounts", {**account, "arr": float(rng.randrange(20, 300) * 1000)})
        (enterprise if tier == "enterprise" else rest).append(acc)
    return enterprise, rest


def _communicate(draft: Draft, service: str) -> None:
    """Find the incident, post the status, email every enterprise owner at once, comment the ticket."""
    ref = draft.reference
    ref.call("tickets_search", {"query": service, "tag": "incident", "status": "in_progress"}, save_as="inc")
    ref.call("tickets_get", {"ticket_id": "${inc.tickets[0].id}"})
    status = f"Incident ${{inc.tickets[0].id}}: {service} degraded, team is investigating."
    ref.call("chat_post_message", {"channel": "incidents", "text": status})
    ref.call("crm_search_accounts", {"tier": "enterprise", "limit": 50}, save_as="ent")
    body = (
        f"We are handling an incident affecting {service} (ticket ${{inc.tickets[0].id}}). "
        "Please reassure your enterprise customers."
    )
    mail = {"to": "${unique(ent.accounts[*].owner)}", "subject": f"Heads-up: {service} incident", "body": body}
    ref.call("mail_send", mail, role="main")
    comment = "Customer comms sent: #incidents post and owner email."
    ref.call("tickets_comment", {"ticket_id": "${inc.tickets[0].id}", "text": comment})


def _upgrade(draft: Draft, account: dict[str, Any]) -> dict[str, Any]:
    """The ``dynamic`` option: an account becomes enterprise once the status is posted; its owner must be told."""
    change = {"service": "crm", "collection": "accounts", "op": "update", "id": account["id"]}
    notice = f"CRM update: {account['name']} was just upgraded to enterprise."
    mutation = {**change, "record": {"tier": "enterprise"}}
    draft.events.append(
        {"id": "tier-upgrade", "on_tool": "chat_post_message", "notify": notice, "mutations": [mutation]}
    )
    return account


def _checks(draft: Draft, tid: str, emails: list[str]) -> None:
    posted = field("channel").eq("incidents") & field("text").contains(tid)
    draft.checks.record_exists("status_posted", "chat", "messages", posted, 2.0)
    to_all = and_(*(field("to").has(e) for e in emails), field("to").len().eq(len(emails)))
    draft.checks.record_exists("owners_emailed", "mail", "messages", to_all, 3.0)
    commented = field("id").eq(tid) & field("comments").len().eq(2)
    draft.checks.record_exists("ticket_commented", "tickets", "tickets", commented)
    draft.checks.unchanged("tickets_guard", "tickets", "tickets", field("id").eq(tid))
    draft.checks.answer_contains("told_ticket", [tid])
