"""Onboarding: the directory entry comes before the share, and the intro lasts 30 minutes."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, calls, check


class TestOnboarding(BlueprintCases):
    name = "onboarding"

    def test_directory_before_share_and_a_half_hour_intro(self) -> None:
        draft = build(self.name)
        steps = calls(draft)
        assert steps.index("contacts_create") < steps.index("documents_share")
        assert draft.rules[0]["prior_when"] == "prior.email == args.email"
        intro = draft.reference.main()
        assert intro["call"] == "calendar_create_event"
        assert f"r.end == '{intro['args']['end']}'" in check(draft, "intro").where
