"""The reference solution: an executable program over the tools that the oracle teacher runs."""

from __future__ import annotations

from pydantic import Field

from coworkenv.spec.base import SpecModel as _Model


class CallStep(_Model):
    """Call a tool; ``args`` may reference earlier results (``${r1.items[0].id}``) and facts."""

    call: str
    args: dict[str, object] = Field(default_factory=dict)
    save_as: str | None = None
    say: str | None = Field(None, description="assistant text sent with the call")


class AskStep(_Model):
    """Ask the user about a hidden slot; its value is then ``${facts.<slot>}``."""

    ask: str
    question: str | None = None


class ConfirmStep(_Model):
    """Ask the user to confirm before an irreversible write."""

    confirm: str


class AnswerStep(_Model):
    """Report to the user; ends the current request (the next follow-up may come)."""

    answer: str


ReferenceStep = CallStep | AskStep | ConfirmStep | AnswerStep
