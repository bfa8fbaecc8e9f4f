import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.hr import Hr, workdays

ANA, BOB, CAL, MGR = "ana@acme.com", "bob@acme.com", "cal@acme.com", "mgr@acme.com"
FIXTURES = {
    "employees": [
        {"id": "e1", "email": ANA, "name": "Ana", "manager": MGR, "team": "sre"},
        {"id": "e2", "email": BOB, "name": "Bob", "manager": MGR, "team": "sre"},
        {"id": "e3", "email": CAL, "name": "Cal", "manager": MGR, "team": "sre"},
        {"id": "e4", "email": MGR, "name": "Mia"},
    ],
    "balances": [
        {"id": "b1", "employee": ANA, "kind": "vacation", "days": 10},
        {"id": "b2", "employee": BOB, "kind": "vacation", "days": 2},
    ],
    "leave": [{"id": "l1", "employee": CAL, "kind": "vacation", "start": "2026-03-09", "end": "2026-03-13", "days": 5,
               "status": "approved", "approver": MGR}],
    "rota": [
        {"id": "s1", "rota": "sre", "person": ANA, "start": "2026-03-02T09:00", "end": "2026-03-09T09:00"},
        {"id": "s2", "rota": "sre", "person": BOB, "start": "2026-03-09T09:00", "end": "2026-03-16T09:00"},
        {"id": "s3", "rota": "sre", "person": ANA, "start": "2026-03-16T09:00", "end": "2026-03-23T09:00"},
    ],
}  # fmt: skip


@pytest.fixture
def svc() -> Hr:
    return Hr(Hr.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Hr,
        {
            "hr_get_balance": "read",
            "hr_list_leave": "read",
            "hr_submit_leave": "write",
            "hr_approve_leave": "write",
            "hr_deny_leave": "write",
            "hr_cancel_leave": "write",
            "hr_view_rota": "read",
            "hr_request_swap": "write",
            "hr_accept_swap": "write",
            "hr_decline_swap": "write",
        },
    )


def test_workdays():
    assert workdays("2026-03-06", "2026-03-09") == 2  # Friday to Monday
    assert workdays("2026-03-07", "2026-03-08") == 0


def test_leave_happy_path(svc):
    req = svc.submit_leave(employee=ANA, kind="vacation", start="2026-04-06", end="2026-04-10", note="Trip")
    assert req["days"] == 5 and req["manager"] == MGR
    assert svc.get_balance(employee=ANA)["balances"][0] == {"kind": "vacation", "days": 10, "pending": 5,
                                                             "available": 5}  # fmt: skip
    done = svc.approve_leave(request_id=req["id"], approver=MGR)
    assert done["balance_left"] == 5 and svc.db["balances"]["b1"]["days"] == 5
    assert [r["id"] for r in svc.list_leave(employee=ANA, status="approved")["requests"]] == [req["id"]]
    svc.cancel_leave(request_id=req["id"])
    assert svc.db["balances"]["b1"]["days"] == 10  # the days come back


def test_leave_rules_cannot_be_bypassed(svc):
    with pytest.raises(ToolError, match="only 2 available"):
        svc.submit_leave(employee=BOB, kind="vacation", start="2026-04-06", end="2026-04-08")
    with pytest.raises(ToolError, match="only 0 available"):
        svc.submit_leave(employee=ANA, kind="sick", start="2026-04-06", end="2026-04-06")
    req = svc.submit_leave(employee=ANA, kind="vacation", start="2026-03-18", end="2026-03-19")
    with pytest.raises(ToolError, match="overlaps leave request"):
        svc.submit_leave(employee=ANA, kind="vacation", start="2026-03-19", end="2026-03-20")
    with pytest.raises(ToolError, match="manager"):
        svc.approve_leave(request_id=req["id"], approver=ANA)  # not their own
    with pytest.raises(ToolError, match="on call during the leave"):  # s3 covers 16-23 March
        svc.approve_leave(request_id=req["id"], approver=MGR)
    assert svc.db["leave"][req["id"]]["status"] == "pending" and svc.db["balances"]["b1"]["days"] == 10
    svc.deny_leave(request_id=req["id"], approver=MGR, reason="on call")
    with pytest.raises(ToolError, match="not pending"):
        svc.approve_leave(request_id=req["id"], approver=MGR)


def test_swap_then_leave(svc):
    req = svc.submit_leave(employee=ANA, kind="vacation", start="2026-03-18", end="2026-03-19")
    swap = svc.request_swap(shift_id="s3", to_person=BOB)
    assert [w["id"] for w in svc.view_rota(rota="sre")["pending_swaps"]] == [swap["id"]]
    old = svc.db["rota"]["s3"]
    svc.accept_swap(swap_id=swap["id"])
    assert old["person"] == ANA and svc.db["rota"]["s3"]["person"] == BOB
    assert svc.approve_leave(request_id=req["id"], approver=MGR)["status"] == "approved"


def test_swap_keeps_the_rota_covered(svc):
    with pytest.raises(ToolError, match="on leave then"):  # Cal is away 9-13 March
        svc.accept_swap(swap_id=svc.request_swap(shift_id="s2", to_person=CAL)["id"])
    assert svc.db["rota"]["s2"]["person"] == BOB
    with pytest.raises(ToolError, match="already has a pending swap"):
        svc.request_swap(shift_id="s2", to_person=ANA)
    svc.decline_swap(swap_id="swp-1")
    # an exchange: Bob takes Ana's s3 and gives her s2 back
    swap = svc.request_swap(shift_id="s3", to_person=BOB, exchange_shift_id="s2")
    svc.accept_swap(swap_id=swap["id"])
    assert svc.db["rota"]["s2"]["person"] == ANA and svc.db["rota"]["s3"]["person"] == BOB
    with pytest.raises(ToolError, match="not pending"):
        svc.accept_swap(swap_id=swap["id"])
    # Bob is on call 16-23 March now, so he cannot also take a shift that overlaps it
    svc.store("rota", "s4", {"id": "s4", "rota": "sre", "person": CAL, "start": "2026-03-20T09:00",
                             "end": "2026-03-21T09:00"})  # fmt: skip
    with pytest.raises(ToolError, match="already on call"):
        svc.accept_swap(swap_id=svc.request_swap(shift_id="s4", to_person=BOB)["id"])


@pytest.mark.parametrize(
    ("method", "args", "match"),
    [
        ("get_balance", {"employee": "who@acme.com"}, "no employee"),
        ("submit_leave", {"employee": ANA, "kind": "vacation", "start": "2026-04-10", "end": "2026-04-06"}, "before"),
        ("submit_leave", {"employee": ANA, "kind": "vacation", "start": "04/10", "end": "2026-04-06"}, "YYYY-MM-DD"),
        ("submit_leave", {"employee": ANA, "kind": "vacation", "start": "2026-03-07", "end": "2026-03-08"}, "no work"),
        ("submit_leave", {"employee": "ana", "kind": "vacation", "start": "2026-04-06", "end": "2026-04-06"}, "email"),
        ("submit_leave", {"employee": ANA, "kind": "vacation", "start": "0001-01-01", "end": "9999-12-31"}, "at most"),
        ("deny_leave", {"request_id": "l1", "approver": MGR, "reason": " "}, "empty"),
        ("cancel_leave", {"request_id": "nope"}, "no leave record"),
        ("view_rota", {"rota": "db"}, "no rota 'db'; rotas: sre"),
        ("view_rota", {"rota": "sre", "start": "tomorrow"}, "YYYY-MM-DDTHH:MM"),
        ("request_swap", {"shift_id": "s1", "to_person": ANA}, "already holds"),
        ("request_swap", {"shift_id": "s1", "to_person": "x@y.com"}, "no employee"),
        ("request_swap", {"shift_id": "s1", "to_person": BOB, "exchange_shift_id": "s3"}, "not bob"),
        ("accept_swap", {"swap_id": "nope"}, "no swaps record"),
    ],
)  # fmt: skip
def test_validation(svc, rejected, method, args, match):
    rejected(svc, method, args, match)


@pytest.mark.parametrize(
    ("collection", "record", "where"),
    [
        ("leave", {"employee": ANA, "kind": "vacation", "start": "next week", "end": "2026-03-02", "days": 1}, "start"),
        ("rota", {"rota": "sre", "person": ANA, "start": "2026-03-02T09:00", "end": "Monday"}, "end"),
    ],
)
def test_fixture_dates_are_checked(collection, record, where):
    with pytest.raises(ValueError, match=rf"hr\.{collection}\[0\]\.{where}"):
        Hr.normalize_fixtures({collection: [{"id": "x", **record}]})


def test_leave_on_the_last_day_of_the_calendar_does_not_overflow(svc):
    svc.store("leave", "l9", {**svc.db["leave"]["l1"], "id": "l9", "start": "9999-12-30", "end": "9999-12-31"})
    svc.store("rota", "s9", {"id": "s9", "rota": "sre", "person": CAL, "start": "9999-12-31T09:00",
                             "end": "9999-12-31T18:00"})  # fmt: skip
    swap = svc.request_swap(shift_id="s9", to_person=ANA)
    svc.accept_swap(swap_id=swap["id"])
    with pytest.raises(ToolError, match="on leave then"):
        svc.accept_swap(swap_id=svc.request_swap(shift_id="s9", to_person=CAL)["id"])
