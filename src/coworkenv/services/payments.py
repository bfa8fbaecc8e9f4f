"""Payments: accounts payable, i.e. vendors, purchase orders, invoices, their approval and payment.

The rules a real AP desk enforces are enforced here, so no tool sequence can skip them: an
invoice is paid only once it is approved; approving needs a named approver whose limit covers
the amount and who did not request the purchase; an invoice against a purchase order may not
exceed what is left of the order; a vendor's invoice number is recorded once; a paid invoice
cannot be paid again (the error names the earlier payment).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from coworkenv.services.base import (
    Limit,
    Offset,
    Record,
    RecordModel,
    Result,
    Service,
    ToolError,
    check_date,
    check_email,
    joined,
    page,
    query_words,
    tool,
)
from coworkenv.services.damage import Damage

InvoiceStatus = Literal["received", "approved", "rejected", "paid"]
PoStatus = Literal["open", "closed", "cancelled"]
CENT = 0.005


class Vendor(RecordModel):
    name: str
    email: str = ""
    category: str = ""
    blocked: bool = False
    """A blocked vendor (failed bank-detail check, dispute) can be invoiced but not paid."""


class PurchaseOrder(RecordModel):
    vendor_id: str
    description: str
    amount: float = Field(ge=0)
    currency: str = "USD"
    requester: str = ""
    status: PoStatus = "open"
    created: str = ""


class Invoice(RecordModel):
    vendor_id: str
    number: str
    amount: float = Field(ge=0)
    currency: str = "USD"
    po_id: str | None = None
    due_date: str = ""
    description: str = ""
    status: InvoiceStatus = "received"
    approver: str | None = None
    rejection_reason: str | None = None
    payment_id: str | None = None


class Payment(RecordModel):
    invoice_id: str
    vendor_id: str
    amount: float
    currency: str = "USD"
    date: str


class Approver(RecordModel):
    email: str
    limit: float = Field(ge=0, description="the largest invoice amount this person may approve")


def _currency(code: str) -> str:
    if len(code) != 3 or not code.isalpha():
        raise ToolError(f"invalid currency {code!r}: expected a 3-letter code like USD")
    return code.upper()


def _vendor_text(v: Record) -> str:
    return joined(v["name"], v["email"], v["category"])


class Payments(Service):
    name = "payments"
    description = "accounts payable: vendors, purchase orders, invoices, their approval and payment"
    records = {
        "vendors": Vendor,
        "purchase_orders": PurchaseOrder,
        "invoices": Invoice,
        "payments": Payment,
        "approvers": Approver,
    }
    id_prefix = {"vendors": "ven", "purchase_orders": "po", "invoices": "inv", "payments": "pay", "approvers": "apr"}
    damage: ClassVar[dict[str, Damage]] = {
        "invoices": Damage.rejecting("payments_reject_invoice", "invoice_id", ("received", "approved"))
    }

    # --- lookups -------------------------------------------------------------------------

    def _po_remaining(self, po: Record, excluding: str | None = None) -> float:
        """What is left of a purchase order after the invoices approved or paid against it."""
        used = sum(
            i["amount"]
            for i in self.lookup("invoices", "po_id", po["id"])
            if i["status"] in ("approved", "paid") and i["id"] != excluding
        )
        remaining: float = round(po["amount"] - used, 2)
        return remaining

    def _match(self, inv: Record) -> Record | None:
        """How an invoice compares with its purchase order (None without one)."""
        if inv["po_id"] is None:
            return None
        po = self.db["purchase_orders"].get(inv["po_id"])
        if po is None:
            return {"po_id": inv["po_id"], "problem": "no such purchase order"}
        remaining = self._po_remaining(po, excluding=inv["id"])
        ok = inv["amount"] <= remaining + CENT and inv["currency"] == po["currency"] and po["status"] == "open"
        return {"po_id": po["id"], "po_amount": po["amount"], "po_remaining": remaining, "matches": ok}

    # --- vendors and orders --------------------------------------------------------------

    @tool("read")
    def search_vendors(self, query: str = "", limit: Limit = 10, offset: Offset = 0) -> Result:
        """Search vendors by words in name, email or category."""
        words = query_words(query)
        hits = list(self.text_search("vendors", words, _vendor_text))
        hits.sort(key=lambda v: (v["name"], v["id"]))
        return page(hits, limit, offset, key="vendors")

    @tool("read")
    def get_vendor(self, vendor_id: str) -> Result:
        """Get a vendor with its open purchase orders and unpaid invoices."""
        ven = self.get("vendors", vendor_id)
        pos = [p for p in self.lookup("purchase_orders", "vendor_id", vendor_id) if p["status"] == "open"]
        unpaid = [i for i in self.lookup("invoices", "vendor_id", vendor_id) if i["status"] in ("received", "approved")]
        return {**ven, "open_purchase_orders": pos, "unpaid_invoices": unpaid}

    @tool("read")
    def list_purchase_orders(
        self, vendor_id: str | None = None, status: PoStatus | None = None, limit: Limit = 20, offset: Offset = 0
    ) -> Result:
        """List purchase orders, optionally of one vendor or in one status. Newest first."""
        if vendor_id:
            self.get("vendors", vendor_id)
        rows = (
            self.lookup("purchase_orders", "vendor_id", vendor_id) if vendor_id else self.db["purchase_orders"].values()
        )
        hits = [p for p in rows if status is None or p["status"] == status]
        hits.sort(key=lambda p: (p["created"], p["id"]), reverse=True)
        return page(hits, limit, offset, key="purchase_orders")

    @tool("read")
    def get_purchase_order(self, po_id: str) -> Result:
        """Get a purchase order with the invoices against it and the amount still open."""
        po = self.get("purchase_orders", po_id)
        return {**po, "invoices": self.lookup("invoices", "po_id", po_id), "remaining": self._po_remaining(po)}

    @tool("write")
    def create_purchase_order(
        self,
        vendor_id: str,
        description: str,
        amount: Annotated[float, Field(gt=0)],
        requester: Annotated[str, Field(description="the requester's email")],
        currency: Annotated[str, Field(description="ISO 4217 code, e.g. USD")] = "USD",
    ) -> Result:
        """Raise a purchase order with a vendor."""
        self.get("vendors", vendor_id)
        check_email(requester, "requester")
        if not description.strip():
            raise ToolError("description must not be empty")
        if amount <= 0:
            raise ToolError("amount must be greater than 0")
        fields = {"vendor_id": vendor_id, "description": description, "amount": float(amount)}
        rec = self.insert(
            "purchase_orders", {**fields, "currency": _currency(currency), "requester": requester, "created": "now"}
        )
        return {"created": True, "id": rec["id"], "status": "open"}

    # --- invoices ------------------------------------------------------------------------

    @tool("read")
    def list_invoices(
        self,
        vendor_id: str | None = None,
        status: InvoiceStatus | None = None,
        po_id: str | None = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> Result:
        """List invoices, optionally of one vendor, in one status or against one purchase order. Soonest due first."""
        if vendor_id:
            self.get("vendors", vendor_id)
            rows = self.lookup("invoices", "vendor_id", vendor_id)
        elif po_id:
            self.get("purchase_orders", po_id)
            rows = self.lookup("invoices", "po_id", po_id)
        else:
            rows = list(self.db["invoices"].values())
        hits = [i for i in rows if (status is None or i["status"] == status) and (po_id is None or i["po_id"] == po_id)]
        hits.sort(key=lambda i: (i["due_date"], i["id"]))
        return page(hits, limit, offset, key="invoices")

    @tool("read")
    def get_invoice(self, invoice_id: str) -> Result:
        """Get one invoice in full, with how it matches its purchase order."""
        inv = self.get("invoices", invoice_id)
        return {**inv, "po_match": self._match(inv)}

    @tool("write")
    def record_invoice(
        self,
        vendor_id: str,
        number: Annotated[str, Field(description="the vendor's invoice number")],
        amount: Annotated[float, Field(gt=0)],
        due_date: Annotated[str, Field(description="YYYY-MM-DD")],
        po_id: Annotated[str | None, Field(description="the purchase order it bills, if any")] = None,
        currency: Annotated[str, Field(description="ISO 4217 code, e.g. USD")] = "USD",
        description: str = "",
    ) -> Result:
        """Record a vendor's invoice as received (a vendor's invoice number can be recorded only once)."""
        self.get("vendors", vendor_id)
        if not number.strip():
            raise ToolError("number must not be empty")
        if amount <= 0:
            raise ToolError("amount must be greater than 0")
        if po_id is not None and self.get("purchase_orders", po_id)["vendor_id"] != vendor_id:
            raise ToolError(f"purchase order {po_id!r} belongs to another vendor")
        for other in self.lookup("invoices", "number", number.strip().lower(), lower=True):
            if other["vendor_id"] == vendor_id:
                raise ToolError(f"invoice number {number!r} of this vendor is already recorded as {other['id']!r}")
        fields = {"vendor_id": vendor_id, "number": number.strip(), "amount": float(amount), "po_id": po_id}
        rec = self.insert(
            "invoices",
            {
                **fields,
                "currency": _currency(currency),
                "due_date": check_date(due_date, "due_date"),
                "description": description,
            },
        )
        return {"recorded": True, "id": rec["id"], "status": "received", "po_match": self._match(rec)}

    @tool("write")
    def approve_invoice(
        self, invoice_id: str, approver: Annotated[str, Field(description="the approver's email")]
    ) -> Result:
        """Approve a received invoice for payment on behalf of an approver whose limit covers it.

        The approver must be on the approvers list, must not have requested the purchase order,
        and an invoice against a purchase order must fit in what is left of the order.
        """
        check_email(approver, "approver")
        inv = self.get("invoices", invoice_id)
        if inv["status"] != "received":
            raise ToolError(f"cannot approve invoice {invoice_id!r} in status {inv['status']!r} (needs received)")
        allowed = self.lookup("approvers", "email", approver.lower(), lower=True)
        if not allowed:
            raise ToolError(f"{approver} is not an invoice approver; see payments_list_approvers")
        if max(a["limit"] for a in allowed) + CENT < inv["amount"]:
            raise ToolError(
                f"{approver} may approve up to {max(a['limit'] for a in allowed):.2f}, not {inv['amount']:.2f}"
            )
        match = self._match(inv)
        if match is not None:
            if "problem" in match or not match["matches"]:
                raise ToolError(f"invoice {invoice_id!r} does not match its purchase order: {match}")
            if self.db["purchase_orders"][inv["po_id"]]["requester"].lower() == approver.lower():
                raise ToolError("the requester of the purchase order cannot approve its invoices")
        self.update("invoices", invoice_id, {"status": "approved", "approver": approver})
        return {"id": invoice_id, "status": "approved", "approver": approver}

    @tool("write")
    def reject_invoice(self, invoice_id: str, reason: str) -> Result:
        """Reject a received or approved (not yet paid) invoice, giving a reason."""
        if not reason.strip():
            raise ToolError("reason must not be empty")
        inv = self.get("invoices", invoice_id)
        if inv["status"] not in ("received", "approved"):
            raise ToolError(f"cannot reject invoice {invoice_id!r} in status {inv['status']!r}")
        self.update("invoices", invoice_id, {"status": "rejected", "rejection_reason": reason})
        return {"id": invoice_id, "status": "rejected", "reason": reason}

    @tool("write")
    def pay_invoice(
        self, invoice_id: str, date: Annotated[str, Field(description="payment date, YYYY-MM-DD")]
    ) -> Result:
        """Pay an approved invoice in full; an invoice is paid at most once."""
        inv = self.get("invoices", invoice_id)
        if inv["status"] == "paid":
            raise ToolError(f"invoice {invoice_id!r} is already paid (payment {inv['payment_id']!r})")
        if inv["status"] != "approved":
            raise ToolError(f"cannot pay invoice {invoice_id!r} in status {inv['status']!r}: it must be approved first")
        vendor = self.get("vendors", inv["vendor_id"])
        if vendor["blocked"]:
            raise ToolError(f"vendor {vendor['name']!r} is blocked for payments")
        fields = {"invoice_id": invoice_id, "vendor_id": inv["vendor_id"], "amount": inv["amount"]}
        pay = self.insert("payments", {**fields, "currency": inv["currency"], "date": check_date(date)})
        self.update("invoices", invoice_id, {"status": "paid", "payment_id": pay["id"]})
        return {"paid": True, "payment_id": pay["id"], "invoice_id": invoice_id, "amount": inv["amount"]}

    @tool("read")
    def list_payments(self, vendor_id: str | None = None, limit: Limit = 20, offset: Offset = 0) -> Result:
        """List executed payments, optionally to one vendor. Newest first."""
        if vendor_id:
            self.get("vendors", vendor_id)
        rows = self.lookup("payments", "vendor_id", vendor_id) if vendor_id else list(self.db["payments"].values())
        rows = sorted(rows, key=lambda p: (p["date"], p["id"]), reverse=True)
        return page(rows, limit, offset, key="payments")

    @tool("read")
    def list_approvers(self) -> Result:
        """List who may approve invoices, and up to what amount."""
        return {"approvers": sorted(self.db["approvers"].values(), key=lambda a: (a["email"], a["id"]))}
