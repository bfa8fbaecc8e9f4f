"""The prompt an answer check cuts out of a report: what the agent was told before doing anything."""

from __future__ import annotations

from functools import lru_cache

from coworkenv.spec.checks import Prompt
from coworkenv.spec.models import TaskSpec


def prompt_of(spec: TaskSpec) -> Prompt:
    """The text a restating reply can copy: persona, context, opening request and follow-ups. One Prompt per
    distinct text, shared (it only caches what it derives from the text), so every episode of a spec reuses its
    word runs."""
    user = spec.user
    return _prompt(
        tuple(p for p in (user.persona, spec.context, user.opening, *(f.message for f in user.follow_ups)) if p)
    )


@lru_cache(maxsize=256)
def _prompt(parts: tuple[str, ...]) -> Prompt:
    return Prompt(list(parts))
