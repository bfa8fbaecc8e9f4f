import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.payments import Payments

BUYER, CFO, CLERK = "ana@acme.com", "cfo@acme.com", "clerk@acme.com"
FIXTURES = {
    "vendors": [
        {"id": "v1", "name": "Paper Co", "email": "billing@paper.example", "category": "office"},
        {"id": "v2", "name": "Shady Ltd", "blocked": True},
    ],
    "purchase_orders": [
        {
            "id": "po1",
            "vendor_id": "v1",
            "description": "Paper",
            "amount": 1000,
            "requester": BUYER,
            "created": "2026-03-01",
        },
    ],
    "invoices": [
        {"id": "i1", "vendor_id": "v1", "number": "PC-1", "amount": 600, "po_id": "po1", "due_date": "2026-04-01"},
        {"id": "i2", "vendor_id": "v1", "number": "PC-2", "amount": 500, "po_id": "po1", "due_date": "2026-04-02"},
        {"id": "i3", "vendor_id": "v2", "number": "S-9", "amount": 50, "due_date": "2026-03-20", "status": "approved"},
    ],
    "approvers": [{"id": "a1", "email": CLERK, "limit": 100}, {"id": "a2", "email": CFO, "limit": 50000}],
}


@pytest.fixture
def svc() -> Payments:
    return Payments(Payments.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Payments,
        {
            "payments_search_vendors": "read",
            "payments_get_vendor": "read",
            "payments_list_purchase_orders": "read",
            "payments_get_purchase_order": "read",
            "payments_create_purchase_order": "write",
            "payments_list_invoices": "read",
            "payments_get_invoice": "read",
            "payments_record_invoice": "write",
            "payments_approve_invoice": "write",
            "payments_reject_invoice": "write",
            "payments_pay_invoice": "write",
            "payments_list_payments": "read",
            "payments_list_approvers": "read",
        },
    )


def test_reads(svc):
    assert [v["id"] for v in svc.search_vendors(query="paper")["vendors"]] == ["v1"]
    ven = svc.get_vendor(vendor_id="v1")
    assert [p["id"] for p in ven["open_purchase_orders"]] == ["po1"] and len(ven["unpaid_invoices"]) == 2
    assert [i["id"] for i in svc.list_invoices(po_id="po1")["invoices"]] == ["i1", "i2"]
    assert [i["id"] for i in svc.list_invoices(status="approved")["invoices"]] == ["i3"]
    assert svc.get_purchase_order(po_id="po1")["remaining"] == 1000
    assert svc.get_invoice(invoice_id="i1")["po_match"]["matches"] is True
    assert [a["email"] for a in svc.list_approvers()["approvers"]] == [CFO, CLERK]


def test_approve_then_pay_once(svc):
    old = svc.db["invoices"]["i1"]
    assert svc.approve_invoice(invoice_id="i1", approver=CFO)["status"] == "approved"
    assert old["status"] == "received"  # copy-on-write
    paid = svc.pay_invoice(invoice_id="i1", date="2026-03-15")
    assert svc.db["invoices"]["i1"]["payment_id"] == paid["payment_id"]
    assert svc.db["payments"][paid["payment_id"]]["amount"] == 600
    with pytest.raises(ToolError, match="already paid"):
        svc.pay_invoice(invoice_id="i1", date="2026-03-16")
    assert len(svc.db["payments"]) == 1
    assert [p["id"] for p in svc.list_payments(vendor_id="v1")["payments"]] == [paid["payment_id"]]


def test_payment_rules_cannot_be_bypassed(svc):
    with pytest.raises(ToolError, match="must be approved first"):
        svc.pay_invoice(invoice_id="i1", date="2026-03-15")
    with pytest.raises(ToolError, match="not an invoice approver"):
        svc.approve_invoice(invoice_id="i1", approver="someone@acme.com")
    with pytest.raises(ToolError, match=r"may approve up to 100\.00"):
        svc.approve_invoice(invoice_id="i1", approver=CLERK)
    svc.store("approvers", "a3", {"id": "a3", "email": BUYER, "limit": 10000})
    with pytest.raises(ToolError, match="requester of the purchase order"):
        svc.approve_invoice(invoice_id="i1", approver=BUYER)
    svc.approve_invoice(invoice_id="i1", approver=CFO)
    with pytest.raises(ToolError, match="does not match its purchase order"):  # 600 + 500 > 1000
        svc.approve_invoice(invoice_id="i2", approver=CFO)
    with pytest.raises(ToolError, match="blocked"):
        svc.pay_invoice(invoice_id="i3", date="2026-03-15")
    svc.reject_invoice(invoice_id="i2", reason="over the PO")
    with pytest.raises(ToolError, match="needs received"):
        svc.approve_invoice(invoice_id="i2", approver=CFO)
    with pytest.raises(ToolError, match="must be approved first"):
        svc.pay_invoice(invoice_id="i2", date="2026-03-15")
    assert svc.db["payments"] == {}


def test_record_invoice_and_po(svc):
    po = svc.create_purchase_order(vendor_id="v1", description="Toner", amount=300, requester=BUYER)
    inv = svc.record_invoice(vendor_id="v1", number="PC-3", amount=300, due_date="2026-05-01", po_id=po["id"])
    assert inv["po_match"]["matches"] and svc.db["invoices"][inv["id"]]["status"] == "received"
    with pytest.raises(ToolError, match="already recorded as 'i1'"):
        svc.record_invoice(vendor_id="v1", number="pc-1", amount=10, due_date="2026-05-01")
    svc.record_invoice(vendor_id="v2", number="PC-1", amount=10, due_date="2026-05-01")  # another vendor's numbering
    with pytest.raises(ToolError, match="another vendor"):
        svc.record_invoice(vendor_id="v2", number="X", amount=10, due_date="2026-05-01", po_id="po1")


@pytest.mark.parametrize(
    ("method", "args", "match"),
    [
        ("get_invoice", {"invoice_id": "nope"}, "no invoices record"),
        ("list_invoices", {"vendor_id": "nope"}, "no vendors record"),
        ("list_purchase_orders", {"vendor_id": "nope"}, "no vendors record"),
        ("create_purchase_order", {"vendor_id": "v1", "description": " ", "amount": 5, "requester": BUYER}, "empty"),
        ("create_purchase_order", {"vendor_id": "v1", "description": "x", "amount": 5, "requester": "me"}, "email"),
        ("create_purchase_order", {"vendor_id": "v1", "description": "x", "amount": -5, "requester": BUYER}, "than 0"),
        ("create_purchase_order", {"vendor_id": "v1", "description": "x", "amount": 5, "requester": BUYER,
                                   "currency": "dollars"}, "3-letter"),
        ("record_invoice", {"vendor_id": "v1", "number": "N", "amount": 5, "due_date": "soon"}, "YYYY-MM-DD"),
        ("record_invoice", {"vendor_id": "v1", "number": "", "amount": 5, "due_date": "2026-01-01"}, "empty"),
        ("approve_invoice", {"invoice_id": "i1", "approver": "not an email"}, "email"),
        ("reject_invoice", {"invoice_id": "i1", "reason": "  "}, "empty"),
        ("pay_invoice", {"invoice_id": "i3", "date": "2026-02-30"}, "blocked|YYYY-MM-DD"),
    ],
)  # fmt: skip
def test_validation(svc, rejected, method, args, match):
    rejected(svc, method, args, match)
