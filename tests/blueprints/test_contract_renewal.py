"""Contract renewal: the renewal deal gets the proposal's fee; the (current) owner is told."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, check


class TestContractRenewal(BlueprintCases):
    name = "contract_renewal"

    def test_the_deal_is_moved_at_the_new_fee(self) -> None:
        draft = build(self.name)
        main = draft.reference.main()
        assert main["call"] == "crm_update_deal" and main["args"]["stage"] == "negotiation"
        assert check(draft, "amount").value == main["args"]["amount"]

    def test_a_new_owner_is_read_again_and_mailed(self) -> None:
        plain, dynamic = build(self.name), build(self.name, frozenset({"dynamic"}))
        mail = next(s for s in dynamic.reference if s.get("call") == "mail_send")
        assert mail["args"]["to"] == ["${fresh.owner}"]
        assert check(plain, "owner_told").where != check(dynamic, "owner_told").where
