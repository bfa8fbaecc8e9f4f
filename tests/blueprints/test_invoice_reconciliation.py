"""Invoice reconciliation: the reminder lists the unpaid invoices and none of the paid ones."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, check


class TestInvoiceReconciliation(BlueprintCases):
    name = "invoice_reconciliation"

    def test_the_reminder_names_unpaid_and_skips_paid(self) -> None:
        draft = build(self.name)
        where = check(draft, "reminder").where
        for number in draft.summary:
            assert f"contains(r.body, '{number}')" in where
        assert "not contains(r.body, 'INV-" in where, "at least one invoice is paid"
        assert check(draft, "told_total").kind == "answer_number"
