"""Answer checks: credit for what the agent reports, never for restating what it was told.

Before an answer check reads the agent's text, every passage copied from the prompt —
the persona, the context, the opening request, a follow-up — is cut out: a run of at
least ``MIN_COPY`` words found verbatim in one of them, or the whole of a shorter one.
A do-nothing reply that restates the request and the persona so earns no answer weight,
while a value the prompt also names still counts when the agent states it in its own
report ("msg-3 is spam"). A check whose values the prompt gives entirely cannot tell a
report from a restatement at all; the verifier rejects it (``answer_in_prompt``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from coworkenv.spec.checks.base import EpisodeCheck, EpisodeLog, Scope
from coworkenv.values import numbers_in

MIN_COPY = 6
"""Words in a row, copied from the prompt, that make a passage a restatement."""
_WORD = re.compile(r"\S+")
_MAX_CUTS = 256


def _norm(word: str) -> str:
    return word.strip(".,;:!?\"'()[]").lower()


@dataclass
class Prompt:
    """What the agent was told before doing anything: persona, context and the user's requests."""

    parts: list[str] = field(default_factory=list)
    _cuts: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    """unrestated() per text: every answer check of every grade reads the same few reports"""

    @cached_property
    def text(self) -> str:
        return "\n".join(self.parts)

    @cached_property
    def lower(self) -> str:
        return self.text.lower()

    @cached_property
    def numbers(self) -> list[float]:
        return numbers_in(self.text)

    @cached_property
    def _runs(self) -> set[tuple[str, ...]]:
        """Every run of MIN_COPY words of a part, and every shorter part whole."""
        runs: set[tuple[str, ...]] = set()
        for part in self.parts:
            words = tuple(_norm(w) for w in _WORD.findall(part))
            n = min(MIN_COPY, len(words))
            runs |= {words[i : i + n] for i in range(len(words) - n + 1)} if n else set()
        return runs

    def unrestated(self, text: str) -> str:
        """``text`` without the passages it copies from the prompt."""
        if not self.parts:
            return text
        hit = self._cuts.get(text)
        if hit is None:
            if len(self._cuts) >= _MAX_CUTS:
                self._cuts.clear()
            hit = self._cuts[text] = self._cut(text)
        return hit

    def _cut(self, text: str) -> str:
        words = _WORD.findall(text)
        low = [_norm(w) for w in words]
        copied = [False] * len(words)
        for n in sorted({len(r) for r in self._runs}, reverse=True):
            for i in range(len(words) - n + 1):
                if tuple(low[i : i + n]) in self._runs:
                    copied[i : i + n] = [True] * n
        return " ".join(w for w, c in zip(words, copied, strict=True) if not c)

    def gives(self, value: object) -> bool:
        return str(value).lower() in self.lower

    def gives_number(self, value: float, tolerance: float) -> bool:
        return any(abs(x - value) <= tolerance for x in self.numbers)


@lru_cache(maxsize=1024)
def report_numbers(text: str) -> tuple[float, ...]:
    """The numbers a report states (every grade of a spec's episodes reads the same few reports)."""
    return tuple(numbers_in(text))


_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@lru_cache(maxsize=1024)
def _excluded(values: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[float, ...]]:
    """The excluded words as one pattern of whole tokens ("tkt-1" is not in "tkt-12"; "10:00" is in
    "2025-03-04T10:00"), and the excluded numbers (read as quantities: "$1,200" states 1200)."""
    numbers = tuple(float(v) for v in values if _PLAIN_NUMBER.fullmatch(v))
    words = [re.escape(v.lower()) for v in values if not _PLAIN_NUMBER.fullmatch(v)]
    pattern = rf"(?:(?<=\dt)|(?<![\w.-]))(?:{'|'.join(words)})(?![\w-]|\.\d)" if words else None
    return (re.compile(pattern) if pattern else None), numbers


def excluded_in(values: tuple[str, ...], text: str) -> str | None:
    """The first of ``values`` that ``text`` states, if any."""
    pattern, numbers = _excluded(values)
    if pattern is not None and (m := pattern.search(text.lower())):
        return m.group(0)
    return next((f"{x:g}" for x in report_numbers(text) if any(abs(x - n) < 0.005 for n in numbers)), None)


class AnswerCheck(EpisodeCheck):
    """A check on what the agent told the user: one of its reports (``scope: final``: the last) states what the
    check asks for, once the passages it copies from the prompt are cut out, and none states a value of
    ``excludes`` (a look-alike's: the other customer, the other invoice's amount), which a report that lists
    everything it saw always does."""

    reads: ClassVar[Scope] = "answer"
    scope: Literal["final", "any"] = "any"
    excludes: list[str] = Field(
        default_factory=list,
        max_length=64,
        description="values no report may state (as whole tokens): the look-alike records' values",
    )

    @field_validator("excludes")
    @classmethod
    def _excludes(cls, values: list[str]) -> list[str]:
        for i, value in enumerate(values):
            if not value.strip() or value != value.strip():
                raise ValueError(f"item {i}: a non-empty value without surrounding space, not {value!r}")
        return values

    def stated_in(self, text: str) -> bool:
        """Whether a report's own words (the prompt's cut out) state what the check asks for."""
        raise NotImplementedError

    def items(self) -> list[object]:
        """What the check asks the report to state, one item each."""
        raise NotImplementedError

    def given(self, prompt: Prompt) -> list[object]:
        """The items the prompt already states (a reply can name them without any work)."""
        raise NotImplementedError

    def judge(self, log: EpisodeLog) -> tuple[bool, int | None, str]:
        answers = log.answers[-1:] if self.scope == "final" else log.answers
        prompt = log.prompt
        own = [(s, prompt.unrestated(text) if prompt is not None else text) for s, text in answers]
        if self.excludes:
            wrong = next((w for _, text in own if (w := excluded_in(tuple(self.excludes), text))), None)
            if wrong is not None:
                return False, None, f"states {wrong!r}, a look-alike's value"
        step = next((s for s, text in own if self.stated_in(text)), None)
        return step is not None, step, "found" if step is not None else "not in the answer"


class AnswerContains(AnswerCheck):
    """The agent's reply to the user states every item of ``values`` (case-insensitive)."""

    kind: Literal["answer_contains"] = "answer_contains"
    values: list[str | list[str]] = Field(
        min_length=1, description="each item must be stated; a list is an any-of group: one of its alternatives"
    )
    scope: Literal["final", "any"] = "any"

    @field_validator("values")
    @classmethod
    def _groups(cls, values: list[str | list[str]]) -> list[str | list[str]]:
        for i, group in enumerate(values):
            if isinstance(group, list) and not group:
                raise ValueError(f"item {i}: an any-of group needs at least one alternative")
        return values

    @model_validator(mode="after")
    def _not_excluded(self) -> AnswerContains:
        excluded = {v.lower() for v in self.excludes}
        for i, group in enumerate(self.groups):
            if all(v.lower() in excluded for v in group):
                raise ValueError(f"values: item {i} is also in excludes: no report can state it")
        return self

    @property
    def groups(self) -> list[list[str]]:
        """Every item as a group of alternatives (a plain value is a group of one)."""
        return [g if isinstance(g, list) else [g] for g in self.values]

    def stated_in(self, text: str) -> bool:
        low = text.lower()
        return all(any(str(v).lower() in low for v in group) for group in self.groups)

    def items(self) -> list[object]:
        return list(self.values)

    def given(self, prompt: Prompt) -> list[object]:
        found = (next((v for v in group if prompt.gives(v)), None) for group in self.groups)
        return [v for v in found if v is not None]


class AnswerNumber(AnswerCheck):
    """The agent's reply to the user states the number ``value`` within ``tolerance``."""

    kind: Literal["answer_number"] = "answer_number"
    value: float
    tolerance: float = Field(0.01, ge=0)
    scope: Literal["final", "any"] = "any"

    def stated_in(self, text: str) -> bool:
        return any(abs(x - self.value) <= self.tolerance for x in report_numbers(text))

    def items(self) -> list[object]:
        return [self.value]

    def given(self, prompt: Prompt) -> list[object]:
        return [self.value] if prompt.gives_number(self.value, self.tolerance) else []
