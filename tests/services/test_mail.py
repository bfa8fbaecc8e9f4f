import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.mail import Mail

FIXTURES = {
    "messages": [
        {
            "id": "m1",
            "sender": "ana@acme.com",
            "to": ["me@acme.com"],
            "subject": "Q3 budget",
            "body": "Numbers attached",
            "date": "2026-03-01T09:00",
        },
        {
            "id": "m2",
            "sender": "bob@acme.com",
            "to": ["me@acme.com"],
            "subject": "Lunch?",
            "body": "Friday?",
            "date": "2026-03-02T10:00",
            "unread": False,
            "labels": ["social"],
        },
        {
            "id": "m3",
            "sender": "ana@acme.com",
            "to": ["me@acme.com"],
            "subject": "Budget follow-up",
            "body": "Any news on the budget?",
            "date": "2026-03-03T08:00",
            "folder": "archive",
        },
    ]
}


@pytest.fixture
def svc() -> Mail:
    return Mail(Mail.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Mail,
        {
            "mail_search": "read",
            "mail_read": "read",
            "mail_send": "write",
            "mail_reply": "write",
            "mail_move": "write",
            "mail_mark_read": "write",
            "mail_label": "write",
        },
    )


def test_search_filters_and_pagination(svc):
    assert [m["id"] for m in svc.search(query="budget")["messages"]] == ["m3", "m1"]
    assert [m["id"] for m in svc.search(query="budget", folder="inbox")["messages"]] == ["m1"]
    assert [m["id"] for m in svc.search(label="social")["messages"]] == ["m2"]
    assert [m["id"] for m in svc.search(unread=True)["messages"]] == ["m3", "m1"]
    first = svc.search(limit=2)
    assert first["total"] == 3 and first["next_offset"] == 2 and len(first["messages"]) == 2
    assert [m["id"] for m in svc.search(limit=2, offset=2)["messages"]] == ["m1"]


def test_writes_are_copy_on_write(svc):
    old = svc.db["messages"]["m1"]
    svc.move(message_id="m1", folder="archive")
    svc.label(message_id="m1", label="urgent")
    assert old["folder"] == "inbox" and old["labels"] == []
    assert svc.read(message_id="m1")["folder"] == "archive"
    assert svc.db["messages"]["m1"]["labels"] == ["urgent"]
    sent = svc.reply(message_id="m1", body="Thanks")
    assert svc.read(message_id=sent["id"])["subject"] == "Re: Q3 budget"


def test_validation(svc):
    with pytest.raises(ToolError):
        svc.send(to=[], subject="x", body="y")
    with pytest.raises(ToolError):
        svc.send(to=["not-an-email"], subject="x", body="y")
    with pytest.raises(ToolError):
        svc.move(message_id="m1", folder="nowhere")
    with pytest.raises(ToolError):
        svc.read(message_id="missing")


def test_send_checks_addresses_with_the_shared_helper() -> None:
    """The same rule as every other service: one '@', both sides non-empty, no spaces."""
    svc = Mail(Mail.normalize_fixtures(FIXTURES))
    for bad in ("a@b@c.com", "dana@", "@northwind.io", "dana smith@northwind.io"):
        with pytest.raises(ToolError, match="invalid recipient"):
            svc.send(to=[bad], subject="s", body="b")
    with pytest.raises(ToolError, match="invalid recipient"):
        svc.send(to=["ok@northwind.io"], subject="s", body="b", cc=["x@"])
    assert svc.send(to=["ok@northwind.io"], subject="s", body="b")["sent"]
