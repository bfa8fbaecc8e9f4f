"""What every environment front end returns, and the interface they share.

The runtime :class:`~coworkenv.runtime.environment.Environment`, the env ``coworkenv.make`` returns and the
HTTP client's env all return an :class:`Observation` from ``reset`` and ``step`` and satisfy :class:`EpisodeEnv`,
so the episode loops (:mod:`coworkenv.runtime.episode`) and the rollout workers run on any of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol, runtime_checkable

from pydantic import Field, TypeAdapter

from coworkenv.spec.models import TaskSpec
from coworkenv.trajectory import Grade, Trajectory


@dataclass
class Observation:
    """What an agent sees after ``reset`` or ``step``. A plain dataclass, made at every step; pydantic validates it
    where it crosses the wire (:data:`OBSERVATION`, the HTTP server's response models)."""

    messages: Annotated[list[dict[str, object]], Field(description="the new messages (all of them after reset)")]
    tools: Annotated[list[dict[str, Any]], Field(description="OpenAI-format tool schemas")]
    done: bool = False
    reward: Annotated[
        float | None,
        Field(
            description="score of the episode so far (the final score once done); None where the environment "
            "grades only when asked (the runtime Environment: see its grade())"
        ),
    ] = None
    step: int = 0
    info: Annotated[
        dict[str, object],
        Field(
            description="done_reason; the grade once done (where reward is given); stage and view_reset when a "
            "step began a stage"
        ),
    ] = field(default_factory=dict)


OBSERVATION = TypeAdapter(Observation)
"""Validates an observation read from JSON data (the HTTP client's)."""


@runtime_checkable
class EpisodeEnv(Protocol):
    """An environment one episode at a time: what the episode loops and the rollout workers use."""

    @property
    def spec(self) -> TaskSpec: ...

    @property
    def messages(self) -> list[dict[str, object]]:
        """The agent's view of the episode so far."""
        ...

    @property
    def done(self) -> bool: ...

    def reset(self) -> Observation: ...

    def step(self, turn: object) -> Observation:
        """Apply one agent turn (an AssistantTurn, an OpenAI assistant message dict, or text to the user)."""
        ...

    def grade(self) -> Grade: ...

    def end(self, reason: str) -> None:
        """End the episode now (a policy error, a time budget spent)."""
        ...

    def trajectory(self, policy: str = "", sample: int = 0) -> Trajectory: ...

    async def areset(self) -> Observation: ...

    async def astep(self, turn: object) -> Observation: ...

    async def agrade(self) -> Grade: ...
