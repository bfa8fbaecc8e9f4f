"""The scripted user simulator.

Deterministic and rule-based so that grades are reproducible: it reveals a hidden fact
when the agent asks a question that mentions the fact's slot keywords, answers
confirmation requests, hands out follow-up requests when the agent reports a request
done, and ends the conversation when nothing is left.
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
MAX_FALLBACKS = 3


@lru_cache(maxsize=1024)
def _word(keyword: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9]){re.escape(keyword.lower())}(?![a-z0-9])")


def mentions(text_lower: str, keywords: list[str]) -> bool:
    """Whether any keyword occurs in the text as a whole word or phrase."""
    return any(_word(k).search(text_lower) for k in keywords)


@dataclass
class Reply:
    kind: str  # fact | confirmation | follow_up | fallback | end
    text: str | None
    slots: list[str]
    approved: bool | None = None


class ScriptedUser:
    def __init__(self, script: UserScript) -> None:
        self.script = script
        self.revealed: set[str] = set()
        self.next_follow_up = 0
        self.fallbacks = 0

    def opening(self) -> str:
        return self.script.opening

    def respond(self, text: str) -> Reply:
        """The user's answer to an agent message addressed to them."""
        low = text.lower()
        asks = "?" in text
        if asks:
            confirmation = self._confirmation(low)
            facts = [
                f
                for f in self.script.hidden_facts
                if mentions(low, f.keywords) and (confirmation is None or f.slot not in self.revealed)
            ]
            if facts or confirmation is not None:
                parts = [f.reply for f in facts]
                approved = None
                if confirmation is not None:
                    parts.append(confirmation.reply)
                    approved = confirmation.approve
                self.revealed.update(f.slot for f in facts)
                kind = "fact" if facts else "confirmation"
                return Reply(kind, " ".join(parts), [f.slot for f in facts], approved)
            pending = [f for f in self.script.hidden_facts if f.slot not in self.revealed]
            if pending and self.fallbacks < MAX_FALLBACKS:
                self.fallbacks += 1
                return Reply("fallback", self.script.fallback_reply, [])
        if self.next_follow_up < len(self.script.follow_ups):
            follow = self.script.follow_ups[self.next_follow_up]
            self.next_follow_up += 1
            return Reply("follow_up", follow.message, [])
        return Reply("end", None, [])

    def _confirmation(self, low: str) -> Confirmation | None:
        if not any(p in low for p in CONFIRM_PHRASES):
            return None
        for conf in self.script.confirmations:
            if not conf.keywords or mentions(low, conf.keywords):
                return conf
        return Confirmation()
