"""Invoice steps: find a vendor's invoice among look-alikes, inspect the vendor and its orders, decide and pay.

The family starts from an invoice the request names by number: another vendor has an
invoice with the same number, and the vendor has paid invoices besides it. It binds
``invoice`` and ``vendor``; the acts approve (as the user, who is an approver), pay an
approved invoice, reject with a reason, record a new invoice against an open purchase
order, or raise a new order.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.spec.checks import FieldEquals
from coworkenv.synth.draft import stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.steps.base import Chain, Record, Step

GOODS = ("office chairs", "laptop stands", "printer toner", "conference badges", "cloud credits", "desk lamps")
REASONS = ("billed twice", "wrong amount", "no purchase order", "goods not received")


def _vendor(chain: Chain, name: str, domain: str) -> Record:
    return chain.world.add("payments", "vendors", {"name": name, "email": f"billing@{domain}", "category": "supplies"})


class ByNumber(Step):
    """The received invoice of one vendor the request names by number (another vendor's has the same number)."""

    kind = "locate"
    name = "locate_invoice"
    gives: ClassVar[tuple[str, ...]] = ("invoice", "vendor")

    def apply(self, chain: Chain) -> None:
        world = chain.world
        rng = world.rng
        name, domain = world.customer()
        other, other_domain = world.customer()
        vendor, decoy = _vendor(chain, name, domain), _vendor(chain, other, other_domain)
        number = f"INV-{rng.randrange(1000, 9999)}"
        for i in range(rng.randrange(2, 4)):  # paid ones of the same vendor
            world.add(
                "payments",
                "invoices",
                self._invoice(chain, vendor, f"INV-{rng.randrange(100, 999)}")
                | {"status": "paid", "due_date": world.day(-10 - i)},
            )
        target = world.add("payments", "invoices", self._invoice(chain, vendor, number))
        others = [g for g in GOODS if g != target["description"]]
        world.add("payments", "invoices", self._invoice(chain, decoy, number) | {"description": rng.choice(others)})
        world.add("payments", "approvers", {"email": world.me.email, "limit": 50000.0})
        world.add("payments", "approvers", {"email": world.boss.email, "limit": 500.0})
        world.ensure("payments", "payments", "purchase_orders")
        chain.facts["vendor"] = stated("vendor", name)
        chain.facts["number"] = stated("number", number)
        chain.subject = name
        chain.report_found(target["description"], f"Invoice {number} is for {target['description']}.")
        chain.summary.append(number)
        chain.call("payments_search_vendors", {"query": name}, save_as="ven")
        args = {"vendor_id": "${ven.vendors[0].id}", "status": "received"}
        chain.call("payments_list_invoices", args, save_as="invs")
        chain.bind("vendor", vendor, "${ven.vendors[0].id}", "payments", "vendors")
        chain.bind("invoice", target, "${invs.invoices[0].id}", "payments", "invoices")
        chain.clause(
            "find invoice {number} from {vendor} (only theirs, another vendor uses the same number)",
            "pull up {vendor}'s invoice {number}",
            "look up the {number} invoice {vendor} sent us",
        )

    @staticmethod
    def _invoice(chain: Chain, vendor: Record, number: str) -> Record:
        world = chain.world
        amount = float(world.rng.randrange(120, 4000))
        return {"vendor_id": vendor["id"], "number": number, "amount": amount, "due_date": world.day(12)} | {
            "description": world.rng.choice(GOODS)
        }


class InvoiceDetails(Step):
    """The invoice in full, with how it matches its purchase order."""

    kind = "read"
    name = "read_invoice"
    needs: ClassVar[tuple[str, ...]] = ("invoice",)

    def apply(self, chain: Chain) -> None:
        invoice = chain.need("invoice")
        chain.call("payments_get_invoice", {"invoice_id": invoice.ref}, save_as="bill")
        chain.report.append(f"It comes to {invoice.record['amount']:.2f} USD.")
        chain.clause(
            "check what it is for and how much", "tell me its amount", "read the invoice and tell me the total"
        )


class VendorDetails(Step):
    """The vendor's record: its open orders and unpaid invoices; binds ``vendor_email``."""

    kind = "read"
    name = "read_vendor"
    needs: ClassVar[tuple[str, ...]] = ("vendor",)
    gives: ClassVar[tuple[str, ...]] = ("vendor_email",)

    def apply(self, chain: Chain) -> None:
        vendor = chain.need("vendor")
        chain.call("payments_get_vendor", {"vendor_id": vendor.ref}, save_as="vendor")
        chain.bind("vendor_email", {"email": vendor.record["email"]}, "${vendor.email}", "payments")
        chain.clause("open the vendor's record", "look at the vendor's details", "check the vendor record")


class PastPayments(Step):
    """What we paid the vendor before: the report states the total."""

    kind = "read"
    name = "read_payments"
    needs: ClassVar[tuple[str, ...]] = ("vendor",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        vendor = chain.need("vendor")
        paid = [i for i in world.fixtures["payments"]["invoices"] if i["vendor_id"] == vendor.record["id"]]
        paid = [i for i in paid if i.get("status") == "paid"]
        for invoice in paid:
            record = {"invoice_id": invoice["id"], "vendor_id": vendor.record["id"], "amount": invoice["amount"]}
            invoice["payment_id"] = world.add("payments", "payments", record | {"date": invoice["due_date"]})["id"]
        chain.call("payments_list_payments", {"vendor_id": vendor.ref}, save_as="paid")
        chain.checks.answer_number("told_paid", sum(i["amount"] for i in paid), 0.01)
        chain.report.append("We paid them ${sum(paid.payments[*].amount)} USD before.")
        chain.clause(
            "tell me how much we have paid them so far",
            "add up the payments we already made to them",
            "total what we paid that vendor before",
        )


class Approve(Step):
    """Approve the invoice as the user (the approvers list says who may approve how much)."""

    kind = "act"
    name = "act_approve_invoice"
    needs: ClassVar[tuple[str, ...]] = ("invoice",)
    gives: ClassVar[tuple[str, ...]] = ("decision",)

    def apply(self, chain: Chain) -> None:
        invoice, me = chain.need("invoice"), chain.world.me.email
        chain.call("payments_list_approvers", {})
        changes = {"status": "approved", "approver": me}
        chain.update(
            "payments_approve_invoice",
            {"invoice_id": invoice.ref, "approver": me},
            invoice,
            changes,
            "invoice_approved",
        )
        chain.bind("decision", {"status": "approved"}, invoice.ref, "payments")
        chain.clause(
            "approve the invoice under my name", "sign the invoice off as me", "approve the invoice with me as approver"
        )


class Pay(Step):
    """Pay the approved invoice today: one payment of its amount."""

    kind = "act"
    name = "act_pay_invoice"
    needs: ClassVar[tuple[str, ...]] = ("invoice", "decision")

    def fits(self, chain: Chain) -> bool:
        return super().fits(chain) and chain.bound["decision"].record["status"] == "approved"

    def apply(self, chain: Chain) -> None:
        invoice, today = chain.need("invoice"), chain.world.day(0)
        approved = next(c for c in chain.checks if c.id == "invoice_approved")
        if isinstance(approved, FieldEquals):  # the approval's status check: paid is where the invoice ends
            approved.value = "paid"
        chain.call("payments_pay_invoice", {"invoice_id": invoice.ref, "date": today}, main=True)
        mine = field("invoice_id").eq(invoice.record["id"])
        paid = and_(mine, field("amount").eq(invoice.record["amount"]), field("date").eq(today))
        chain.checks.count("paid_once", "payments", "payments", mine, 1, 2.0, required=True)
        chain.checks.record_exists("payment_made", "payments", "payments", paid, 1.0)
        chain.allow("payments", "payments", mine)
        chain.clause("pay the invoice today", "then pay the invoice today", "and pay it today")


class Reject(Step):
    """Reject the invoice with the reason the request gives."""

    kind = "act"
    name = "act_reject_invoice"
    needs: ClassVar[tuple[str, ...]] = ("invoice",)
    gives: ClassVar[tuple[str, ...]] = ("decision",)

    def apply(self, chain: Chain) -> None:
        invoice = chain.need("invoice")
        reason = chain.world.rng.choice(REASONS)
        chain.facts["reason"] = stated("reason", reason)
        args = {"invoice_id": invoice.ref, "reason": "${facts.reason}"}
        chain.update(
            "payments_reject_invoice",
            args,
            invoice,
            {"status": "rejected", "rejection_reason": reason},
            "invoice_rejected",
        )
        chain.bind("decision", {"status": "rejected"}, invoice.ref, "payments")
        chain.clause(
            "reject the invoice as {reason}", "turn the invoice down, reason: {reason}", "reject the invoice ({reason})"
        )


class RecordAgainstOrder(Step):
    """Record the vendor's next invoice against their one open purchase order (the request gives number and amount)."""

    kind = "act"
    name = "act_record_invoice"
    needs: ClassVar[tuple[str, ...]] = ("vendor",)
    gives: ClassVar[tuple[str, ...]] = ("order",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        vendor = chain.need("vendor")
        order = {"vendor_id": vendor.record["id"], "description": world.rng.choice(GOODS), "amount": 9000.0}
        po = world.add("payments", "purchase_orders", order | {"requester": world.boss.email, "created": world.day(-9)})
        closed = order | {"requester": world.boss.email, "created": world.day(-40), "status": "closed"}
        world.add("payments", "purchase_orders", closed)
        number, amount = f"INV-{world.rng.randrange(10000, 99999)}", float(world.rng.randrange(200, 2000))
        chain.facts["new_number"] = stated("new_number", number)
        chain.facts["new_amount"] = stated("new_amount", f"{amount:.2f}", given=f"{amount:.2f} USD")
        chain.call("payments_list_purchase_orders", {"vendor_id": vendor.ref, "status": "open"}, save_as="pos")
        chain.call("payments_get_purchase_order", {"po_id": "${pos.purchase_orders[0].id}"})
        args = {"vendor_id": vendor.ref, "number": "${facts.new_number}", "amount": amount, "due_date": world.day(20)}
        made = and_(field("number").eq(number), field("amount").eq(amount), field("po_id").eq(po["id"]))
        chain.write(
            "payments_record_invoice",
            args | {"po_id": "${pos.purchase_orders[0].id}"},
            "invoices",
            ("invoice_recorded", made),
            field("number").eq(number),
            weight=3.0,
            main=True,
        )
        chain.bind("order", po, "${pos.purchase_orders[0].id}", "payments", "purchase_orders")
        chain.clause(
            f"record their new invoice {{new_number}} for {{new_amount}} against their open order, due {world.day(20)}",
            f"log invoice {{new_number}} ({{new_amount}}, due {world.day(20)}) on their open order",
            f"enter their invoice {{new_number}} of {{new_amount}} against the open PO, due {world.day(20)}",
        )


class RaiseOrder(Step):
    """Raise a purchase order with the vendor for what the request names, with the user as requester."""

    kind = "act"
    name = "act_create_po"
    needs: ClassVar[tuple[str, ...]] = ("vendor",)
    gives: ClassVar[tuple[str, ...]] = ("order",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        vendor = chain.need("vendor")
        goods, amount = world.rng.choice(GOODS), float(world.rng.randrange(5, 60) * 100)
        chain.facts["goods"] = stated("goods", goods)
        args = {"vendor_id": vendor.ref, "description": "${facts.goods}", "amount": amount, "requester": world.me.email}
        mine = field("vendor_id").eq(vendor.record["id"]) & field("description").eq(goods)
        made = mine & field("amount").eq(amount) & field("requester").eq(world.me.email)
        chain.write(
            "payments_create_purchase_order",
            args,
            "purchase_orders",
            ("po_raised", made),
            field("created").eq("now"),
            weight=3.0,
            main=True,
        )
        chain.bind("order", {"description": goods}, "", "payments", "purchase_orders")
        chain.clause(
            f"raise a purchase order with them for {{goods}}, {amount:.0f} USD, with me as requester",
            f"open a {amount:.0f} USD PO with them for {{goods}} (requester: me)",
            f"put in a purchase order for {{goods}} worth {amount:.0f} USD with them, requested by me",
        )


LOCATE: tuple[Step, ...] = (ByNumber(),)
START: tuple[Step, ...] = ()
READ: tuple[Step, ...] = (InvoiceDetails(), VendorDetails(), PastPayments())
ACT: tuple[Step, ...] = (Approve(), Pay(), Reject(), RecordAgainstOrder(), RaiseOrder())
