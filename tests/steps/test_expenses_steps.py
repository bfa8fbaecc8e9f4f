"""Expense steps: the report's claim (not the namesake's) is decided; the user's own claim is filed once."""

from __future__ import annotations

import pytest
from step_cases import admitted, edit_call, records, score, twice, without

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
