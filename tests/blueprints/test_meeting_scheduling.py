"""Meeting scheduling: the earliest common slot, re-found after a mid-episode booking."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, calls, check


class TestMeetingScheduling(BlueprintCases):
    name = "meeting_scheduling"

    def test_a_lost_slot_is_looked_up_again_and_the_next_one_booked(self) -> None:
        plain, dynamic = build(self.name), build(self.name, frozenset({"dynamic"}))
        assert calls(plain).count("calendar_find_free_slots") == 1
        assert calls(dynamic).count("calendar_find_free_slots") == 2 and len(dynamic.events) == 1
        assert dynamic.reference.main()["call"] == "calendar_create_event"
        assert check(plain, "booked").where != check(dynamic, "booked").where
        assert dynamic.summary[0] in check(dynamic, "booked").where

    def test_the_agenda_follow_up_is_its_own_group(self) -> None:
        draft = build(self.name, frozenset({"follow_up"}))
        assert draft.checks.groups == {"agenda": "follow_up"} and len(draft.follow_ups) == 1
