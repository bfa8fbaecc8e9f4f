"""Expense steps: the report's claim (not the namesake's) is decided; the user's own claim is filed once."""

from __future__ import annotations

import pytest
from step_cases import admitted, answered, edit_call, reads, records, score, twice, without

CHAINS = {
    "expenses_approve": ("locate_expense", "read_rules", "act_approve_expense", "notify_dm_person", "report"),
    "expenses_reject": ("locate_expense", "read_expense", "act_reject_expense", "notify_channel", "report"),
    "expenses_request_approval": ("start_file_expense", "report"),
}


@pytest.mark.parametrize("tool", sorted(CHAINS))
def test_the_write_is_checked_and_skipping_it_fails(tool: str) -> None:
    spec = admitted(31, *CHAINS[tool])
    assert score(spec) == 1.0
    assert score(spec, without(spec, tool)) < 0.75


def test_approving_the_namesakes_claim_fails() -> None:
    spec = admitted(32, *CHAINS["expenses_approve"])
    claims = [e for e in records(spec, "expenses", "expenses") if e["status"] == "pending_approval"]
    assert len(claims) == 2 and claims[0]["employee"] != claims[1]["employee"]
    wrong = edit_call(spec, "expenses_approve", lambda a: {**a, "expense_id": claims[1]["id"]})
    assert score(spec, wrong) < 0.75


def test_filing_twice_fails_and_a_claim_over_the_mark_is_preapproved_first() -> None:
    preapproved = set()
    for seed in range(33, 45):
        spec = admitted(seed, *CHAINS["expenses_request_approval"])
        assert score(spec, twice(spec, "expenses_create_expense")) < 0.75
        calls = [getattr(s, "call", "") for s in spec.reference]
        preapproved.add("expenses_preapprove" in calls)
        assert calls.index("expenses_submit") < calls.index("expenses_request_approval")
    assert preapproved == {True, False}


def test_their_approved_claim_is_listed_and_reporting_its_amount_fails() -> None:
    spec = admitted(46, *CHAINS["expenses_reject"])
    claims = records(spec, "expenses", "expenses")
    done = next(e for e in claims if e["status"] == "approved")
    pending = next(e for e in claims if e["employee"] == done["employee"] and e is not done)
    seen = reads(spec)
    assert f"{done['amount']}" in seen and f"{pending['amount']}" in seen
    assert score(spec, answered(spec, f"Done. Their pending claim is {pending['amount']:.2f} USD.")) == 1.0
    assert score(spec, answered(spec, f"Done. Their pending claim is {done['amount']:.2f} USD.")) < 0.75


def test_the_earlier_approver_is_seen_and_naming_them_fails() -> None:
    spec = admitted(47, *CHAINS["expenses_request_approval"])
    former = next(e["approver"] for e in records(spec, "expenses", "expenses") if e["status"] == "approved")
    assert former in reads(spec)
    assert score(spec, answered(spec, f"Done. I filed it and sent it to {former} for approval.")) < 0.75
