"""The count-report check: the report states each label with its number.

"urgent: 1", "1 urgent", "one urgent ticket" and "urgent tickets (1)" all state the label
``urgent`` with the number 1. A label counts as stated when some mention pairs it with its
number and no mention pairs it with another one, so a report that lists every number for a
label ("urgent: 0, urgent: 1, urgent: 2") states none of them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import Field, field_validator

from coworkenv.spec.checks.answers import AnswerCheck, Prompt

NUMBER_WORDS = {
    "no": 0,
    "none": 0,
    "zero": 0,
    "one": 1,
    "a single": 1,
    "single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_NUMBER = r"(\d+|" + "|".join(sorted(map(re.escape, NUMBER_WORDS), key=len, reverse=True)) + r")"
_LABEL = re.compile(r"[^\W_](?:[\w\s-]*[^\W_])?")


@lru_cache(maxsize=512)
def _mentions(label: str) -> re.Pattern[str]:
    """A label (its last word singular or plural) with a number before it (up to two words between) or after it
    (after ':', '=', '(', '-', 'is' or 'are')."""
    *head, last = label.lower().split()
    forms = {last, last + "s", last + "es", last.removesuffix("s"), last.removesuffix("es")}
    name = r"\s+".join(
        [*map(re.escape, head), "(?:" + "|".join(map(re.escape, sorted(forms, key=len, reverse=True))) + ")"]
    )
    before = rf"\b{_NUMBER}\s+(?:[a-z][\w-]*\s+){{0,2}}?{name}\b"
    after = rf"\b{name}(?:\s+[a-z][\w-]*)?\s*(?:[:=(-]|\bis\b|\bare\b|\bwas\b|\bwere\b)\s*{_NUMBER}\b"
    return re.compile(f"{before}|{after}")


def _value(token: str) -> int:
    return int(token) if token.isdigit() else NUMBER_WORDS[re.sub(r"\s+", " ", token)]


def stated_counts(label: str, text: str) -> set[int]:
    """Every number ``text`` pairs with ``label``."""
    return {_value(a or b) for a, b in _mentions(label).findall(text.lower())}


class AnswerCounts(AnswerCheck):
    """The agent's report states each label of ``counts`` with its number, and no other number for it."""

    kind: Literal["answer_counts"] = "answer_counts"
    counts: dict[str, int] = Field(min_length=1, description="label -> the number the report must state for it")
    scope: Literal["final", "any"] = "any"

    @field_validator("counts")
    @classmethod
    def _labels(cls, counts: dict[str, int]) -> dict[str, int]:
        for label, n in counts.items():
            if not _LABEL.fullmatch(label.strip()) or label != label.strip():
                raise ValueError(f"label {label!r}: words, spaces and hyphens only, no surrounding space")
            if not 0 <= n <= 10**6:
                raise ValueError(f"label {label!r}: a count from 0 to 1000000, not {n}")
        return counts

    def stated_in(self, text: str) -> bool:
        return all(stated_counts(label, text) == {n} for label, n in self.counts.items())

    def items(self) -> list[object]:
        return [f"{label}: {n}" for label, n in self.counts.items()]

    def given(self, prompt: Prompt) -> list[object]:
        return [f"{label}: {n}" for label, n in self.counts.items() if n in stated_counts(label, prompt.text)]
