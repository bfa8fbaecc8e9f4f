"""Month-end close: only receipted drafts go out; overnight all but one are approved, one rejected."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build


class TestMonthEndClose(BlueprintCases):
    name = "month_end_close"

    def test_only_my_receipted_drafts_are_submitted(self) -> None:
        for seed in range(6):
            draft = build(self.name, seed=seed)
            expenses = {e["id"]: e for e in draft.fixtures["expenses"]["expenses"]}
            me = draft.context.split("(")[1].split(")")[0]
            wanted = {i for i, e in expenses.items() if e["employee"] == me and e["status"] == "draft" and e["receipt"]}
            assert set(draft.summary) == wanted
            assert any(e["employee"] == me and e["status"] == "draft" and not e["receipt"] for e in expenses.values())

    def test_overnight_one_is_rejected_and_the_rest_approved(self) -> None:
        draft = build(self.name, seed=2)
        (stage,) = draft.stages
        statuses = {m["id"]: m["record"]["status"] for m in stage.mutations}
        assert set(statuses) == set(draft.summary)
        assert sorted(statuses.values()).count("rejected") == 1
        rejected = next(i for i, s in statuses.items() if s == "rejected")
        told = next(c for c in stage.checks if c["id"] == "rejection_told")
        assert told["values"] == [rejected]
