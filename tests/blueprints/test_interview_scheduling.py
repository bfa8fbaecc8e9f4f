"""Interview scheduling: the panel and the candidate at the earliest panel slot, then a reply."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, calls, check


class TestInterviewScheduling(BlueprintCases):
    name = "interview_scheduling"

    def test_books_panel_and_candidate_then_replies(self) -> None:
        draft = build(self.name)
        main = draft.reference.main()
        assert main["call"] == "calendar_create_event" and len(main["args"]["attendees"]) == 3
        assert calls(draft)[-1] == "mail_reply"
        for email in main["args"]["attendees"]:
            assert f"'{email}' in r.attendees" in check(draft, "booked").where

    def test_a_lost_slot_moves_the_booking(self) -> None:
        draft = build(self.name, frozenset({"dynamic"}))
        assert calls(draft).count("calendar_find_free_slots") == 2
        assert draft.summary[1] in check(draft, "booked").where
