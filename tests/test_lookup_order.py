"""A lookup returns records in the collection's order whatever the history: when its index was built, which
writes moved a record between buckets and back, which episodes ran before in a reused environment.

Tools hand lookups to the agent unsorted (a purchase order's invoices) or name their first match in an error
(an overlapping leave request), and the rollout pool reuses one environment per spec across episodes, so a
history-dependent order would make an episode's trajectory depend on the episodes before it.
"""

from __future__ import annotations

from typing import Any

import pytest

from coworkenv.runtime.fork import WorkspaceState
from coworkenv.runtime.workspace import Workspace
from coworkenv.services.base import ToolError
from coworkenv.spec.events import Mutation

BUYER, ANA, BOB, MGR = "buyer@acme.com", "ana@acme.com", "bob@acme.com", "mgr@acme.com"


def _invoice(rid: str, po: str, day: int) -> dict[str, Any]:
    return {
        "id": rid,
        "vendor_id": "v1",
        "number": f"N-{rid}",
        "amount": 10,
        "po_id": po,
        "due_date": f"2026-04-{day:02}",
    }


def _leave(rid: str, who: str, start: str, end: str) -> dict[str, Any]:
    return {"id": rid, "employee": who, "kind": "vacation", "start": start, "end": end, "days": 3, "status": "pending"}


FIXTURES: dict[str, Any] = {
    "payments": {
        "vendors": [{"id": "v1", "name": "Paper Co"}],
        "purchase_orders": [
            {"id": f"po{n}", "vendor_id": "v1", "description": "Paper", "amount": 1000, "requester": BUYER,
             "created": "2026-03-01"}
            for n in (1, 2)
        ],
        "invoices": [_invoice("i1", "po1", 1), _invoice("i2", "po2", 2), _invoice("i3", "po1", 3),
                     _invoice("i4", "po1", 4)],
    },
    "hr": {
        "employees": [{"id": "e1", "email": ANA, "name": "Ana", "manager": MGR},
                      {"id": "e2", "email": BOB, "name": "Bob", "manager": MGR}],
        "balances": [{"id": "b1", "employee": ANA, "kind": "vacation", "days": 20}],
        "leave": [_leave("l1", ANA, "2026-03-09", "2026-03-11"), _leave("l2", ANA, "2026-03-10", "2026-03-12")],
    },
}  # fmt: skip


def po_invoices(ws: Workspace, po: str = "po1") -> list[str]:
    """What ``payments_get_purchase_order`` shows the agent: the invoices in the order the lookup gives."""
    return [i["id"] for i in ws.services["payments"].get_purchase_order(po_id=po)["invoices"]]


def overlap_error(ws: Workspace) -> str:
    """The error ``hr_submit_leave`` gives for a request overlapping both of Ana's: it names the first match."""
    with pytest.raises(ToolError, match="overlaps leave request") as err:
        ws.services["hr"].submit_leave(employee=ANA, kind="vacation", start="2026-03-10", end="2026-03-10")
    return str(err.value)


def move(ws: Workspace, service: str, collection: str, rid: str, changes: dict[str, Any]) -> None:
    """An event's update: moves a record to another bucket of an index on the changed field."""
    ws.apply(Mutation(service=service, collection=collection, op="update", id=rid, record=changes))


def episode(ws: Workspace) -> tuple[list[str], str]:
    """What the agent sees, then writes that move records between buckets (and back for Ana's leave)."""
    seen = po_invoices(ws), overlap_error(ws)
    move(ws, "payments", "invoices", "i1", {"po_id": "po2"})
    move(ws, "hr", "leave", "l1", {"employee": BOB})
    return seen


def test_a_reused_environment_shows_what_a_fresh_one_shows() -> None:
    fresh = Workspace(FIXTURES)
    expected = po_invoices(fresh), overlap_error(fresh)
    assert expected[0] == ["i1", "i3", "i4"] and "'l1'" in expected[1]
    reused = Workspace(FIXTURES)
    first = episode(reused)
    reused.reset()
    second = episode(reused)
    assert first == second == expected


def test_a_fresh_environment_gives_table_order_whether_or_not_the_index_was_built_before_a_move() -> None:
    for built in (False, True):
        ws = Workspace(FIXTURES)
        if built:
            po_invoices(ws, "po2")
        move(ws, "payments", "invoices", "i2", {"po_id": "po1"})  # i2 joins po1's bucket between i1 and i3
        assert po_invoices(ws) == ["i1", "i2", "i3", "i4"]
        move(ws, "payments", "invoices", "i1", {"po_id": "po2"})
        move(ws, "payments", "invoices", "i1", {"po_id": "po1"})  # away and back: still first
        assert po_invoices(ws) == ["i1", "i2", "i3", "i4"]


def test_delete_and_reinsert_goes_last_as_in_the_table() -> None:
    ws = Workspace(FIXTURES)
    po_invoices(ws)
    svc = ws.services["payments"]
    original = svc.delete("invoices", "i1")
    assert po_invoices(ws) == ["i3", "i4"]
    ws.apply(Mutation(service="payments", collection="invoices", op="insert", record=original))
    assert list(svc.db["invoices"])[-1] == "i1" and po_invoices(ws) == ["i3", "i4", "i1"]
    move(ws, "payments", "invoices", "i3", {"po_id": "po2"})
    move(ws, "payments", "invoices", "i3", {"po_id": "po1"})  # away and back: first again, as in the table
    assert list(svc.db["invoices"]) == ["i2", "i3", "i4", "i1"] and po_invoices(ws) == ["i3", "i4", "i1"]
    ws.reset()  # the deletion made the collection's order change: it comes back whole
    assert po_invoices(ws) == ["i1", "i3", "i4"]


def test_a_fork_snapshot_keeps_lookups_in_table_order() -> None:
    ws = Workspace(FIXTURES)
    po_invoices(ws)
    move(ws, "payments", "invoices", "i1", {"po_id": "po2"})
    snap = WorkspaceState.of(ws)
    move(ws, "payments", "invoices", "i2", {"po_id": "po1"})
    ws.services["payments"].delete("invoices", "i4")
    snap.put(ws)
    assert po_invoices(ws) == ["i3", "i4"] and po_invoices(ws, "po2") == ["i1", "i2"]
    move(ws, "payments", "invoices", "i1", {"po_id": "po1"})  # back from the snapshot's state: first again
    assert po_invoices(ws) == ["i1", "i3", "i4"]
    ws.reset()
    assert po_invoices(ws) == ["i1", "i3", "i4"] and po_invoices(ws, "po2") == ["i2"]
