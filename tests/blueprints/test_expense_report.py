"""Expense report: the key write is the approval request when over the limit, else the filed expense."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, calls, check


class TestExpenseReport(BlueprintCases):
    name = "expense_report"

    def test_the_key_write_follows_the_limit(self) -> None:
        mains = {build(self.name, seed=s).reference.main()["call"] for s in range(12)}
        assert mains == {"expenses_request_approval", "expenses_create_expense"}

    def test_a_manager_change_is_looked_up_right_before_filing(self) -> None:
        draft = build(self.name, frozenset({"dynamic"}))
        steps = calls(draft)
        at = steps.index("expenses_create_expense")
        assert steps[at - 2 : at] == ["contacts_search", "contacts_search"]
        assert draft.reference.main()["call"] == "expenses_request_approval"
        assert "pending_approval" in check(draft, "filed").where
