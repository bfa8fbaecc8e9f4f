"""Calendar steps: the meeting on the day named (not next week's, not the cancelled copy) is cancelled or moved."""

from __future__ import annotations

import pytest
from step_cases import admitted, edit_call, records, score, without

CHAINS = {
    "calendar_cancel_event": ("locate_event", "read_event", "act_cancel_event", "notify_dm_person", "report"),
    "calendar_update_event": ("locate_event", "act_move_event", "notify_mail_person", "report"),
}


@pytest.mark.parametrize("tool", sorted(CHAINS))
def test_the_write_is_checked_and_skipping_it_fails(tool: str) -> None:
    spec = admitted(81, *CHAINS[tool])
    assert score(spec) == 1.0
    assert score(spec, without(spec, tool)) < 0.75


def test_cancelling_next_weeks_meeting_fails() -> None:
    spec = admitted(82, *CHAINS["calendar_cancel_event"])
    events = records(spec, "calendar", "events")
    later = events[1]
    assert later["title"] == events[0]["title"] and later["start"] > events[0]["start"]
    wrong = edit_call(spec, "calendar_cancel_event", lambda a: {**a, "event_id": later["id"]})
    assert score(spec, wrong) < 0.75


def test_a_slot_that_is_not_the_first_free_one_fails() -> None:
    spec = admitted(83, *CHAINS["calendar_update_event"])
    late = edit_call(
        spec,
        "calendar_update_event",
        lambda a: {**a, "start": "${slots.slots[1].start}", "end": "${slots.slots[1].end}"},
    )
    assert score(spec, late) < 0.75
