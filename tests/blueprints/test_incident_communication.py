"""Incident communication: one mail to exactly the enterprise owners (one more after an upgrade)."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, check


class TestIncidentCommunication(BlueprintCases):
    name = "incident_communication"

    def test_the_mail_goes_to_exactly_the_enterprise_owners(self) -> None:
        draft = build(self.name)
        where = check(draft, "owners_emailed").where
        n = where.count(" in r.to")
        assert where.endswith(f"len(r.to) == {n}") and n >= 1
        assert draft.reference.main()["call"] == "mail_send"

    def test_an_upgraded_account_is_an_event(self) -> None:
        for seed in range(10):
            draft = build(self.name, frozenset({"dynamic"}), seed)
            if draft.events:
                assert draft.events[0]["mutations"][0]["record"] == {"tier": "enterprise"}
                return
        raise AssertionError("no seed had a standard account to upgrade")
