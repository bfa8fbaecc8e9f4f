"""act: each write is checked, done twice or skipped it fails, and the rest of its collection is guarded."""

from __future__ import annotations

import pytest
from step_cases import admitted, edit_call, records, score, twice, without

from coworkenv.spec.checks import Unchanged

CHAINS = {
    "act_schedule_call": ("locate_from_chat", "read_account", "act_schedule_call"),
    "act_reply": ("locate_from_mail", "read_tickets", "derive_count", "act_reply"),
    "act_email_contact": ("locate_by_name", "read_contacts", "act_email_contact"),
    "act_log": ("locate_by_attribute", "act_log", "notify_channel"),
    "act_create_ticket": ("locate_by_name", "act_create_ticket"),
    "act_update_ticket": ("locate_from_ticket", "act_update_ticket"),
    "act_assign": ("locate_by_name", "read_tickets", "derive_pick_ticket", "act_assign"),
    "act_comment": ("locate_from_ticket", "act_comment"),
    "act_update_deal": ("locate_by_name", "read_deals", "derive_pick_deal", "act_update_deal", "notify_mail"),
}
TOOLS = {
    "act_schedule_call": "calendar_create_event",
    "act_reply": "mail_reply",
    "act_email_contact": "mail_send",
    "act_log": "crm_log_activity",
    "act_create_ticket": "tickets_create",
    "act_update_ticket": "tickets_update",
    "act_assign": "tickets_assign",
    "act_comment": "tickets_comment",
    "act_update_deal": "crm_update_deal",
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_the_write_is_checked_and_skipping_it_fails(name: str) -> None:
    spec = admitted(12, *CHAINS[name])
    tool = TOOLS[name]
    assert score(spec) == 1.0
    assert score(spec, without(spec, tool)) < 0.75
    guards = [c for c in spec.checks if isinstance(c, Unchanged)]
    assert guards and all(c.required for c in guards)


@pytest.mark.parametrize("name", ["act_reply", "act_email_contact", "act_log", "act_create_ticket", "act_comment"])
def test_doing_an_additive_write_twice_fails(name: str) -> None:
    spec = admitted(13, *CHAINS[name])
    assert score(spec, twice(spec, TOOLS[name])) < 0.75


def test_the_ticket_team_is_a_fact_the_user_can_be_asked_for() -> None:
    spec = admitted(14, *CHAINS["act_create_ticket"])
    create = next(s for s in spec.reference if getattr(s, "call", "") == "tickets_create")
    assert create.args["team"] in spec.user.opening
    assert create.args["customer"] == "${acc.accounts[0].name}"


def test_the_call_is_booked_on_the_day_named_with_the_primary_contact() -> None:
    spec = admitted(15, *CHAINS["act_schedule_call"])
    day = next(f for f in spec.user.opening.split() if f.count("-") == 2)
    wrong = edit_call(
        spec, "calendar_create_event", lambda a: {**a, "attendees": [records(spec, "crm", "accounts")[1]["owner"]]}
    )
    assert score(spec, wrong) < 0.75
    late = edit_call(spec, "calendar_create_event", lambda a: {**a, "start": a["start"].replace(day, "2031-01-02")})
    assert score(spec, late) < 0.75
