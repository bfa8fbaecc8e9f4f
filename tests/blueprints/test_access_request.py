"""Access request: the manager's approval is asked before the IT ticket."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, calls, check


class TestAccessRequest(BlueprintCases):
    name = "access_request"

    def test_approval_is_asked_before_the_ticket(self) -> None:
        draft = build(self.name)
        steps = calls(draft)
        assert steps.index("chat_send_dm") < steps.index("tickets_create")
        assert draft.rules[0]["when"] == "'access' in args.tags"
        assert draft.reference.main()["call"] == "tickets_create"

    def test_a_new_manager_is_the_one_asked(self) -> None:
        plain, dynamic = build(self.name), build(self.name, frozenset({"dynamic"}))
        assert dynamic.checks.groups == {"approval_asked": "event"} and not plain.checks.groups
        assert check(plain, "approval_asked").where != check(dynamic, "approval_asked").where
