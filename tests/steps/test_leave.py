"""Leave and rota steps: the report's request is decided, a swap answered, a shift handed over, leave booked."""

from __future__ import annotations

import pytest
from step_cases import admitted, edit_call, records, score, twice, without

CHAINS = {
    "hr_approve_leave": ("locate_leave", "read_balance", "act_approve_leave", "notify_channel", "report"),
    "hr_deny_leave": ("locate_leave", "act_deny_leave", "notify_mail_person", "report"),
    "hr_cancel_leave": ("locate_leave", "act_cancel_leave", "notify_dm_person", "report"),
    "hr_accept_swap": ("locate_swap", "act_accept_swap", "notify_channel", "report"),
    "hr_decline_swap": ("locate_swap", "act_decline_swap", "notify_channel", "report"),
    "hr_request_swap": ("locate_shift", "notify_dm_person", "report"),
    "hr_submit_leave": ("start_book_leave", "report"),
}


@pytest.mark.parametrize("tool", sorted(CHAINS))
def test_the_write_is_checked_and_skipping_it_fails(tool: str) -> None:
    spec = admitted(41, *CHAINS[tool])
    assert score(spec) == 1.0
    assert score(spec, without(spec, tool)) < 0.75


def test_deciding_the_namesakes_request_fails() -> None:
    spec = admitted(42, *CHAINS["hr_approve_leave"])
    pending = [r for r in records(spec, "hr", "leave") if r["status"] == "pending"]
    assert len(pending) == 2
    wrong = edit_call(spec, "hr_approve_leave", lambda a: {**a, "request_id": pending[1]["id"]})
    assert score(spec, wrong) < 0.75


def test_accepting_a_swap_moves_the_shift_and_the_other_swap_is_a_look_alike() -> None:
    spec = admitted(43, *CHAINS["hr_accept_swap"])
    swaps = records(spec, "hr", "swaps")
    assert len(swaps) == 2
    wrong = edit_call(spec, "hr_accept_swap", lambda a: {**a, "swap_id": swaps[1]["id"]})
    assert score(spec, wrong) < 0.75
    assert any(c.id == "shift_taken" for c in spec.checks)


def test_booking_twice_is_refused_and_the_cover_is_in_the_note() -> None:
    spec = admitted(44, *CHAINS["hr_submit_leave"])
    assert score(spec, twice(spec, "hr_submit_leave")) == 1.0  # the second request overlaps the first: refused
    no_cover = edit_call(spec, "hr_submit_leave", lambda a: {k: v for k, v in a.items() if k != "note"})
    assert score(spec, no_cover) < 0.75
