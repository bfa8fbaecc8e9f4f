"""Invoice reconciliation: match a vendor's invoices against the payments ledger, chase the unpaid ones."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World


class InvoiceReconciliation(Blueprint):
    name = "invoice_reconciliation"
    summary = "find a vendor's unpaid invoices from the ledger, total them, and email the vendor a reminder"
    capabilities = ("tool_coordination", "information_synthesis")
    options: ClassVar[frozenset[str]] = frozenset()

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        vendor, domain = world.customer()
        other, other_domain = world.customer()
        billing = f"billing@{domain}"
        first = rng.randrange(1000, 8000)
        invoices = []
        for i in range(rng.randrange(3, 6)):
            number = f"INV-{first + 7 * i}"
            amount = world.money(300, 5000)
            invoices.append((number, amount, rng.random() < 0.5))
        if all(paid for *_, paid in invoices):
            invoices[0] = (*invoices[0][:2], False)
        if not any(paid for *_, paid in invoices):
            invoices[-1] = (*invoices[-1][:2], True)
        for number, amount, _ in invoices:
            world.add(
                "documents",
                "documents",
                {
                    "path": f"/Finance/Invoices/{number}",
                    "title": f"{vendor} invoice {number}",
                    "owner": billing,
                    "content": f"Invoice {number} from {vendor}. Amount due: {amount:.2f} USD. "
                    f"Billing contact: {billing}.",
                    "updated": world.day(-rng.randrange(10, 40)),
                },
            )
        decoy = f"INV-{first + 3}"
        world.add(
            "documents",
            "documents",
            {
                "path": f"/Finance/Invoices/{decoy}",
                "title": f"{other} invoice {decoy}",
                "owner": f"ap@{other_domain}",
                "content": f"Invoice {decoy} from {other}. Amount due: {world.money(300, 5000):.2f} USD.",
                "updated": world.day(-12),
            },
        )
        paid_lines = [f"{number}  {vendor}  paid {amount:.2f} USD" for number, amount, paid in invoices if paid]
        paid_lines.append(f"{decoy}  {other}  paid in full")
        rng.shuffle(paid_lines)
        ledger = world.add(
            "documents",
            "documents",
            {
                "path": "/Finance/Payments ledger",
                "title": "Payments ledger",
                "updated": world.day(-1),
                "content": "Payments received this quarter:\n" + "\n".join(paid_lines),
            },
        )
        world.noise_mail(rng.randrange(1, 3))
        unpaid = [(n, a) for n, a, paid in invoices if not paid]
        settled = [n for n, _, paid in invoices if paid]
        total = round(sum(a for _, a in unpaid), 2)
        listing = ", ".join(f"{n} ({a:.2f} USD)" for n, a in unpaid)
        draft = Draft(
            blueprint=self.name,
            title=f"Reconcile {vendor} invoices",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "Please reconcile the {vendor} invoices in /Finance/Invoices against the payments ledger. Tell me "
                "which are still unpaid and the total outstanding, and email their billing contact a reminder "
                "listing the unpaid invoice numbers.",
                "Which {vendor} invoices haven't been paid yet? Check them against the payments ledger, give me the "
                "outstanding total, and send {vendor}'s billing contact a reminder with the unpaid invoice numbers.",
                "Finance asked me to chase {vendor}. Compare their invoices in /Finance/Invoices with the payments "
                "ledger, email their billing contact the unpaid invoice numbers, and tell me what is outstanding "
                "in total.",
            ],
            facts={"vendor": Fact("vendor", vendor, vendor, ["vendor"], "", "", withholdable=False)},
            reference=[
                {"call": "documents_search", "args": {"query": vendor, "folder": "/Finance/Invoices"}},
                {"call": "documents_search", "args": {"query": "payments ledger"}, "save_as": "led"},
                {"call": "documents_read", "args": {"document_id": "${led.documents[0].id}"}},
                {
                    "call": "mail_send",
                    "_main": True,
                    "args": {
                        "to": [billing],
                        "subject": f"Reminder: unpaid invoices from {world.company}",
                        "body": f"Hello, our records show these invoices as unpaid: {listing}. Total outstanding: "
                        f"{total:.2f} USD. Best regards, {world.me.name}",
                    },
                },
                {
                    "answer": f"Unpaid {vendor} invoices: {listing}. Total outstanding: {total:.2f} USD. I emailed "
                    f"{billing} a reminder."
                },
            ],
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("documents", "documents", ledger["id"], "content")],
            summary=[n for n, _ in unpaid],
        )
        lists_unpaid = " and ".join(f"contains(r.body, '{n}')" for n, _ in unpaid)
        skips_paid = "".join(f" and not contains(r.body, '{n}')" for n in settled)
        draft.check(
            "record_exists",
            "reminder",
            3.0,
            service="mail",
            collection="messages",
            where=f"r.folder == 'sent' and '{billing}' in r.to and {lists_unpaid}{skips_paid}",
        )
        draft.check("answer_contains", "told_unpaid", 1.5, values=[n for n, _ in unpaid])
        draft.check("answer_number", "told_total", 1.5, value=total, tolerance=0.01)
        draft.check("unchanged", "mail_guard", 1.0, service="mail", collection="messages", allow="r.folder == 'sent'")
        draft.check("unchanged", "docs_guard", 1.0, service="documents", collection="documents")
        return draft
