import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.tickets import Tickets

FIXTURES = {
    "tickets": [
        {
            "id": "t1",
            "title": "VPN down",
            "description": "Cannot connect",
            "priority": "urgent",
            "team": "it",
            "created": "2026-03-01",
            "assignee": "sam@acme.com",
        },
        {
            "id": "t2",
            "title": "Laptop request",
            "team": "it",
            "created": "2026-03-02",
            "status": "in_progress",
            "tags": ["hardware"],
        },
        {"id": "t3", "title": "Payroll error", "team": "finance", "created": "2026-03-03", "priority": "high"},
        {
            "id": "t4",
            "title": "Export fails",
            "team": "support",
            "created": "2026-03-04",
            "due": "2026-03-10",
            "customer": "Initech",
        },
    ],
    "oncall": [
        {"id": "s1", "team": "it", "engineer": "sam@acme.com", "start": "2026-03-01T00:00", "end": "2026-03-08T00:00"},
        {"id": "s2", "team": "it", "engineer": "kim@acme.com", "start": "2026-03-08T00:00", "end": "2026-03-15T00:00"},
    ],
}


@pytest.fixture
def svc() -> Tickets:
    return Tickets(Tickets.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Tickets,
        {
            "tickets_search": "read",
            "tickets_get": "read",
            "tickets_create": "write",
            "tickets_update": "write",
            "tickets_assign": "write",
            "tickets_comment": "write",
            "tickets_get_oncall": "read",
        },
    )


def test_search_filters_and_pagination(svc):
    ids = lambda r: [t["id"] for t in r["tickets"]]  # noqa: E731
    assert ids(svc.search(team="it")) == ["t2", "t1"]
    assert ids(svc.search(customer="initech")) == ids(svc.search(due_before="2026-03-10")) == ["t4"]
    assert svc.search(customer="initech")["tickets"][0]["due"] == "2026-03-10"
    assert ids(svc.search(due_before="2026-03-09")) == []
    assert ids(svc.search(priority="urgent")) == ["t1"]
    assert ids(svc.search(status="open")) == ["t4", "t3", "t1"]
    assert ids(svc.search(assignee="SAM@acme.com")) == ["t1"]
    assert ids(svc.search(query="connect")) == ["t1"]
    assert ids(svc.search(tag="hardware")) == ["t2"]
    res = svc.search(limit=2)
    assert ids(res) == ["t4", "t3"] and res["next_offset"] == 2 and res["total"] == 4


def test_writes_copy_on_write(svc):
    old = svc.db["tickets"]["t3"]
    svc.assign(ticket_id="t3", assignee="ana@acme.com")
    svc.update_ticket(ticket_id="t3", status="in_progress")
    svc.comment(ticket_id="t3", text="Looking into it")
    new = svc.get_ticket(ticket_id="t3")
    assert (new["assignee"], new["status"], new["comments"]) == ("ana@acme.com", "in_progress", ["me: Looking into it"])
    assert old["assignee"] is None and old["status"] == "open" and old["comments"] == []
    created = svc.create(title="Printer jam", description="3rd floor", team="it", priority="low")
    assert svc.get_ticket(ticket_id=created["id"])["status"] == "open"
    assert (svc.db["tickets"][created["id"]]["due"], svc.db["tickets"][created["id"]]["customer"]) == ("", "")


def test_due_date_and_customer(svc):
    made = svc.create(title="SSO broken", description="", team="support", due="2026-03-12", customer="Acme Corp")
    rec = svc.get_ticket(ticket_id=made["id"])
    assert (rec["due"], rec["customer"]) == ("2026-03-12", "Acme Corp")
    svc.update_ticket(ticket_id=made["id"], due="2026-03-20")
    assert svc.get_ticket(ticket_id=made["id"])["due"] == "2026-03-20"
    with pytest.raises(ToolError, match="YYYY-MM-DD"):
        svc.update_ticket(ticket_id=made["id"], due="next week")
    with pytest.raises(ToolError, match="YYYY-MM-DD"):
        svc.create(title="x", description="", team="it", due="2026-02-30")
    with pytest.raises(ToolError, match="YYYY-MM-DD"):
        svc.search(due_before="soon")
    assert svc.get_ticket(ticket_id=made["id"])["due"] == "2026-03-20"


def test_oncall(svc):
    assert [s["engineer"] for s in svc.get_oncall(team="it")["shifts"]] == ["sam@acme.com", "kim@acme.com"]
    assert [s["engineer"] for s in svc.get_oncall(team="IT", at="2026-03-09T12:00")["shifts"]] == ["kim@acme.com"]
    with pytest.raises(ToolError, match="teams: it"):
        svc.get_oncall(team="legal")


def test_validation(svc):
    with pytest.raises(ToolError):
        svc.update_ticket(ticket_id="t1", status="done")
    with pytest.raises(ToolError):
        svc.update_ticket(ticket_id="t1")
    with pytest.raises(ToolError):
        svc.create(title="x", description="y", team="it", priority="critical")
    with pytest.raises(ToolError):
        svc.assign(ticket_id="t1", assignee="sam")
    with pytest.raises(ToolError):
        svc.comment(ticket_id="t1", text="  ")
    with pytest.raises(ToolError):
        svc.get_ticket(ticket_id="t9")
