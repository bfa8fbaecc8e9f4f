"""What every environment front end returns, and the interface they share.

The runtime :class:`~coworkenv.runtime.environment.Environment`, the env ``coworkenv.make`` returns and the
HTTP client's env all return an :class:`Observation` from ``reset`` and ``step`` and satisfy :class:`EpisodeEnv`,
so the episode loops (:mod:`coworkenv.runtime.episode`) and the rollout workers run on any of them.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from coworkenv.spec.models import TaskSpec
from coworkenv.trajectory import Grade, Trajectory


class Observation(BaseModel):
    """What an agent sees after ``reset`` or ``step``."""

    messages: list[dict[str, Any]] = Field(description="the new messages (all of them after reset)")
    tools: list[dict[str, Any]] = Field(description="OpenAI-format tool schemas")
    done: bool = False
    reward: float | None = Field(
        None,
        description="score of the episode so far (the final score once done); None where the environment grades "
        "only when asked (the runtime Environment: see its grade())",
    )
    step: int = 0
    info: dict[str, Any] = Field(
        default_factory=dict,
        description="done_reason; the grade once done (where reward is given); stage and view_reset when a step "
        "began a stage",
    )


@runtime_checkable
class EpisodeEnv(Protocol):
    """An environment one episode at a time: what the episode loops and the rollout workers use."""

    @property
    def spec(self) -> TaskSpec: ...

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The agent's view of the episode so far."""
        ...

    @property
    def done(self) -> bool: ...

    def reset(self) -> Observation: ...

    def step(self, turn: Any) -> Observation:
        """Apply one agent turn (an AssistantTurn, an OpenAI assistant message dict, or text to the user)."""
        ...

    def grade(self) -> Grade: ...

    def end(self, reason: str) -> None:
        """End the episode now (a policy error, a time budget spent)."""
        ...

    def trajectory(self, policy: str = "", sample: int = 0) -> Trajectory: ...

    async def areset(self) -> Observation: ...

    async def astep(self, turn: Any) -> Observation: ...

    async def agrade(self) -> Grade: ...
