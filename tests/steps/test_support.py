"""Support steps: the customer's mail is labelled, archived or kept unread; the ticket goes to the on-call engineer."""

from __future__ import annotations

import pytest
from step_cases import admitted, edit_call, records, score, without

CHAINS = {
    "mail_label": ("locate_from_mail", "act_label_mail", "notify_channel", "report"),
    "mail_move": ("locate_from_mail", "act_log", "act_archive_mail", "report"),
    "mail_mark_read": ("locate_from_mail", "act_mark_unread", "notify_dm", "report"),
    "tickets_assign": ("locate_from_ticket", "read_ticket", "act_assign_oncall", "notify_channel", "report"),
}


@pytest.mark.parametrize("tool", sorted(CHAINS))
def test_the_write_is_checked_and_skipping_it_fails(tool: str) -> None:
    spec = admitted(91, *CHAINS[tool])
    assert score(spec) == 1.0
    assert score(spec, without(spec, tool)) < 0.75


def test_filing_another_customers_mail_fails() -> None:
    spec = admitted(92, *CHAINS["mail_move"])
    other = next(m for m in records(spec, "mail", "messages")[1:] if m["subject"].startswith("Problem:"))
    wrong = edit_call(spec, "mail_move", lambda a: {**a, "message_id": other["id"]})
    assert score(spec, wrong) < 0.75


def test_the_engineer_on_call_later_is_a_look_alike() -> None:
    spec = admitted(93, *CHAINS["tickets_assign"])
    shifts = records(spec, "tickets", "oncall")
    assert len({s["team"] for s in shifts}) == 2 and len(shifts) == 4
    later = edit_call(spec, "tickets_assign", lambda a: {**a, "assignee": shifts[2]["engineer"]})
    assert score(spec, later) < 0.75
