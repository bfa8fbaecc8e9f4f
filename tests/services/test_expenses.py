import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.expenses import Expenses

ANA, MGR = "ana@acme.com", "zoe@acme.com"
FIXTURES = {
    "expenses": [
        {
            "id": "e1",
            "employee": ANA,
            "amount": 42.5,
            "category": "meals",
            "description": "Client lunch",
            "date": "2026-03-01",
            "receipt": True,
        },
        {
            "id": "e2",
            "employee": ANA,
            "amount": 900,
            "category": "travel",
            "description": "Flight",
            "date": "2026-03-02",
            "status": "submitted",
            "receipt": True,
        },
        {
            "id": "e3",
            "employee": "bob@acme.com",
            "amount": 15,
            "category": "meals",
            "description": "Coffee",
            "date": "2026-03-03",
            "status": "approved",
        },
    ],
    "rules": [
        {"id": "r1", "category": "travel", "limit": 500, "needs_receipt": True},
        {"id": "r2", "category": "meals", "limit": 75},
        {"id": "r3", "category": "hardware", "limit": 2000, "preapproval_above": 1000},
    ],
}


@pytest.fixture
def svc() -> Expenses:
    return Expenses(Expenses.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Expenses,
        {
            "expenses_list_expenses": "read",
            "expenses_get_expense": "read",
            "expenses_create_expense": "write",
            "expenses_submit": "write",
            "expenses_request_approval": "write",
            "expenses_approve": "write",
            "expenses_reject": "write",
            "expenses_preapprove": "write",
            "expenses_list_rules": "read",
        },
    )


def test_reads(svc):
    assert [e["id"] for e in svc.list_expenses(employee=ANA)["expenses"]] == ["e2", "e1"]
    assert [e["id"] for e in svc.list_expenses(category="meals", status="approved")["expenses"]] == ["e3"]
    res = svc.list_expenses(limit=1, offset=2)
    assert [e["id"] for e in res["expenses"]] == ["e1"] and res["next_offset"] is None and res["total"] == 3
    assert [r["category"] for r in svc.list_rules()["rules"]] == ["hardware", "meals", "travel"]


def test_workflow_copy_on_write(svc):
    created = svc.create_expense(employee=ANA, amount=30, category="meals", description="Taxi", date="2026-03-04")
    eid = created["id"]
    draft = svc.db["expenses"][eid]
    assert draft["status"] == "draft" and draft["currency"] == "USD"
    svc.submit(expense_id=eid)
    svc.request_approval(expense_id=eid, approver=MGR)
    svc.approve(expense_id=eid)
    assert draft["status"] == "draft"
    assert (svc.db["expenses"][eid]["status"], svc.db["expenses"][eid]["approver"]) == ("approved", MGR)
    svc.reject(expense_id="e2", reason="Over the travel limit")
    assert svc.get_expense(expense_id="e2")["rejection_reason"] == "Over the travel limit"


def test_validation(svc):
    with pytest.raises(ToolError, match="greater than 0"):
        svc.create_expense(employee=ANA, amount=0, category="meals", description="x", date="2026-03-04")
    with pytest.raises(ToolError, match="unknown category"):
        svc.create_expense(employee=ANA, amount=5, category="yachts", description="x", date="2026-03-04")
    with pytest.raises(ToolError):
        svc.create_expense(employee=ANA, amount=5, category="meals", description="x", date="04/03/2026")
    with pytest.raises(ToolError, match="status 'approved'"):
        svc.submit(expense_id="e3")
    with pytest.raises(ToolError, match="own expense"):
        svc.request_approval(expense_id="e2", approver=ANA)
    with pytest.raises(ToolError):
        svc.approve(expense_id="e1")  # still a draft
    travel = svc.create_expense(employee=ANA, amount=200, category="travel", description="Hotel", date="2026-03-05")
    with pytest.raises(ToolError, match="receipt"):
        svc.submit(expense_id=travel["id"])


def test_submission_needs_preapproval_where_the_rule_says_so(svc):
    big = svc.create_expense(employee=ANA, amount=1500, category="hardware", description="Laptop", date="2026-03-06")
    with pytest.raises(ToolError, match="need a pre-approval before submitting"):
        svc.submit(expense_id=big["id"])
    assert svc.db["expenses"][big["id"]]["status"] == "draft"
    with pytest.raises(ToolError, match="own expense"):
        svc.preapprove(expense_id=big["id"], approver=ANA)
    svc.preapprove(expense_id=big["id"], approver=MGR)
    assert svc.submit(expense_id=big["id"])["status"] == "submitted"
    assert svc.db["expenses"][big["id"]]["preapproved_by"] == MGR
    with pytest.raises(ToolError, match="status 'submitted'"):
        svc.preapprove(expense_id=big["id"], approver=MGR)
    small = svc.create_expense(employee=ANA, amount=900, category="hardware", description="Dock", date="2026-03-06")
    with pytest.raises(ToolError, match="needs no pre-approval"):
        svc.preapprove(expense_id=small["id"], approver=MGR)
    assert svc.submit(expense_id=small["id"])["status"] == "submitted"  # under the threshold: as before
