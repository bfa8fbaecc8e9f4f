"""multi_turn: clarify missing facts with the user, handle follow-up requests and confirmations."""

from __future__ import annotations

from coworkenv.capabilities.base import Capability, Ingredient
from coworkenv.spec.models import AskStep, ConfirmStep, TaskSpec


def _conversation(spec: TaskSpec) -> bool:
    """A hidden fact the reference asks for, a follow-up, a confirmation, or a later stage's request."""
    if spec.stages:
        return True
    asks = any(isinstance(s, AskStep) for s in spec.reference)
    confirms = any(isinstance(s, ConfirmStep) for s in spec.reference)
    return (asks and bool(spec.user.hidden_facts)) or bool(spec.user.follow_ups) or confirms


CAPABILITY = Capability(
    name="multi_turn",
    description=(
        "Hold a conversation over several user turns: ask for a fact the request leaves out instead of "
        "guessing, and carry on with follow-up requests after reporting the first one done."
    ),
    ingredients=(
        Ingredient(
            "second_user_turn",
            "a hidden fact the reference asks for, a follow-up, a confirmation, or a later stage",
            _conversation,
        ),
    ),
    probes=("guess_without_asking", "stop_before_follow_up", "stop_after_stage"),
)
