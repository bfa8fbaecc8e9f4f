"""locate: find the customer account the workflow is about, among look-alikes.

Every variant adds the target account with its primary contact and owner, plus decoy
accounts that share what a careless search would match (the same name stem, the same
industry or tier, a mail or ticket from another customer). Each binds ``account``
(the CRM record, by the reference's search result) and ``owner`` (the account owner).
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.draft import stated
from coworkenv.synth.steps.base import Chain, Record, Step

SECTORS = ("Freight", "Health", "Stores", "Systems", "Foods", "Studios", "Power", "Labs")
"""Name endings: none is an industry word, so a search by the full name matches only that account."""
INDUSTRIES = ("Retail", "Healthcare", "Logistics", "Media", "Banking", "Education", "Energy")
ISSUES = (
    ("late shipment", "our last shipment arrived two weeks late"),
    ("billing error", "we were billed twice for the March invoice"),
    ("login outage", "none of our users could log in this morning"),
    ("missing export", "the weekly export never reached us"),
    ("slow dashboard", "the dashboard takes a minute to load"),
    ("broken integration", "the Salesforce sync stopped on Monday"),
)


def accounts(chain: Chain, decoys: int) -> tuple[Record, list[Record]]:
    """The target account and ``decoys`` look-alikes: the same stem with another sector, or another stem."""
    world = chain.world
    rng = world.rng
    stem = world.person().name.split()[1]
    sectors = rng.sample(SECTORS, decoys + 1)
    industries = rng.sample(INDUSTRIES, 2)
    made: list[Record] = []
    for i, sector in enumerate(sectors):
        owner = world.person("Sales", title="Account Manager")
        world.contacts(owner, extra=0)
        name = f"{stem} {sector}" if i < 2 else f"{world.person().name.split()[1]} {sector}"
        record = {
            "name": name,
            "industry": industries[i % 2] if i < 2 else rng.choice(INDUSTRIES),
            "tier": rng.choice(("standard", "enterprise")),
            "owner": owner.email,
            "arr": float(rng.randrange(20, 300) * 1000),
            "renewal_date": world.day(rng.randrange(10, 120)),
        }
        account = world.add("crm", "accounts", record)
        domain = name.split()[0].lower() + sector.lower()[:3] + ".io"
        contact = world.person(company=name, domain=domain, title=rng.choice(("Head of Operations", "IT Lead", "CFO")))
        world.add(
            "crm",
            "contacts",
            {"account_id": account["id"], "name": contact.name, "email": contact.email, "role": contact.title}
            | {"primary": True},
        )
        made.append(account)
    target = made[0]
    chain.decoys = made[1:]
    return target, made[1:]


def _bind(chain: Chain, target: Record, save: str) -> None:
    chain.bind("account", target, f"${{{save}.accounts[0].id}}", "crm")
    chain.bind("owner", {"email": target["owner"]}, f"${{{save}.accounts[0].owner}}", "crm")
    chain.facts["company"] = stated("company", target["name"])
    chain.subject = target["name"]
    chain.summary.append(target["name"])


class ByName(Step):
    """By a partial name: the stem the request gives matches two accounts; the industry tells them apart."""

    kind = "locate"
    name = "locate_by_name"
    gives: ClassVar[tuple[str, ...]] = ("account", "owner")

    def apply(self, chain: Chain) -> None:
        target, _ = accounts(chain, chain.world.rng.randrange(2, 4))
        stem = target["name"].split()[0]
        chain.facts["stem"] = stated("stem", stem)
        chain.facts["industry"] = stated("industry", target["industry"].lower())
        chain.call("crm_search_accounts", {"query": stem})  # both accounts of the stem: the look-alike is in view
        chain.call("crm_search_accounts", {"query": stem, "industry": target["industry"]}, save_as="acc")
        _bind(chain, target, "acc")
        chain.clause(
            "look up the {stem} account in {industry} (not the other {stem} one)",
            "find our {industry} customer {stem} in the CRM",
            "pull up {stem}, the {industry} account",
        )


class ByAttribute(Step):
    """By its attributes: the only account of one tier in one industry."""

    kind = "locate"
    name = "locate_by_attribute"
    gives: ClassVar[tuple[str, ...]] = ("account", "owner")

    def apply(self, chain: Chain) -> None:
        target, decoys = accounts(chain, chain.world.rng.randrange(2, 4))
        for d in decoys:  # a decoy shares the industry or the tier, never both
            if d["industry"] == target["industry"] and d["tier"] == target["tier"]:
                d["tier"] = "standard" if target["tier"] == "enterprise" else "enterprise"
        chain.facts["tier"] = stated("tier", target["tier"])
        chain.facts["industry"] = stated("industry", target["industry"].lower())
        args = {"tier": target["tier"], "industry": target["industry"]}
        chain.call("crm_search_accounts", {})  # every account: the look-alikes in view
        chain.call("crm_search_accounts", args, save_as="acc")
        _bind(chain, target, "acc")
        chain.clause(
            "find our {tier} customer in {industry} in the CRM",
            "look up the one {tier} account we have in {industry}",
            "pull up our {industry} account on the {tier} tier",
        )


class FromMail(Step):
    """By a reference inside another record: the customer whose mail complains about an issue."""

    kind = "locate"
    name = "locate_from_mail"
    gives: ClassVar[tuple[str, ...]] = ("account", "owner", "mail")

    def apply(self, chain: Chain) -> None:
        world = chain.world
        target, decoys = accounts(chain, world.rng.randrange(2, 4))
        issues = world.rng.sample(ISSUES, len(decoys) + 1)
        mails = []
        for account, (topic, text) in zip([target, *decoys], issues, strict=True):
            contact = next(c for c in world.fixtures["crm"]["contacts"] if c["account_id"] == account["id"])
            body = f"Hi {world.me.first}, {text}. Can you look into it? {contact['name']}, {account['name']}"
            mails.append(world.mail(contact["email"], f"Problem: {topic}", body, world.day(-world.rng.randrange(1, 4))))
        world.noise_mail(world.rng.randrange(1, 3))
        topic = issues[0][0]
        chain.facts["issue"] = stated("issue", topic)
        chain.call("mail_search", {"query": topic}, save_as="inbox")
        chain.call("mail_read", {"message_id": "${inbox.messages[0].id}"})
        chain.call("crm_search_accounts", {"query": target["name"]}, save_as="acc")
        chain.readable.append(("mail", "messages", mails[0]["id"], "body"))
        _bind(chain, target, "acc")
        chain.bind("mail", mails[0], "${inbox.messages[0].id}", "mail", "messages")
        chain.clause(
            "find the customer who emailed me about the {issue} and look up their CRM account",
            "work out which customer wrote in about the {issue} and find their account",
            "check which customer complained about the {issue} by mail and open their account",
        )


class FromTicket(Step):
    """By a reference inside a ticket: the customer a support ticket names."""

    kind = "locate"
    name = "locate_from_ticket"
    gives: ClassVar[tuple[str, ...]] = ("account", "owner", "ticket")

    def apply(self, chain: Chain) -> None:
        world = chain.world
        target, decoys = accounts(chain, world.rng.randrange(2, 4))
        issues = world.rng.sample(ISSUES, len(decoys) + 1)
        tickets = []
        for account, (topic, text) in zip([target, *decoys], issues, strict=True):
            record = {"title": f"Customer reports {topic}", "description": text, "team": "support"}
            record |= {"status": "open", "priority": "medium", "customer": account["name"], "created": world.day(-2)}
            tickets.append(world.add("tickets", "tickets", record))
        topic = issues[0][0]
        chain.facts["issue"] = stated("issue", topic)
        chain.call("tickets_search", {"status": "open"})  # the open tickets: other customers' complaints in view
        chain.call("tickets_search", {"query": topic}, save_as="complaint")
        chain.call("crm_search_accounts", {"query": "${complaint.tickets[0].customer}"}, save_as="acc")
        _bind(chain, target, "acc")
        chain.bind("ticket", tickets[0], "${complaint.tickets[0].id}", "tickets")
        chain.clause(
            "find the support ticket about the {issue} and the customer account it is for",
            "look up who opened the ticket about the {issue} and find that account in the CRM",
            "take the ticket about the {issue}, see which customer it is for and pull up their account",
        )


class FromChat(Step):
    """By a reference inside a chat message: the customer a colleague's heads-up in #support names."""

    kind = "locate"
    name = "locate_from_chat"
    gives: ClassVar[tuple[str, ...]] = ("account", "owner")

    def apply(self, chain: Chain) -> None:
        world = chain.world
        target, decoys = accounts(chain, world.rng.randrange(2, 4))
        issues = world.rng.sample(ISSUES, len(decoys) + 1)
        world.add("chat", "channels", {"name": "support", "members": [world.me.email], "topic": "customer issues"})
        for account, (topic, text) in zip([target, *decoys], issues, strict=True):
            who = world.person("Support")
            message = {"channel": "support", "author": who.email, "ts": world.at(world.day(-1), "09:00")}
            world.add("chat", "messages", message | {"text": f"Heads-up: {account['name']} reports a {topic}: {text}."})
        topic = issues[0][0]
        chain.facts["issue"] = stated("issue", topic)
        chain.call("chat_search_messages", {"query": topic}, save_as="chatter")
        channel = {"channel": "${chatter.messages[0].channel}"}
        chain.call("chat_read_channel", channel)  # the channel it was posted in: the other heads-ups in view
        chain.call("crm_search_accounts", {"query": target["name"]}, save_as="acc")
        _bind(chain, target, "acc")
        chain.clause(
            "find the customer someone flagged in #support for a {issue} and pull up their account",
            "see which customer the {issue} heads-up in #support was about and find them in the CRM",
            "someone mentioned a {issue} in the support channel: work out the customer and open their account",
        )


LOCATE: tuple[Step, ...] = (ByName(), ByAttribute(), FromMail(), FromTicket(), FromChat())
