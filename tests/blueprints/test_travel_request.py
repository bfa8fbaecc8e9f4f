"""Travel request: the trip blocked, the fare filed and sent for approval (the key write)."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, calls, check


class TestTravelRequest(BlueprintCases):
    name = "travel_request"

    def test_the_fare_is_filed_then_sent_for_approval(self) -> None:
        draft = build(self.name)
        steps = calls(draft)
        assert steps.index("calendar_create_event") < steps.index("expenses_create_expense")
        assert draft.reference.main()["call"] == "expenses_request_approval"
        assert "r.status == 'pending_approval'" in check(draft, "expensed").where
        assert check(draft, "filed_once").where in check(draft, "expensed").where
