"""The user's script: what the simulated user knows, approves, asks next and answers by context.

Data only; :mod:`coworkenv.runtime.user` plays it.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from coworkenv.spec.base import SpecModel as _Model


class HiddenFact(_Model):
    """A fact the user knows but did not say: revealed when the agent asks about its slot."""

    slot: str
    value: object
    keywords: list[str] = Field(min_length=1, description="words that mark a question about this slot")
    reply: str = Field(description="what the user says when asked; should contain the value")
    question: str = Field("", description="how the reference solution asks for it")


class Confirmation(_Model):
    """How the user answers when the agent asks for confirmation before acting."""

    keywords: list[str] = Field(
        default_factory=list, description="words naming the target; empty = any request that names something specific"
    )
    action: list[str] = Field(
        default_factory=list, description="words naming the action; empty = any common action verb (send, cancel, ...)"
    )
    approve: bool = True
    reply: str = "Yes, please go ahead."
    after: list[str] | None = Field(
        None,
        description="hidden-fact slots the user must have given first: asked earlier, the user narrows the request "
        "(answers with the first missing fact) instead of approving",
    )


class FollowUp(_Model):
    """A further request the user sends once the agent reports the previous one done."""

    message: str


class ContextReply(_Model):
    """An answer that depends on what the agent already did: given to a question naming ``keywords``
    while ``when`` (an expression over ``state``, the workspace, and ``calls``, the calls made) holds."""

    keywords: list[str] = Field(min_length=1, description="words that mark a question this reply answers")
    when: str = Field(description="expression over 'state' (service -> collection -> id -> record) and 'calls'")
    reply: str


class Request(_Model):
    """One request of the user: what they ask, what they know but did not say, how they answer.
    The spec's own request (with the persona) is a UserScript; each later stage of a multi-stage spec has one."""

    opening: str
    hidden_facts: list[HiddenFact] = Field(default_factory=list)
    confirmations: list[Confirmation] = Field(default_factory=list)
    follow_ups: list[FollowUp] = Field(default_factory=list)
    context_replies: list[ContextReply] | None = Field(
        None, description="replies chosen by the workspace state and the calls made; the first that applies answers"
    )
    fallback_reply: str = "I don't have more details on that. Please use what you have."

    @model_validator(mode="after")
    def _narrowing_slots(self) -> Request:
        slots = {f.slot for f in self.hidden_facts}
        for i, conf in enumerate(self.confirmations):
            missing = [s for s in conf.after or [] if s not in slots]
            if missing:
                raise ValueError(f"confirmations[{i}].after: no hidden fact with slot {missing[0]!r}")
        return self


class _Persona(_Model):
    persona: str = "a busy colleague"
    persona_turns: int | None = Field(
        None,
        ge=1,
        le=50,
        description="set for a persona an LLM plays in full (an imported Claw-Eval user agent that reveals its "
        "details as asked): the most replies it gives. The script holds nothing for it to say, so such a spec runs "
        "only with an LLM user (--user openai:<model>@<url>)",
    )


class UserScript(Request, _Persona):
    """The spec's own request and who asks it (the persona comes first, as it always did in spec files)."""
