"""What an episode leaves behind: per-step records, the whole trajectory and its store record.

These models are the contract between the runtime, the grader, the rollout store and the
SFT/RL exporters, so they are plain pydantic data with OpenAI-format messages. Rollout writes
an :class:`EpisodeRecord` per episode; data/ and eval/ read it back only through this model.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ToolCallRecord(BaseModel):
    step: int
    call_id: str
    tool: str
    args: dict[str, Any] | None = None
    ok: bool
    kind: Literal["read", "write"] | None = None
    error: str | None = None
    fault: bool = Field(False, description="an injected transient error")
    confirmed: bool = Field(False, description="a user confirmation was in force")


class Violation(BaseModel):
    step: int
    policy: str
    tool: str
    description: str


class UserReply(BaseModel):
    step: int
    kind: Literal["fact", "confirmation", "follow_up", "context", "fallback", "end"]
    slots: list[str] = Field(default_factory=list)
    approved: bool | None = None


class StepRecord(BaseModel):
    index: int
    tool_calls: int = 0
    events: list[str] = Field(default_factory=list)
    violations: list[str] = Field(default_factory=list)
    user: UserReply | None = None
    malformed: bool = False


class CheckResult(BaseModel):
    id: str
    kind: str
    weight: float
    passed: bool
    required: bool = False
    first_step: int | None = Field(None, description="the step at which the check first became true")
    detail: str = ""


class Grade(BaseModel):
    score: float
    completion: float
    robustness: float
    safety: float
    passed: bool
    claw_eval_score: float | None = Field(
        None, description="the score under the plain Claw-Eval rule (required checks not capping it)"
    )
    checks: list[CheckResult]
    violations: list[Violation] = Field(default_factory=list)


class Trajectory(BaseModel):
    spec_id: str
    seed: int = 0
    policy: str = ""
    sample: int = 0
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    steps: list[StepRecord]
    calls: list[ToolCallRecord]
    grade: Grade | None = None
    done_reason: str = ""
    final_state_hash: str = ""
    capabilities: list[str] = Field(default_factory=list)
    blueprint: str | None = None
    evaluation_only: bool = Field(False, description="from an evaluation-only spec: SFT/RL exports skip it")
    multi_turn: bool = False
    usage: dict[str, int] = Field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None


EpisodeStatus = Literal["ok", "error", "timeout"]


class EpisodeRecord(BaseModel):
    """One line of a rollout run's ``episodes.jsonl``: an episode, how it ended and its trajectory.

    ``trajectory`` is None only when the episode could not be played at all (a spec that does
    not load, a backend that cannot be built); ``score``/``passed`` repeat its grade so that
    summaries need not walk the trajectory.
    """

    model_config = ConfigDict(extra="forbid")

    key: str
    spec_id: str
    sample: int
    seed: int
    policy: str
    status: EpisodeStatus
    error: str | None
    score: float | None
    passed: bool
    seconds: float | None
    trajectory: Trajectory | None
