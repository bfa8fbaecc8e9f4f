"""Chat: team channels and direct messages."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from coworkenv.services.base import (
    Limit,
    Offset,
    Record,
    RecordModel,
    Result,
    Service,
    ToolError,
    page,
    query_words,
    tool,
)
from coworkenv.services.damage import Damage


class Channel(RecordModel):
    name: str
    members: list[str] = []
    topic: str = ""


class ChatMessage(RecordModel):
    channel: str  # a channel name, or "dm:<user>" for a direct conversation
    author: str
    text: str
    ts: str


def _newest_first(msgs: list[Record]) -> list[Record]:
    msgs.sort(key=lambda m: (m["ts"], m["id"]), reverse=True)
    return msgs


def _search_text(m: Record) -> str:
    text: str = m["text"]
    return text


class Chat(Service):
    name = "chat"
    description = "team chat: channels and direct messages"
    records = {"channels": Channel, "messages": ChatMessage}
    id_prefix = {"channels": "ch", "messages": "cm"}
    damage: ClassVar[dict[str, Damage]] = {}  # posts and messages only add: no write spoils one

    def _channel(self, channel: str) -> str:
        """Resolve a channel name ('#general' or 'general'); 'dm:<user>' is always valid."""
        name = channel.strip().lstrip("#")
        if name.startswith("dm:") and len(name) > 3:
            return name
        for c in self.db["channels"].values():
            if c["name"] == name:
                return name
        known = sorted(c["name"] for c in self.db["channels"].values())
        raise ToolError(f"no channel {channel!r}; channels: {', '.join(known) or 'none'}")

    @tool("read")
    def list_channels(self) -> Result:
        """List the chat channels with their topics and members."""
        chans = sorted(self.db["channels"].values(), key=lambda c: (c["name"], c["id"]))
        return {"channels": [{"name": c["name"], "topic": c["topic"], "members": c["members"]} for c in chans]}

    @tool("read")
    def read_channel(self, channel: str, limit: Limit = 20, offset: Offset = 0) -> Result:
        """Read the messages of a channel (or 'dm:<user>'), newest first."""
        name = self._channel(channel)
        return page(
            _newest_first(self.lookup("messages", "channel", name)),
            limit,
            offset,
            key="messages",
        )

    @tool("read")
    def search_messages(
        self,
        query: str = "",
        channel: str | None = None,
        author: str | None = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> Result:
        """Search messages by words in their text, optionally in one channel or by one author. Newest first."""
        name = self._channel(channel) if channel else None
        who = author.lower() if author else None
        words = query_words(query)
        hits = [
            m
            for m in self.text_search("messages", words, _search_text)
            if (name is None or m["channel"] == name) and (who is None or m["author"].lower() == who)
        ]
        return page(_newest_first(hits), limit, offset, key="messages")

    @tool("write")
    def post_message(self, channel: str, text: str) -> Result:
        """Post a message to an existing channel."""
        name = self._channel(channel)
        if not text.strip():
            raise ToolError("text must not be empty")
        rec = self.insert("messages", {"channel": name, "author": "me", "text": text, "ts": "now"})
        return {"posted": True, "id": rec["id"], "channel": name}

    @tool("write")
    def send_dm(self, user: Annotated[str, Field(description="the recipient's email or handle")], text: str) -> Result:
        """Send a direct message to a person."""
        if not user.strip() or " " in user.strip():
            raise ToolError(f"invalid user {user!r}")
        if not text.strip():
            raise ToolError("text must not be empty")
        name = f"dm:{user.strip()}"
        rec = self.insert("messages", {"channel": name, "author": "me", "text": text, "ts": "now"})
        return {"sent": True, "id": rec["id"], "channel": name}
