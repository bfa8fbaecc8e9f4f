"""The Policy protocol: anything that maps a conversation and tools to the next turn."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec.models import TaskSpec


@runtime_checkable
class Policy(Protocol):
    name: str

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn: ...


@runtime_checkable
class TaskPolicy(Protocol):
    """A policy that needs the task itself (the oracle teacher, the verifier's probes)."""

    name: str

    def for_task(self, spec: TaskSpec) -> Policy: ...
