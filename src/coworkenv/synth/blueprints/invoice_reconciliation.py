"""Invoice reconciliation: match a vendor's invoices against the payments ledger, chase the unpaid ones."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import and_, field, not_
from coworkenv.synth.world import World

OPENINGS = [
    "Please reconcile the {vendor} invoices in /Finance/Invoices against the payments ledger. Tell me "
    "which are still unpaid and the total outstanding, and email their billing contact a reminder "
    "listing the unpaid invoice numbers.",
    "Which {vendor} invoices haven't been paid yet? Check them against the payments ledger, give me the "
    "outstanding total, and send {vendor}'s billing contact a reminder with the unpaid invoice numbers.",
    "Finance asked me to chase {vendor}. Compare their invoices in /Finance/Invoices with the payments "
    "ledger, email their billing contact the unpaid invoice numbers, and tell me what is outstanding "
    "in total.",
]
Invoice = tuple[str, float, bool]


class InvoiceReconciliation(Blueprint):
    name = "invoice_reconciliation"
    summary = "find a vendor's unpaid invoices from the ledger, total them, and email the vendor a reminder"
    capabilities = ("tool_coordination", "information_synthesis")
    options: ClassVar[frozenset[str]] = frozenset()

    def build(self, world: World, options: frozenset[str]) -> Draft:
        vendor, domain = world.customer()
        other, other_domain = world.customer()
        billing = f"billing@{domain}"
        first = world.rng.randrange(1000, 8000)
        invoices = _invoices(world, first)
        for number, amount, _ in invoices:
            _invoice(world, vendor, number, amount, billing, world.day(-world.rng.randrange(10, 40)), billing)
        decoy = f"INV-{first + 3}"
        _invoice(world, other, decoy, world.money(300, 5000), f"ap@{other_domain}", world.day(-12), None)
        ledger = _ledger(world, vendor, invoices, f"{decoy}  {other}  paid in full")
        world.noise_mail(world.rng.randrange(1, 3))
        unpaid = [(n, a) for n, a, paid in invoices if not paid]
        total = round(sum(a for _, a in unpaid), 2)
        listing = ", ".join(f"{n} ({a:.2f} USD)" for n, a in unpaid)
        facts = {"vendor": stated("vendor", vendor)}
        readable = [("documents", "documents", ledger["id"], "content")]
        title = f"Reconcile {vendor} invoices"
        draft = Draft.start(self.name, title, world, OPENINGS, facts, set(self.capabilities), readable)
        draft.summary = [n for n, _ in unpaid]
        ref = draft.reference
        ref.call("documents_search", {"query": vendor, "folder": "/Finance/Invoices"})
        ref.call("documents_search", {"query": "payments ledger"}, save_as="led")
        ref.call("documents_read", {"document_id": "${led.documents[0].id}"})
        body = (
            f"Hello, our records show these invoices as unpaid: {listing}. Total outstanding: "
            f"{total:.2f} USD. Best regards, {world.me.name}"
        )
        subject = f"Reminder: unpaid invoices from {world.company}"
        ref.call("mail_send", {"to": [billing], "subject": subject, "body": body}, role="main")
        ref.answer(
            f"Unpaid {vendor} invoices: {listing}. Total outstanding: {total:.2f} USD. I emailed {billing} a reminder."
        )
        _checks(draft, billing, invoices, total)
        return draft


def _invoices(world: World, first: int) -> list[Invoice]:
    """Three to five invoices (number, amount, paid), at least one paid and one not."""
    invoices = []
    for i in range(world.rng.randrange(3, 6)):
        invoices.append((f"INV-{first + 7 * i}", world.money(300, 5000), world.rng.random() < 0.5))
    if all(paid for *_, paid in invoices):
        invoices[0] = (*invoices[0][:2], False)
    if not any(paid for *_, paid in invoices):
        invoices[-1] = (*invoices[-1][:2], True)
    return invoices


def _invoice(
    world: World, vendor: str, number: str, amount: float, owner: str, updated: str, billing: str | None
) -> None:
    """An invoice document; ``billing``: the contact it names, if any."""
    contact = f" Billing contact: {billing}." if billing else ""
    doc = {"path": f"/Finance/Invoices/{number}", "title": f"{vendor} invoice {number}", "owner": owner}
    content = f"Invoice {number} from {vendor}. Amount due: {amount:.2f} USD.{contact}"
    world.add("documents", "documents", {**doc, "content": content, "updated": updated})


def _ledger(world: World, vendor: str, invoices: list[Invoice], decoy: str) -> dict[str, Any]:
    """The payments ledger: the paid invoices and the other vendor's, shuffled."""
    lines = [f"{number}  {vendor}  paid {amount:.2f} USD" for number, amount, paid in invoices if paid]
    lines.append(decoy)
    world.rng.shuffle(lines)
    doc = {"path": "/Finance/Payments ledger", "title": "Payments ledger", "updated": world.day(-1)}
    return world.add(
        "documents", "documents", {**doc, "content": "Payments received this quarter:\n" + "\n".join(lines)}
    )


def _checks(draft: Draft, billing: str, invoices: list[Invoice], total: float) -> None:
    unpaid = [n for n, _, paid in invoices if not paid]
    lists_unpaid = [field("body").contains(n) for n in unpaid]
    skips_paid = [not_(field("body").contains(n)) for n, _, paid in invoices if paid]
    reminder = and_(field("folder").eq("sent"), field("to").has(billing), *lists_unpaid, *skips_paid)
    draft.checks.record_exists("reminder", "mail", "messages", reminder, 3.0)
    draft.checks.answer_contains("told_unpaid", unpaid, 1.5)
    draft.checks.answer_number("told_total", total, 0.01, 1.5)
    draft.checks.unchanged("mail_guard", "mail", "messages", field("folder").eq("sent"))
    draft.checks.unchanged("docs_guard", "documents", "documents")
