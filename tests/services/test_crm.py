import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.crm import Crm

FIXTURES = {
    "accounts": [
        {
            "id": "a1",
            "name": "Acme Corp",
            "industry": "Manufacturing",
            "tier": "enterprise",
            "owner": "ana@us.com",
            "renewal_date": "2026-06-30",
            "arr": 120000,
        },
        {"id": "a2", "name": "Globex", "industry": "Energy", "tier": "smb", "owner": "bob@us.com"},
    ],
    "deals": [
        {
            "id": "d1",
            "account_id": "a1",
            "name": "Expansion",
            "stage": "proposal",
            "amount": 50000,
            "close_date": "2026-05-01",
            "owner": "ana@us.com",
        },
        {
            "id": "d2",
            "account_id": "a1",
            "name": "Renewal",
            "stage": "negotiation",
            "amount": 120000,
            "close_date": "2026-04-01",
            "owner": "ana@us.com",
        },
        {"id": "d3", "account_id": "a2", "name": "Pilot", "amount": 5000, "close_date": "2026-07-01"},
    ],
    "activities": [{"id": "x1", "account_id": "a1", "kind": "call", "summary": "Kickoff", "date": "2026-02-01"}],
    "contacts": [
        {
            "id": "c1",
            "account_id": "a1",
            "name": "Kenji Ito",
            "email": "kenji@acme.example",
            "role": "Procurement Lead",
        },
        {
            "id": "c2",
            "account_id": "a1",
            "name": "Ada Park",
            "email": "ada@acme.example",
            "role": "CTO",
            "primary": True,
        },
        {
            "id": "c3",
            "account_id": "a2",
            "name": "Lee Moss",
            "email": "lee@globex.example",
            "role": "Head of Procurement",
        },
    ],
}


@pytest.fixture
def svc() -> Crm:
    return Crm(Crm.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Crm,
        {
            "crm_search_accounts": "read",
            "crm_get_account": "read",
            "crm_list_deals": "read",
            "crm_update_deal": "write",
            "crm_log_activity": "write",
            "crm_find_contacts": "read",
        },
    )


def test_reads(svc):
    assert [a["id"] for a in svc.search_accounts(tier="enterprise")["accounts"]] == ["a1"]
    assert [a["id"] for a in svc.search_accounts(query="energy")["accounts"]] == ["a2"]
    assert [a["id"] for a in svc.search_accounts(owner="BOB@us.com")["accounts"]] == ["a2"]
    acc = svc.get_account(account_id="a1")
    assert [d["id"] for d in acc["deals"]] == ["d2", "d1"] and acc["recent_activities"][0]["summary"] == "Kickoff"
    assert [d["id"] for d in svc.list_deals(account_id="a1", stage="proposal")["deals"]] == ["d1"]
    res = svc.list_deals(limit=2)
    assert [d["id"] for d in res["deals"]] == ["d2", "d1"] and res["next_offset"] == 2 and res["total"] == 3


def test_writes_copy_on_write(svc):
    old = svc.db["deals"]["d1"]
    svc.update_deal(deal_id="d1", stage="won", amount=55000)
    assert old["stage"] == "proposal" and svc.db["deals"]["d1"]["stage"] == "won"
    assert svc.db["deals"]["d1"]["amount"] == 55000.0
    logged = svc.log_activity(account_id="a2", kind="meeting", summary="Demo", date="2026-03-05")
    assert svc.db["activities"][logged["id"]]["account_id"] == "a2"


def test_validation(svc):
    with pytest.raises(ToolError, match="stage"):
        svc.update_deal(deal_id="d1", stage="closed")
    with pytest.raises(ToolError):
        svc.update_deal(deal_id="d1", amount=-1)
    with pytest.raises(ToolError):
        svc.update_deal(deal_id="d1", close_date="soon")
    with pytest.raises(ToolError):
        svc.update_deal(deal_id="d1")
    with pytest.raises(ToolError):
        svc.log_activity(account_id="a9", kind="call", summary="x", date="2026-03-05")
    with pytest.raises(ToolError, match="kind"):
        svc.log_activity(account_id="a1", kind="fax", summary="x", date="2026-03-05")


def test_contact_people(svc):
    assert [c["id"] for c in svc.get_account(account_id="a1")["contacts"]] == ["c2", "c1"]  # the primary first
    assert [c["id"] for c in svc.find_contacts(account_id="a1")["contacts"]] == ["c2", "c1"]
    assert [c["id"] for c in svc.find_contacts(role="procurement")["contacts"]] == ["c1", "c3"]
    assert [c["id"] for c in svc.find_contacts(account_id="a2", role="procurement")["contacts"]] == ["c3"]
    assert [c["id"] for c in svc.find_contacts(email=" LEE@globex.example")["contacts"]] == ["c3"]
    assert svc.find_contacts(email="nobody@x.example")["contacts"] == []
    with pytest.raises(ToolError, match="no accounts record"):
        svc.find_contacts(account_id="a9")
