"""Leave request: approval is asked only for leave longer than the policy's limit."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, calls


class TestLeaveRequest(BlueprintCases):
    name = "leave_request"

    def test_approval_only_when_long(self) -> None:
        seen = set()
        for seed in range(12):
            draft = build(self.name, seed=seed)
            asked = "chat_send_dm" in calls(draft)
            assert asked == any(c.id == "approval_asked" for c in draft.checks)
            assert draft.reference.main()["call"] == "calendar_create_event"
            seen.add(asked)
        assert seen == {True, False}
