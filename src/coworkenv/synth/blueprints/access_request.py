"""Access request: get the requester's manager to approve, then open the access ticket for IT."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import and_, arg, field, path
from coworkenv.synth.rules import require_prior
from coworkenv.synth.world import Person, World, manager_change, noise_tickets

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
OPENINGS = [
    "{requester} asked for access in #it-requests. Please handle it: ask their manager to approve it "
    "by direct message, then open a ticket for the it team tagged 'access'.",
    "Can you process {requester}'s access request from the #it-requests channel? Their manager has to "
    "approve (DM them), and IT needs a ticket (team it, tag access).",
    "There's an access request from {requester} in #it-requests. Per our process, DM their manager to "
    "approve it and then raise a ticket for the it team with the tag 'access'.",
]
POLICY = require_prior(
    "manager-first",
    "tickets_create",
    "chat_send_dm",
    "Access tickets may only be opened after asking the requester's manager to approve.",
    when=arg("tags").has("access"),
    prior_when=path("prior", "text").contains("approv"),
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
        request = _chat(world, requester, manager, bystander, system, other_system)
        noise_tickets(world, rng.randrange(2, 4))
        laptop = {"title": f"Laptop replacement for {bystander.name}", "team": "it", "status": "open"}
        world.add("tickets", "tickets", {**laptop, "created": world.day(-3)})
        draft = _draft(self, world, requester, request)
        draft.summary = [system, manager.name]
        ref = draft.reference
        ref.call("contacts_search", {"query": requester.name}, save_as="who")
        ref.call("chat_search_messages", {"channel": "it-requests", "author": "${who.contacts[0].email}"})
        approver = manager
        if "dynamic" in options:
            approver = world.person(manager.department, title=f"{manager.department} Manager")
            draft.events.append(manager_change(world, requester, approver))
            say = "The directory just changed; checking their manager again."
            ref.call("contacts_search", {"query": requester.name}, save_as="who", say=say)
            draft.summary = [system, approver.name]
        text = f"{requester.name} requests access to {system}. Could you approve this request?"
        ref.call("chat_send_dm", {"user": "${who.contacts[0].manager_email}", "text": text})
        description = f"Requested in #it-requests by {requester.email}; manager approval asked."
        ticket = {"title": f"Access to {system} for {requester.name}", "team": "it", "tags": ["access"]}
        ref.call("tickets_create", {**ticket, "description": description}, role="main")
        ref.answer(
            f"I asked ${{who.contacts[0].manager_email}} to approve {requester.first}'s access to "
            f"{system} and opened the IT ticket."
        )
        _checks(draft, system, approver)
        return draft


def _chat(
    world: World, requester: Person, manager: Person, bystander: Person, system: str, other: str
) -> dict[str, Any]:
    """The #it-requests channel with the request (returned) and a bystander's, and an unrelated channel."""
    world.add("chat", "channels", {"name": "it-requests", "members": [world.me.email], "topic": "Access requests"})
    world.add("chat", "channels", {"name": "general", "members": [world.me.email], "topic": "Everything else"})
    asked = {"channel": "it-requests", "author": bystander.email, "text": f"Could I get access to {other}?"}
    world.add("chat", "messages", {**asked, "ts": f"{world.day(-2)}T11:00"})
    text = f"Hi! I need access to {system} for the quarterly close. Thanks, {requester.first}"
    request = {"channel": "it-requests", "author": requester.email, "ts": f"{world.day(-1)}T15:20", "text": text}
    request = world.add("chat", "messages", request)
    lunch = {"channel": "general", "author": manager.email, "text": "Lunch at noon?", "ts": f"{world.day(-1)}T11:00"}
    world.add("chat", "messages", lunch)
    return request


def _draft(bp: Blueprint, world: World, requester: Person, request: dict[str, Any]) -> Draft:
    facts = {"requester": stated("requester", requester.name)}
    readable = [("chat", "messages", request["id"], "text")]
    title = f"Access request from {requester.name}"
    draft = Draft.start(bp.name, title, world, OPENINGS, facts, set(bp.capabilities), readable)
    draft.rules.append(POLICY)
    return draft


def _checks(draft: Draft, system: str, approver: Person) -> None:
    ticket = and_(field("team").eq("it"), field("tags").has("access"), field("title").contains(system))
    draft.checks.record_exists("ticket", "tickets", "tickets", ticket, 3.0)
    asked = field("channel").eq(f"dm:{approver.email}") & field("text").contains(system)
    group = "event" if draft.events else None
    draft.checks.record_exists("approval_asked", "chat", "messages", asked, 2.0, group=group)
    draft.checks.unchanged("tickets_guard", "tickets", "tickets", field("created").eq("now"), 1.5)
    draft.checks.answer_contains("told_system", [system, ["approve", "approval"]])  # a list of names says neither
