"""Customer follow-up: reply to the latest mail (the newer one if it arrives mid-task) and log it."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, check


class TestCustomerFollowUp(BlueprintCases):
    name = "customer_followup"

    def test_the_reply_goes_to_the_newest_mail(self) -> None:
        plain, dynamic = build(self.name), build(self.name, frozenset({"dynamic"}))
        assert "'msg-x1'" in check(dynamic, "replied").where
        assert "'msg-x1'" not in check(plain, "replied").where
        assert dynamic.reference.main()["call"] == "mail_reply"

    def test_the_pipeline_figure_is_the_sum_of_the_open_deals(self) -> None:
        draft = build(self.name, frozenset({"aggregate"}))
        assert check(draft, "pipeline_told").value > 0
