"""Customer follow-up from CRM and mail: answer the customer's latest mail and log it on their account."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World

ASKS = (
    ("pricing for 20 extra seats", "the quote will reach them by Friday", "Friday"),
    ("the SSO integration timeline", "SSO ships in the March release", "March"),
    ("a copy of last quarter's invoice", "finance is resending the invoice today", "today"),
    ("moving their renewal date", "we can move the renewal to next quarter", "next quarter"),
)
INDUSTRIES = ("Retail", "Healthcare", "Logistics", "Media", "Banking", "Education")


class CustomerFollowUp(Blueprint):
    name = "customer_followup"
    summary = "reply to a customer's latest mail with the user's message and log the email on their CRM account"
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        accounts = []
        for _ in range(rng.randrange(3, 5)):
            company, domain = world.customer()
            contact = world.person(company=company, domain=domain, title="Head of Procurement")
            acc = world.add(
                "crm",
                "accounts",
                {
                    "name": company,
                    "industry": rng.choice(INDUSTRIES),
                    "tier": rng.choice(("standard", "enterprise")),
                    "owner": world.person("Sales").email,
                    "arr": float(rng.randrange(20, 200) * 1000),
                },
            )
            accounts.append((acc, contact))
        acc, contact = rng.choice(accounts)
        company = acc["name"]
        topic, message, key = rng.choice(ASKS)
        for other, who in accounts:
            if other is not acc:
                world.mail(
                    who.email,
                    f"Question about {rng.choice(ASKS)[0]}",
                    world.fake.paragraph(nb_sentences=2),
                    world.day(-rng.randrange(1, 4)),
                )
        world.mail(
            contact.email,
            f"Question about {rng.choice(ASKS)[0]}",
            f"Following up on our last call. {company}",
            world.day(-9),
            unread=False,
        )
        latest = world.mail(
            contact.email,
            f"Question about {topic}",
            f"Hi {world.me.first}, could you give me an update on {topic}? Thanks, {contact.first} ({company})",
            world.day(-1),
        )
        world.noise_mail(rng.randrange(1, 3))
        for a, _ in accounts:
            for _ in range(rng.randrange(1, 3)):
                world.add(
                    "crm",
                    "deals",
                    {
                        "account_id": a["id"],
                        "name": f"{a['name']} {world.fake.bs()}",
                        "stage": rng.choice(("prospect", "qualified", "proposal", "negotiation")),
                        "amount": float(rng.randrange(5, 90) * 1000),
                        "owner": a["owner"],
                        "close_date": world.day(rng.randrange(5, 60)),
                    },
                )
            world.add(
                "crm",
                "activities",
                {
                    "account_id": a["id"],
                    "kind": "call",
                    "summary": world.fake.bs(),
                    "date": world.day(-rng.randrange(5, 30)),
                },
            )
        today = world.day(0)
        draft = Draft(
            blueprint=self.name,
            title=f"Follow up with {company}",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "Please reply to the latest email from {company} and tell them {message}. Then log the email as an "
                "activity on their CRM account.",
                "{company} wrote to me again. Answer their most recent mail ({message}) and record that email on "
                "their account in the CRM.",
                "Can you get back to {company}? Reply to their newest message saying {message}, and log it in the "
                "CRM as an email activity.",
            ],
            facts={
                "company": Fact("company", company, company, ["company"], "", "", withholdable=False),
                "message": Fact("message", message, message, ["message"], "", "", withholdable=False),
            },
            reference=[
                {"call": "mail_search", "args": {"query": company}, "save_as": "inbox"},
                {"call": "mail_read", "args": {"message_id": "${inbox.messages[0].id}"}},
            ],
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("mail", "messages", latest["id"], "body")],
        )
        ref = draft.reference
        target = latest
        if "dynamic" in options:
            target = {
                "id": "msg-x1",
                "sender": contact.email,
                "to": [world.me.email],
                "date": today,
                "subject": f"Re: Question about {topic}",
                "body": f"More on {topic}: we need it for our board meeting. {contact.first}, {company}",
            }
            draft.events.append(
                {
                    "id": "new-mail",
                    "on_tool": "mail_read",
                    "notify": f"New mail from {contact.email} just arrived.",
                    "mutations": [{"service": "mail", "collection": "messages", "op": "insert", "record": target}],
                }
            )
            ref += [
                {
                    "call": "mail_search",
                    "args": {"query": company},
                    "save_as": "inbox",
                    "say": "A newer message just came in; replying to that one instead.",
                },
                {"call": "mail_read", "args": {"message_id": "${inbox.messages[0].id}"}},
            ]
        ref += [
            {
                "call": "mail_reply",
                "_main": True,
                "args": {
                    "message_id": "${inbox.messages[0].id}",
                    "body": f"Hi {contact.first}, thanks for your patience: {message}. Best, {world.me.first}",
                },
            },
            {"call": "crm_search_accounts", "args": {"query": company}, "save_as": "acc"},
            {
                "call": "crm_log_activity",
                "args": {
                    "account_id": "${acc.accounts[0].id}",
                    "kind": "email",
                    "date": today,
                    "summary": f"Replied to {contact.name} about {topic}",
                },
            },
        ]
        answer = f"I replied to {contact.name} ({contact.email}) and logged the email on the {company} account."
        if "aggregate" in options:
            ref.append({"call": "crm_list_deals", "args": {"account_id": acc["id"]}, "save_as": "deals"})
            total = sum(d["amount"] for d in world.fixtures["crm"]["deals"] if d["account_id"] == acc["id"])
            answer += " Their open deals total ${sum(deals.deals[*].amount)} USD."
            draft.ask_figure("Also tell me the total value of their open deals.", "pipeline_told", total, 0.01)
        ref.append({"answer": answer})
        draft.summary = [contact.name, key]
        draft.check(
            "record_exists",
            "replied",
            3.0,
            service="mail",
            collection="messages",
            where=f"r.in_reply_to == '{target['id']}' and contains(r.body, '{key}')",
        )
        draft.check(
            "record_exists",
            "logged",
            2.0,
            service="crm",
            collection="activities",
            where=f"r.account_id == '{acc['id']}' and r.kind == 'email' and r.date == '{today}'",
        )
        draft.check(
            "unchanged",
            "mail_guard",
            1.5,
            service="mail",
            collection="messages",
            allow=f"r.folder == 'sent' or r.id == '{target['id']}'",
        )
        draft.check(
            "unchanged",
            "crm_guard",
            1.0,
            service="crm",
            collection="activities",
            allow=f"r.account_id == '{acc['id']}'",
        )
        draft.check("answer_contains", "told_contact", 1.0, values=[contact.name])
        return draft
