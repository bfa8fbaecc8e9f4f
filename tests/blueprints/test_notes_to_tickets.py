"""Notes to tickets: one ticket per action item and no more."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, calls, check


class TestNotesToTickets(BlueprintCases):
    name = "notes_to_tickets"

    def test_one_ticket_per_action_item(self) -> None:
        draft = build(self.name)
        items = len(draft.summary)
        assert calls(draft).count("tickets_create") == items
        assert check(draft, "no_extra").value == items
        assert [c.id for c in draft.checks][:items] == [f"ticket_{i + 1}" for i in range(items)]
        assert draft.reference.main() is [s for s in draft.reference if s.get("call") == "tickets_create"][-1]
