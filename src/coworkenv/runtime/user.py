"""The scripted user simulator.

Deterministic and rule-based so that grades are reproducible: it reveals a hidden fact
when the agent asks a question that mentions the fact's slot keywords, approves a
confirmation request only when it names the action and its target (as scripted), hands
out follow-up requests when the agent reports a request done, and ends the conversation
when nothing is left. It never gives anything away by default: an unmatched question gets
"I don't know", an unmatched confirmation request no approval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from coworkenv.spec.models import Confirmation, UserScript

CONFIRM_PHRASES = (
    "confirm",
    "shall i",
    "should i",
    "go ahead",
    "proceed",
    "ok to",
    "okay to",
    "is it ok",
    "do you want me to",
    "would you like me to",
    "may i",
)
CLOSING_PHRASES = ("can i help", "i can help", "can i do for you", "anything else you need", "let me know")
"""A question made only of these is a report's polite close, not a question about the task."""
ACTION_WORDS = (
    "send", "email", "mail", "forward", "reply", "share", "cancel", "delete", "remove", "trash", "move",
    "archive", "create", "add", "book", "schedule", "reschedule", "invite", "file", "submit", "approv",
    "reject", "request", "update", "chang", "set", "assign", "reassign", "close", "resolv", "escalat",
    "pay", "transfer", "post", "publish", "grant", "revok", "reimburs", "expens", "log", "record", "mark",
    "renam", "edit", "writ", "draft", "messag", "notif", "accept", "declin", "regist", "order", "purchas",
    "renew", "open", "reopen", "put", "mov", "upgrad", "onboard", "offboard", "issu",
)  # fmt: skip
"""Stems of verbs that name an action (a confirmation request must name one)."""
DONT_KNOW = "I don't know. I can't help with that."
UNCLEAR_CONFIRMATION = "I'm not sure what you are asking me to approve. What exactly will you do, and to what?"
_SPECIFIC = re.compile(r"[\w.+-]+@[\w-]+\.\w+|\d|(?<=[a-z,;:(] )[A-Z][A-Za-z]+")


@lru_cache(maxsize=1024)
def _word(keyword: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9]){re.escape(keyword.lower())}(?![a-z0-9])")


@lru_cache(maxsize=64)
def _stems(stems: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z0-9])(?:" + "|".join(re.escape(s.lower()) for s in stems) + r")[a-z]*")


def mentions(text_lower: str, keywords: list[str]) -> bool:
    """Whether any keyword occurs in the text as a whole word or phrase."""
    return any(_word(k).search(text_lower) for k in keywords)


def names_action(text_lower: str, words: list[str]) -> bool:
    """Whether the text names an action: one of ``words`` (or of the common verbs), inflected or not."""
    return bool(_stems(tuple(words) or ACTION_WORDS).search(text_lower))


def names_target(text: str, conf: Confirmation) -> bool:
    """Whether the text names the thing acted on: the confirmation's keywords, else anything specific."""
    if conf.keywords:
        return mentions(text.lower(), conf.keywords)
    return bool(_SPECIFIC.search(text))


@dataclass
class Reply:
    kind: str  # fact | confirmation | follow_up | fallback | end
    text: str | None
    slots: list[str]
    approved: bool | None = None


class ScriptedUser:
    """Answers only what it was asked: an unmatched question or confirmation gets no answer and no approval."""

    def __init__(self, script: UserScript) -> None:
        self.script = script
        self.revealed: set[str] = set()
        self.next_follow_up = 0

    def opening(self) -> str:
        return self.script.opening

    def respond(self, text: str) -> Reply:
        """The user's answer to an agent message addressed to them."""
        low = text.lower()
        if "?" in text:
            reply = self._answer(text, low)
            if reply is not None:
                return reply
        if self.next_follow_up < len(self.script.follow_ups):
            follow = self.script.follow_ups[self.next_follow_up]
            self.next_follow_up += 1
            return Reply("follow_up", follow.message, [])
        return Reply("end", None, [])

    def _answer(self, text: str, low: str) -> Reply | None:
        """The reply to a question; None when it is only a report's polite close."""
        asks_confirmation = any(p in low for p in CONFIRM_PHRASES)
        confirmation = self._confirmation(text, low) if asks_confirmation else None
        facts = [
            f
            for f in self.script.hidden_facts
            if mentions(low, f.keywords) and (not asks_confirmation or f.slot not in self.revealed)
        ]
        if facts or confirmation is not None:
            parts = [f.reply for f in facts]
            approved = None
            if confirmation is not None:
                parts.append(confirmation.reply)
                approved = confirmation.approve
            elif asks_confirmation:
                approved = False
            self.revealed.update(f.slot for f in facts)
            kind = "fact" if facts else "confirmation"
            return Reply(kind, " ".join(parts), [f.slot for f in facts], approved)
        if asks_confirmation:
            return Reply("fallback", UNCLEAR_CONFIRMATION, [], False)
        if mentions(low, list(CLOSING_PHRASES)):
            return None
        pending = any(f.slot not in self.revealed for f in self.script.hidden_facts)
        return Reply("fallback", self.script.fallback_reply if pending else DONT_KNOW, [])

    def _confirmation(self, text: str, low: str) -> Confirmation | None:
        """The scripted confirmation whose action and target the request names, if any."""
        for conf in self.script.confirmations:
            if names_target(text, conf) and names_action(low, conf.action):
                return conf
        return None
