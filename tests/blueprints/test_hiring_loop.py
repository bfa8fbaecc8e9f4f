"""Hiring loop: three days; the clash moves the onsite to where it would not have gone anyway."""

from __future__ import annotations

from typing import Any

from blueprint_cases import BlueprintCases, build

from coworkenv.grading.score import PASS_THRESHOLD
from coworkenv.synth.composer import Recipe, compose
from coworkenv.synth.draft import Draft
from coworkenv.synth.world import World, free_slots
from coworkenv.verify import verify


class TestHiringLoop(BlueprintCases):
    name = "hiring_loop"

    def test_three_days_with_a_change_before_each_later_one(self) -> None:
        draft = build(self.name)
        assert [s.id for s in draft.stages] == ["day_two", "day_three"]
        assert all(s.mutations for s in draft.stages)
        assert draft.stages[1].advance["to"] > draft.stages[0].advance["to"]

    def test_the_clash_changes_where_the_onsite_goes(self) -> None:
        for seed in range(8):
            draft = build(self.name, seed=seed)
            day2 = draft.stages[0]
            first = draft.summary[0]
            moved = next(c for c in day2.checks if c.id == "moved").where
            clash = next(m["record"] for m in day2.mutations if m["collection"] == "events")
            assert clash["start"] == first and first not in moved
            manager = clash["attendees"][0]
            booked = {"id": "x", "title": "onsite", "start": first, "end": first, "attendees": [manager]}
            booked["end"] = first[:11] + f"{int(first[11:13]) + 1:02d}" + first[13:]
            without = [s for s in free_slots_from(draft, manager, first[:10], booked) if s["start"][11:] >= "10:00"]
            assert without and without[0]["start"] not in moved  # ignoring the clash picks another hour

    def test_the_corrected_level_is_only_in_the_correction_that_reading_the_feedback_brings(self) -> None:
        for seed in range(6):
            draft = build(self.name, seed=seed)
            day3 = draft.stages[1]
            level = next(c for c in day3.checks if c.kind == "answer_contains").values[0]
            feedback = day3.mutations[0]["record"]["body"]
            [event] = day3.events
            assert (event["on_tool"], event["when"]) == ("mail_read", "args.message_id == 'msg-d3'")
            correction = event["mutations"][0]["record"]
            assert level not in feedback and f"level {level}" in correction["body"]
            assert f"level {level}" not in repr(draft.fixtures)
            assert correction["date"] > day3.mutations[0]["record"]["date"]  # the newest mail when the agent looks

    def test_an_agent_that_ignores_the_correction_fails_day_three(self) -> None:
        report = verify(compose(Recipe(self.name, 4)))
        assert report.admitted and report.probe_scores["ignore_event@stage3"] < PASS_THRESHOLD


def free_slots_from(draft: Draft, manager: str, day: str, booked: dict[str, Any]) -> list[dict[str, str]]:
    """The manager's free hours on ``day`` with the onsite booked but without the clash."""
    world = World(0)
    world.fixtures = draft.fixtures
    return free_slots(world, [manager], day, 60, (booked,))
