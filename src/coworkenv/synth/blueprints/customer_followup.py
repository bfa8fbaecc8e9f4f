"""Customer follow-up from CRM and mail: answer the customer's latest mail and log it on their account."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.world import Person, World

ASKS = (
    ("pricing for 20 extra seats", "the quote will reach them by Friday", "Friday"),
    ("the SSO integration timeline", "SSO ships in the March release", "March"),
    ("a copy of last quarter's invoice", "finance is resending the invoice today", "today"),
    ("moving their renewal date", "we can move the renewal to next quarter", "next quarter"),
)
INDUSTRIES = ("Retail", "Healthcare", "Logistics", "Media", "Banking", "Education")
OPENINGS = [
    "Please reply to the latest email from {company} and tell them {message}. Then log the email as an "
    "activity on their CRM account.",
    "{company} wrote to me again. Answer their most recent mail ({message}) and record that email on "
    "their account in the CRM.",
    "Can you get back to {company}? Reply to their newest message saying {message}, and log it in the "
    "CRM as an email activity.",
]
Account = tuple[dict[str, Any], Person]


class CustomerFollowUp(Blueprint):
    name = "customer_followup"
    summary = "reply to a customer's latest mail with the user's message and log the email on their CRM account"
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        accounts = _accounts(world)
        acc, contact = rng.choice(accounts)
        company = acc["name"]
        topic, message, key = rng.choice(ASKS)
        latest = _mail(world, accounts, acc, contact, topic)
        _crm_history(world, accounts)
        draft = _draft(self, world, company, message, latest)
        ref = draft.reference
        ref.call("mail_search", {"query": company}, save_as="inbox")
        ref.call("mail_read", {"message_id": "${inbox.messages[0].id}"})
        target = _newer_mail(draft, world, contact, company, topic) if "dynamic" in options else latest
        body = f"Hi {contact.first}, thanks for your patience: {message}. Best, {world.me.first}"
        ref.call("mail_reply", {"message_id": "${inbox.messages[0].id}", "body": body}, role="main")
        ref.call("crm_search_accounts", {"query": company}, save_as="acc")
        activity = {"account_id": "${acc.accounts[0].id}", "kind": "email", "date": world.day(0)}
        ref.call("crm_log_activity", {**activity, "summary": f"Replied to {contact.name} about {topic}"})
        answer = f"I replied to {contact.name} ({contact.email}) and logged the email on the {company} account."
        if "aggregate" in options:
            answer += _pipeline(draft, world, acc["id"])
        ref.answer(answer)
        draft.summary = [contact.name, key]
        _checks(draft, world, target["id"], acc["id"], key, contact)
        return draft


def _accounts(world: World) -> list[Account]:
    """Three or four customer accounts, each with a procurement contact."""
    rng = world.rng
    accounts = []
    for _ in range(rng.randrange(3, 5)):
        company, domain = world.customer()
        contact = world.person(company=company, domain=domain, title="Head of Procurement")
        account = {
            "name": company,
            "industry": rng.choice(INDUSTRIES),
            "tier": rng.choice(("standard", "enterprise")),
            "owner": world.person("Sales").email,
            "arr": float(rng.randrange(20, 200) * 1000),
        }
        accounts.append((world.add("crm", "accounts", account), contact))
    return accounts


def _mail(world: World, accounts: list[Account], acc: dict[str, Any], contact: Person, topic: str) -> dict[str, Any]:
    """Questions from the other customers, an older one from this customer, and their latest (returned)."""
    rng = world.rng
    for other, who in accounts:
        if other is not acc:
            subject = f"Question about {rng.choice(ASKS)[0]}"
            world.mail(who.email, subject, world.fake.paragraph(nb_sentences=2), world.day(-rng.randrange(1, 4)))
    company = acc["name"]
    older = f"Following up on our last call. {company}"
    world.mail(contact.email, f"Question about {rng.choice(ASKS)[0]}", older, world.day(-9), unread=False)
    body = f"Hi {world.me.first}, could you give me an update on {topic}? Thanks, {contact.first} ({company})"
    latest = world.mail(contact.email, f"Question about {topic}", body, world.day(-1))
    world.noise_mail(rng.randrange(1, 3))
    return latest


def _crm_history(world: World, accounts: list[Account]) -> None:
    """Open deals and a past call on every account."""
    rng = world.rng
    for a, _ in accounts:
        for _ in range(rng.randrange(1, 3)):
            deal = {
                "account_id": a["id"],
                "name": f"{a['name']} {world.fake.bs()}",
                "stage": rng.choice(("prospect", "qualified", "proposal", "negotiation")),
                "amount": float(rng.randrange(5, 90) * 1000),
                "owner": a["owner"],
                "close_date": world.day(rng.randrange(5, 60)),
            }
            world.add("crm", "deals", deal)
        call = {"account_id": a["id"], "kind": "call", "summary": world.fake.bs()}
        world.add("crm", "activities", {**call, "date": world.day(-rng.randrange(5, 30))})


def _draft(bp: Blueprint, world: World, company: str, message: str, latest: dict[str, Any]) -> Draft:
    facts = {
        "company": stated("company", company),
        "message": stated("message", message),
    }
    readable = [("mail", "messages", latest["id"], "body")]
    return Draft.start(bp.name, f"Follow up with {company}", world, OPENINGS, facts, set(bp.capabilities), readable)


def _newer_mail(draft: Draft, world: World, contact: Person, company: str, topic: str) -> dict[str, Any]:
    """The ``dynamic`` option: a newer mail arrives once the agent read the latest; reply to that one."""
    target = {
        "id": "msg-x1",
        "sender": contact.email,
        "to": [world.me.email],
        "date": world.day(0),
        "subject": f"Re: Question about {topic}",
        "body": f"More on {topic}: we need it for our board meeting. {contact.first}, {company}",
    }
    insert = {"service": "mail", "collection": "messages", "op": "insert", "record": target}
    notice = f"New mail from {contact.email} just arrived."
    draft.events.append({"id": "new-mail", "on_tool": "mail_read", "notify": notice, "mutations": [insert]})
    say = "A newer message just came in; replying to that one instead."
    draft.reference.call("mail_search", {"query": company}, save_as="inbox", say=say)
    draft.reference.call("mail_read", {"message_id": "${inbox.messages[0].id}"})
    return target


def _pipeline(draft: Draft, world: World, account: str) -> str:
    """The ``aggregate`` option: the total of the account's open deals."""
    draft.reference.call("crm_list_deals", {"account_id": account}, save_as="deals")
    total = sum(d["amount"] for d in world.fixtures["crm"]["deals"] if d["account_id"] == account)
    draft.ask_figure("Also tell me the total value of their open deals.", "pipeline_told", total, 0.01)
    return " Their open deals total ${sum(deals.deals[*].amount)} USD."


def _checks(draft: Draft, world: World, target: str, account: str, key: str, contact: Person) -> None:
    replied = field("in_reply_to").eq(target) & field("body").contains(key)
    draft.checks.record_exists("replied", "mail", "messages", replied, 3.0)
    logged = and_(field("account_id").eq(account), field("kind").eq("email"), field("date").eq(world.day(0)))
    draft.checks.record_exists("logged", "crm", "activities", logged, 2.0)
    sent_or_target = field("folder").eq("sent") | field("id").eq(target)
    draft.checks.unchanged("mail_guard", "mail", "messages", sent_or_target, 1.5)
    draft.checks.unchanged("crm_guard", "crm", "activities", field("account_id").eq(account))
    draft.checks.answer_contains("told_contact", [contact.name])
