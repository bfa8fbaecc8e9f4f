"""The policy protocols the episode loop drives: one turn at a time, per task, or batched."""

from __future__ import annotations

from typing import Protocol, cast, runtime_checkable

from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec.models import TaskSpec

Messages = list[dict[str, object]]
Tools = list[dict[str, object]]


@runtime_checkable
class Policy(Protocol):
    """Anything that maps a conversation and the tools on offer to the next turn."""

    name: str

    def act(self, messages: Messages, tools: Tools) -> AssistantTurn: ...


@runtime_checkable
class TaskPolicy(Protocol):
    """A policy that needs the task itself (the oracle teacher, the verifier's probes)."""

    name: str

    def for_task(self, spec: TaskSpec) -> Policy: ...


@runtime_checkable
class BatchPolicy(Protocol):
    """A policy that answers many conversations in one call (a local model on one device)."""

    name: str

    def act_batch(self, batch: list[tuple[Messages, Tools]]) -> list[AssistantTurn]: ...


def actor_for(policy: Policy | TaskPolicy, spec: TaskSpec) -> Policy:
    """The policy that plays ``spec``: a TaskPolicy starts a run for it, a Policy plays as is.

    Tested as ``isinstance(policy, TaskPolicy)`` does (both members present, ``for_task`` not None), without the
    runtime Protocol check itself: that costs tens of microseconds, and this runs for every episode."""
    for_task = getattr(policy, "for_task", None)
    if for_task is not None and hasattr(policy, "name"):
        actor: Policy = for_task(spec)
        return actor
    return cast(Policy, policy)
