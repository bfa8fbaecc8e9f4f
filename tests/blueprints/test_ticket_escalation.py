"""Ticket escalation: assigned to whoever is on call now, after a swap too."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, calls, check


class TestTicketEscalation(BlueprintCases):
    name = "ticket_escalation"

    def test_a_swap_is_read_again_and_the_new_engineer_assigned(self) -> None:
        plain, dynamic = build(self.name), build(self.name, frozenset({"dynamic"}))
        assert calls(dynamic).count("tickets_get_oncall") == 2
        assert check(plain, "assigned").value != check(dynamic, "assigned").value
        assert check(dynamic, "assigned").value == dynamic.summary[1]
        assert dynamic.reference.main()["call"] == "tickets_assign"
