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
from typing import TYPE_CHECKING, Any

from coworkenv.values import numbers_in

if TYPE_CHECKING:
    from coworkenv.spec import models as m

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

    def gives(self, value: Any) -> bool:
        return str(value).lower() in self.lower

    def gives_number(self, value: float, tolerance: float) -> bool:
        return any(abs(x - value) <= tolerance for x in self.numbers)


def prompt_of(spec: m.TaskSpec) -> Prompt:
    """The text a restating reply can copy: persona, context, opening request and follow-ups. One Prompt per
    distinct text, shared (it only caches what it derives from the text), so every episode of a spec reuses its
    word runs instead of rebuilding them."""
    user = spec.user
    return _prompt(
        tuple(p for p in (user.persona, spec.context, user.opening, *(f.message for f in user.follow_ups)) if p)
    )


@lru_cache(maxsize=256)
def _prompt(parts: tuple[str, ...]) -> Prompt:
    return Prompt(list(parts))


def given_values(check: m.AnswerContains | m.AnswerNumber, prompt: Prompt) -> list[Any]:
    """The check's values the prompt already states (a reply can name them without any work): of an
    any-of group, the first alternative the prompt states (one is enough to satisfy the group)."""
    if check.kind == "answer_number":
        return [check.value] if prompt.gives_number(check.value, check.tolerance) else []
    given = (next((v for v in group if prompt.gives(v)), None) for group in check.groups)
    return [v for v in given if v is not None]


@lru_cache(maxsize=1024)
def _numbers(text: str) -> tuple[float, ...]:
    """numbers_in, remembered: every grade of a spec's episodes reads the same few reports."""
    return tuple(numbers_in(text))


def answer_ok(check: m.AnswerContains | m.AnswerNumber, text: str, prompt: Prompt | None = None) -> bool:
    """Whether ``text``, less what it restates from ``prompt``, states what the check asks for."""
    if prompt is not None:
        text = prompt.unrestated(text)
    if check.kind == "answer_number":
        return any(abs(x - check.value) <= check.tolerance for x in _numbers(text))
    low = text.lower()
    return all(any(str(v).lower() in low for v in group) for group in check.groups)
