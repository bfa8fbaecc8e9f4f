"""Weekly report: a ticket resolved mid-task is counted again before the open count."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, check


class TestWeeklyReport(BlueprintCases):
    name = "weekly_report"

    def test_the_recount_comes_between_the_two_counts(self) -> None:
        plain, dynamic = build(self.name), build(self.name, frozenset({"dynamic"}))
        searches = [s for s in dynamic.reference if s.get("call") == "tickets_search"]
        assert [s["args"]["status"] for s in searches] == ["resolved", "resolved", "open"]
        assert searches[1]["say"]
        resolved = check(dynamic, "told_tickets").counts["resolved"]
        assert resolved == check(plain, "told_tickets").counts["resolved"] + 1
        assert dynamic.reference.main()["call"] == "documents_create"
