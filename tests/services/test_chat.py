import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.chat import Chat

FIXTURES = {
    "channels": [
        {"id": "ch1", "name": "general", "members": ["ana", "bob"], "topic": "Company news"},
        {"id": "ch2", "name": "eng", "members": ["bob"]},
    ],
    "messages": [
        {"id": "m1", "channel": "general", "author": "ana", "text": "Offsite is on Friday", "ts": "2026-03-01T09:00"},
        {"id": "m2", "channel": "general", "author": "bob", "text": "Deploy freeze Friday", "ts": "2026-03-01T10:00"},
        {"id": "m3", "channel": "eng", "author": "bob", "text": "Deploy done", "ts": "2026-03-01T11:00"},
    ],
}


@pytest.fixture
def svc() -> Chat:
    return Chat(Chat.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Chat,
        {
            "chat_list_channels": "read",
            "chat_read_channel": "read",
            "chat_search_messages": "read",
            "chat_post_message": "write",
            "chat_send_dm": "write",
        },
    )


def test_reads(svc):
    assert [c["name"] for c in svc.list_channels()["channels"]] == ["eng", "general"]
    res = svc.read_channel(channel="#general", limit=1)
    assert [m["id"] for m in res["messages"]] == ["m2"] and res["next_offset"] == 1 and res["total"] == 2
    assert [m["id"] for m in svc.search_messages(query="deploy")["messages"]] == ["m3", "m2"]
    assert [m["id"] for m in svc.search_messages(query="friday", author="ana")["messages"]] == ["m1"]
    assert [m["id"] for m in svc.search_messages(query="deploy", channel="general")["messages"]] == ["m2"]


def test_writes(svc):
    before = dict(svc.db["messages"])
    posted = svc.post_message(channel="eng", text="Rollback please")
    assert svc.read_channel(channel="eng")["messages"][0]["id"] == posted["id"]
    dm = svc.send_dm(user="ana", text="Hi")
    assert dm["channel"] == "dm:ana" and svc.read_channel(channel="dm:ana")["messages"][0]["text"] == "Hi"
    assert all(svc.db["messages"][k] is v for k, v in before.items())


def test_validation(svc):
    with pytest.raises(ToolError, match="channels: eng, general"):
        svc.post_message(channel="random", text="hi")
    with pytest.raises(ToolError):
        svc.post_message(channel="eng", text=" ")
    with pytest.raises(ToolError):
        svc.read_channel(channel="nope")
    with pytest.raises(ToolError):
        svc.send_dm(user="", text="hi")
