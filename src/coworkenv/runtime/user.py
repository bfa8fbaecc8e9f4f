"""The scripted user simulator.

Deterministic and rule-based so that grades are reproducible: it reveals a hidden fact
when the agent asks a question that mentions the fact's slot keywords, approves a
confirmation request only when it names the action and its target (as scripted), hands
out follow-up requests when the agent reports a request done, and ends the conversation
when nothing is left. It never gives anything away by default: an unmatched question gets
"I don't know", an unmatched confirmation request no approval.

It keeps context: a confirmation scripted ``after`` some facts is not approved before the
user has given them (asked too early, the user narrows the request with the first missing
fact: "only the ones after 2pm"); a context reply answers by what the agent already did
(its calls, the workspace now); and a keyword naming a day or a time ("Thursday after
2pm") is understood in any form the workspace clock resolves to the same day and time
("2025-03-06 at 14:00").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from coworkenv.expr import ExprError, evaluate
from coworkenv.spec.user import Confirmation, UserScript
from coworkenv.trajectory import ToolCallRecord
from coworkenv.values import Key
from coworkenv.values import mentions as value_keys

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


_WHEN = frozenset({"date", "time"})


@lru_cache(maxsize=1024)
def _when_keys(keyword: str, today: date | None) -> dict[str, frozenset[Key]]:
    """The days and times a keyword names, by kind ("Thursday after 2pm": the Thursdays ahead, 14:00)."""
    by_kind: dict[str, set[Key]] = {}
    for kind, value in value_keys(keyword, today, _WHEN):
        by_kind.setdefault("date" if kind == "md" else kind, set()).add((kind, value))
    return {k: frozenset(v) for k, v in by_kind.items()}


class Said:
    """An agent message, lower-cased once, with the days and times it names read only when asked."""

    def __init__(self, text: str, today: date | None) -> None:
        self.text = text
        self.low = text.lower()
        self.today = today
        self._keys: set[Key] | None = None

    def names(self, keywords: Sequence[str]) -> bool:
        """Whether the text names any keyword: as words, or (a day or time) as the same day and time."""
        if mentions(self.low, list(keywords)):
            return True
        for keyword in keywords:
            wanted = _when_keys(keyword, self.today)
            if wanted:
                if self._keys is None:
                    self._keys = value_keys(self.text, self.today, _WHEN)
                if all(self._keys & keys for keys in wanted.values()):
                    return True
        return False


def names_action(text_lower: str, words: list[str]) -> bool:
    """Whether the text names an action: one of ``words`` (or of the common verbs), inflected or not."""
    return bool(_stems(tuple(words) or ACTION_WORDS).search(text_lower))


def names_target(said: Said, conf: Confirmation) -> bool:
    """Whether the text names the thing acted on: the confirmation's keywords, else anything specific."""
    if conf.keywords:
        return said.names(conf.keywords)
    return bool(_SPECIFIC.search(said.text))


@dataclass
class Reply:
    kind: str  # fact | confirmation | follow_up | context | fallback | persona | end
    text: str | None
    slots: list[str]
    approved: bool | None = None


class ScriptedUser:
    """Answers only what it was asked: an unmatched question or confirmation gets no answer and no approval."""

    def __init__(self, script: UserScript, today: date | None = None) -> None:
        self.script = script
        self.today = today
        self.revealed: set[str] = set()
        self.next_follow_up = 0

    def opening(self) -> str:
        return self.script.opening

    def respond(
        self, text: str, state: Mapping[str, object] | None = None, calls: Sequence[ToolCallRecord] = ()
    ) -> Reply:
        """The user's answer to an agent message addressed to them; ``state`` and ``calls`` (the
        workspace now, the calls made) choose among the context replies."""
        if "?" in text:
            reply = self._answer(Said(text, self.today), state or {}, calls)
            if reply is not None:
                return reply
        if self.next_follow_up < len(self.script.follow_ups):
            follow = self.script.follow_ups[self.next_follow_up]
            self.next_follow_up += 1
            return Reply("follow_up", follow.message, [])
        return Reply("end", None, [])

    def _answer(self, said: Said, state: Mapping[str, object], calls: Sequence[ToolCallRecord]) -> Reply | None:
        """The reply to a question; None when it is only a report's polite close."""
        low = said.low
        asks_confirmation = any(p in low for p in CONFIRM_PHRASES)
        confirmation = self._confirmation(said) if asks_confirmation else None
        if confirmation is not None:
            narrowing = self._narrowing(confirmation)
            if narrowing is not None:
                return narrowing
        facts = [
            f
            for f in self.script.hidden_facts
            if said.names(f.keywords) and (not asks_confirmation or f.slot not in self.revealed)
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
        context = self._context(said, state, calls)
        if context is not None:
            return context
        if mentions(low, list(CLOSING_PHRASES)):
            return None
        pending = any(f.slot not in self.revealed for f in self.script.hidden_facts)
        return Reply("fallback", self.script.fallback_reply if pending else DONT_KNOW, [])

    def _confirmation(self, said: Said) -> Confirmation | None:
        """The scripted confirmation whose action and target the request names, if any."""
        for conf in self.script.confirmations:
            if names_target(said, conf) and names_action(said.low, conf.action):
                return conf
        return None

    def _narrowing(self, conf: Confirmation) -> Reply | None:
        """Asked before the facts it comes ``after``: the user narrows the request with the first missing one."""
        missing = next((s for s in conf.after or [] if s not in self.revealed), None)
        if missing is None:
            return None
        fact = next(f for f in self.script.hidden_facts if f.slot == missing)
        self.revealed.add(missing)
        return Reply("fact", fact.reply, [missing], False)

    def _context(self, said: Said, state: Mapping[str, object], calls: Sequence[ToolCallRecord]) -> Reply | None:
        """The first context reply whose keywords the question names and whose condition holds now."""
        replies = [c for c in self.script.context_replies or [] if said.names(c.keywords)]
        if not replies:
            return None
        ctx = {"state": state, "calls": [{"tool": c.tool, "args": c.args or {}, "ok": c.ok} for c in calls]}
        for candidate in replies:
            try:
                if evaluate(candidate.when, ctx):
                    return Reply("context", candidate.reply, [])
            except ExprError:
                continue
        return None
