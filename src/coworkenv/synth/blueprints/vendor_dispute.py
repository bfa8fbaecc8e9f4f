"""Vendor dispute over two days: dispute a duplicate invoice, then close the dispute when the vendor answers.

Day 1: a vendor billed the same purchase order twice. Find both invoices, reply to the
duplicate disputing it (naming both numbers), open a billing ticket assigned to the person
who follows up disputes. Overnight the vendor replies with a credit note. Day 2 (the
conversation goes on): read the reply, record the credit note on the ticket, resolve it and
report the credit note number.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import field
from coworkenv.synth.world import World, noise_tickets

GOODS = ("brochures", "office chairs", "laptop stands", "conference badges", "printer toner", "coffee beans")
OPENINGS = [
    "{vendor} seems to have billed order {po} twice. Please find the duplicate invoice in my inbox, reply to "
    "{vendor} disputing it (name the invoice number and the original it duplicates), and open a billing ticket for "
    "the dispute assigned to {owner_name} ({owner}).",
    "We got two invoices from {vendor} for the same order {po}. Reply to the second one disputing it, naming both "
    "invoice numbers, and log the dispute as a billing ticket for {owner_name} ({owner}).",
    "Order {po} from {vendor} was invoiced twice. Could you dispute the duplicate by replying to it (mention both "
    "invoice numbers) and open a billing ticket about it assigned to {owner_name} ({owner})?",
]
NEXT_DAY = (
    "Did {vendor} answer about the duplicate invoice? If they accepted, put their credit note number on the "
    "dispute ticket, resolve it, and tell me the credit note number."
)


class VendorDispute(Blueprint):
    name = "vendor_dispute"
    summary = "two days: dispute a vendor's duplicate invoice and open a ticket; next day close it with the credit note"
    capabilities = ("tool_coordination", "dynamic_state")
    options: ClassVar[frozenset[str]] = frozenset()

    def build(self, world: World, options: frozenset[str]) -> Draft:
        vendor, domain = world.customer()
        billing = f"billing@{domain}"
        owner = world.person("Finance", title="Accountant")
        po = f"PO-{world.rng.randrange(4000, 9999)}"
        first, dup = (f"INV-{n}" for n in sorted(world.rng.sample(range(1000, 9999), 2)))
        amount = world.money(300, 9000)
        goods = world.rng.choice(GOODS)
        _inbox(world, vendor, billing, po, (first, dup), amount, goods)
        noise_tickets(world, world.rng.randrange(4, 7), ("billing", "payments", "platform", "web"))
        facts = {
            "vendor": stated("vendor", vendor),
            "po": stated("po", po),
            "owner_name": stated("owner_name", owner.name),
            "owner": stated("owner", owner.email),
        }
        draft = Draft.start(self.name, f"Duplicate invoice dispute with {vendor}", world, OPENINGS, facts, set())
        draft.clock = f"{world.today.isoformat()}T10:00"
        draft.summary = [dup]
        _dispute(draft, vendor, po, first, dup, owner.email)
        about = (field("title") + " " + field("description")).contains(dup)
        checks = draft.checks
        to_vendor = field("folder").eq("sent") & field("to").has(billing)
        disputed = to_vendor & field("body").contains(dup) & field("body").contains(first)
        checks.count("disputed", "mail", "messages", disputed, 1, 2.0)
        ticket = about & field("team").eq("billing") & field("assignee").eq(owner.email)
        checks.count("ticket_opened", "tickets", "tickets", ticket, 1, 3.0)
        checks.unchanged("tickets_guard", "tickets", "tickets", about)
        checks.unchanged("mail_guard", "mail", "messages", field("folder").eq("sent"))
        _credit_note(draft, world, vendor, billing, dup, amount)
        return draft


def _inbox(
    world: World, vendor: str, billing: str, po: str, numbers: tuple[str, str], amount: float, goods: str
) -> None:
    """The two invoices for the order (days apart), another invoice of the vendor, and noise."""
    world.noise_mail(world.rng.randrange(3, 6))
    other = f"PO-{world.rng.randrange(1000, 3999)}"
    world.mail(
        billing,
        f"Invoice INV-{world.rng.randrange(100, 999)} - {vendor}",
        f"Invoice for order {other}. Amount due: {world.money(100, 900):.2f} EUR.",
        world.day(-15),
        unread=False,
    )
    for number, day in zip(numbers, (world.day(-6), world.day(-1)), strict=True):
        body = f"Invoice {number} for order {po} ({goods}). Amount due: {amount:.2f} EUR within 30 days."
        world.mail(billing, f"Invoice {number} - {goods}", body, day)


def _dispute(draft: Draft, vendor: str, po: str, first: str, dup: str, owner: str) -> None:
    ref = draft.reference
    ref.call("mail_search", {"query": po}, save_as="found")
    ref.call("mail_read", {"message_id": "${found.messages[0].id}"}, save_as="dup")
    ref.call("mail_read", {"message_id": "${found.messages[1].id}"})
    body = (
        f"Hello, invoice {dup} bills order {po} a second time: it duplicates {first}. We dispute {dup}; "
        "please cancel it or send a credit note."
    )
    ref.call("mail_reply", {"message_id": "${dup.id}", "body": body})
    ticket = {
        "title": f"Dispute duplicate {vendor} invoice {dup}",
        "description": f"{dup} duplicates {first} (order {po}). Disputed by mail with {vendor}.",
        "team": "billing",
        "assignee": owner,
    }
    ref.call("tickets_create", ticket, save_as="ticket", role="main")
    ref.answer(f"{dup} duplicates {first}. I disputed it with {vendor} and opened ${{ticket.id}} for the follow-up.")


def _credit_note(draft: Draft, world: World, vendor: str, billing: str, dup: str, amount: float) -> None:
    note, old = (f"CN-{n}" for n in world.rng.sample(range(100, 999), 2))
    stage = draft.add_stage(
        "next_day", NEXT_DAY.format(vendor=vendor), {"to": f"{world.day(1)}T09:00"}, notify="New mail arrived."
    )
    body = (
        f"You are right, {dup} was a duplicate. We issued credit note {note} for the full {amount:.2f} EUR; "
        f"nothing is due on {dup}. (Credit note {old} of last quarter is unrelated.) Kind regards, {vendor} billing"
    )
    reply = {"id": "msg-d2", "sender": billing, "to": [world.me.email], "subject": f"Re: Invoice {dup}", "body": body}
    stage.insert("mail", "messages", {**reply, "date": world.at(world.today.isoformat(), "17:40")})
    ref = stage.reference
    ref.call("mail_search", {"query": dup, "folder": "inbox"}, save_as="news")
    ref.call("mail_read", {"message_id": "${news.messages[0].id}"}, save_as="reply")
    ref.call("tickets_search", {"query": dup, "team": "billing"}, save_as="open")
    text = f"{vendor} replied: ${{reply.body}}"
    ref.call("tickets_comment", {"ticket_id": "${open.tickets[0].id}", "text": text})
    ref.call("tickets_update", {"ticket_id": "${open.tickets[0].id}", "status": "resolved"}, role="main")
    ref.answer(f"{vendor} issued credit note {note} for {dup}; I noted it on ${{open.tickets[0].id}} and resolved it.")
    about = (field("title") + " " + field("description")).contains(dup)
    closed = about & field("status").eq("resolved") & field("comments").join().count(note).eq(1)  # noted once
    checks = stage.checks
    checks.count("dispute_closed", "tickets", "tickets", closed, 1, 3.0)
    checks.answer_contains("credit_note_told", [note], 2.0, excludes=[old])
    checks.unchanged("tickets_guard_2", "tickets", "tickets", about)
    checks.unchanged("no_more_mail", "mail", "messages")
