"""A value outside a tool's fixed set is refused with the set listed, whichever service (``check_choice``).

The tools are called directly, past the argument models that would refuse the value first: this is the check a
tool makes itself, and its words are the ones agents have always been shown."""

from __future__ import annotations

import re

import pytest

from coworkenv.services.base import Service, ToolError, check_choice
from coworkenv.services.crm import Crm
from coworkenv.services.drive import Drive
from coworkenv.services.mail import Mail
from coworkenv.services.tickets import Tickets

CRM = {
    "accounts": [{"id": "a1", "name": "Acme Corp"}],
    "deals": [{"id": "d1", "account_id": "a1", "name": "Expansion", "stage": "proposal"}],
}
DRIVE = {"folders": [{"id": "f1", "name": "Finance"}]}
MAIL = {"messages": [{"id": "m1", "sender": "a@x.com", "to": ["me@x.com"], "subject": "Hi", "body": "", "date": "d"}]}
TICKETS = {"tickets": [{"id": "t1", "title": "Broken", "team": "it"}]}
STAGES = "prospect, qualified, proposal, negotiation, won, lost"

CASES = [
    (Crm, CRM, "list_deals", {"stage": "done"}, f"invalid stage 'done'; stages: {STAGES}"),
    (Crm, CRM, "update_deal", {"deal_id": "d1", "stage": "done"}, f"invalid stage 'done'; stages: {STAGES}"),
    (
        Crm,
        CRM,
        "log_activity",
        {"account_id": "a1", "kind": "fax", "summary": "s", "date": "2026-01-02"},
        "invalid kind 'fax'; kinds: call, email, meeting, note",
    ),
    (
        Drive,
        DRIVE,
        "share",
        {"item_id": "f1", "person": "bob@x.com", "role": "owner"},
        "invalid role 'owner'; roles: viewer, commenter, editor",
    ),
    (
        Mail,
        MAIL,
        "move",
        {"message_id": "m1", "folder": "bin"},
        "unknown folder 'bin'; folders: inbox, sent, archive, spam, drafts, trash",
    ),
    (
        Tickets,
        TICKETS,
        "create",
        {"title": "t", "description": "", "team": "it", "priority": "p0"},
        "invalid priority 'p0'; allowed: low, medium, high, urgent",
    ),
    (
        Tickets,
        TICKETS,
        "update_ticket",
        {"ticket_id": "t1", "status": "gone"},
        "invalid status 'gone'; allowed: open, in_progress, resolved, closed",
    ),
]


@pytest.mark.parametrize(("cls", "fixtures", "method", "args", "message"), CASES, ids=[c[2] for c in CASES])
def test_a_value_outside_the_set_is_refused_naming_the_set(
    cls: type[Service], fixtures: dict, method: str, args: dict, message: str, rejected
) -> None:
    svc = cls(cls.normalize_fixtures(fixtures))
    rejected(svc, method, args, f"^{re.escape(message)}$")


def test_a_value_in_the_set_is_returned_as_it_is() -> None:
    assert check_choice("won", ("won", "lost"), "stage") == "won"
    with pytest.raises(ToolError, match=r"^invalid stage 'Won'; stages: won, lost$"):
        check_choice("Won", ("won", "lost"), "stage")  # no case folding: the tools store what they are given
