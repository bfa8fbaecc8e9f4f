"""Mail: a mailbox with folders, search, reading, sending and replying."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.services.base import (
    Limit,
    Offset,
    Record,
    RecordModel,
    Result,
    Service,
    ToolError,
    check_choice,
    check_email,
    joined,
    page,
    query_words,
    tool,
)
from coworkenv.services.damage import Damage

FOLDERS = ("inbox", "sent", "archive", "spam", "drafts", "trash")


class Message(RecordModel):
    sender: str
    to: list[str]
    cc: list[str] = []
    subject: str
    body: str
    date: str
    folder: str = "inbox"
    unread: bool = True
    labels: list[str] = []
    in_reply_to: str | None = None


def _summary(m: Record) -> Result:
    return {k: m[k] for k in ("id", "sender", "to", "subject", "date", "folder", "unread", "labels")}


def _search_text(m: Record) -> str:
    return joined(m["sender"], m["subject"], m["body"])


class Mail(Service):
    name = "mail"
    description = "the user's mailbox"
    records = {"messages": Message}
    id_prefix = {"messages": "msg"}
    damage: ClassVar[dict[str, Damage]] = {"messages": Damage.setting("mail_move", "message_id", "folder", "trash")}

    @tool("read")
    def search(
        self,
        query: str = "",
        folder: str | None = None,
        sender: str | None = None,
        unread: bool | None = None,
        label: str | None = None,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> Result:
        """Search messages by words in sender, subject or body; filter by folder, sender, unread, label.
        Newest first.
        """
        words = query_words(query)
        hits = [
            m
            for m in self.text_search("messages", words, _search_text)
            if (folder is None or m["folder"] == folder)
            and (sender is None or sender.lower() in m["sender"].lower())
            and (unread is None or m["unread"] == unread)
            and (label is None or label in m["labels"])
        ]
        hits.sort(key=lambda m: (m["date"], m["id"]), reverse=True)
        return page(hits, limit, offset, key="messages", shown=_summary)

    @tool("read")
    def read(self, message_id: str) -> Result:
        """Read one message in full."""
        return self.get("messages", message_id)

    @tool("write")
    def send(self, to: list[str], subject: str, body: str, cc: list[str] | None = None) -> Result:
        """Send a new message; it is stored in the 'sent' folder."""
        if not to:
            raise ToolError("'to' needs at least one recipient")
        for addr in [*to, *(cc or [])]:
            check_email(addr, "recipient")
        rec = self.insert(
            "messages",
            {
                "sender": "me",
                "to": to,
                "cc": cc or [],
                "subject": subject,
                "body": body,
                "date": "now",
                "folder": "sent",
                "unread": False,
            },
        )
        return {"sent": True, "id": rec["id"]}

    @tool("write")
    def reply(self, message_id: str, body: str) -> Result:
        """Reply to the sender of a message."""
        orig = self.get("messages", message_id)
        subject = orig["subject"] if orig["subject"].lower().startswith("re:") else f"Re: {orig['subject']}"
        rec = self.insert(
            "messages",
            {
                "sender": "me",
                "to": [orig["sender"]],
                "subject": subject,
                "body": body,
                "date": "now",
                "folder": "sent",
                "unread": False,
                "in_reply_to": message_id,
            },
        )
        return {"sent": True, "id": rec["id"]}

    @tool("write")
    def move(self, message_id: str, folder: str) -> Result:
        """Move a message to a folder (inbox, archive, spam, trash, …)."""
        check_choice(folder, FOLDERS, "folder", problem="unknown")
        rec = self.update("messages", message_id, {"folder": folder})
        return {"id": rec["id"], "folder": folder}

    @tool("write")
    def mark_read(self, message_id: str, unread: bool = False) -> Result:
        """Mark a message read (or unread again with unread=true)."""
        self.update("messages", message_id, {"unread": unread})
        return {"id": message_id, "unread": unread}

    @tool("write")
    def label(self, message_id: str, label: str) -> Result:
        """Add a label to a message (e.g. 'urgent', 'follow-up')."""
        msg = self.get("messages", message_id)
        labels = msg["labels"] if label in msg["labels"] else [*msg["labels"], label]
        self.update("messages", message_id, {"labels": labels})
        return {"id": message_id, "labels": labels}
