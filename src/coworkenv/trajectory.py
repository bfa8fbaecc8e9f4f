"""What an episode leaves behind: per-step records, the whole trajectory and its store record.

These models are the contract between the runtime, the grader, the rollout store and the
SFT/RL exporters, so they are plain pydantic data with OpenAI-format messages. Rollout writes
an :class:`EpisodeRecord` per episode; data/ and eval/ read it back only through this model.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError


class PublicModel(BaseModel):
    """A model whose JSON never fails on model text.

    Text from models can hold lone surrogates (``"\\ud800"``), which UTF-8 cannot encode and pydantic's JSON
    writer refuses; such a document is written with JSON escapes instead (as the rollout store writes it), with
    the numbers ``json`` cannot write as null (pydantic writes non-finite ones so too). Every other document is
    pydantic's own JSON."""

    def model_dump_json(self, *, indent: int | None = None, **kwargs: Any) -> str:
        try:
            return super().model_dump_json(indent=indent, **kwargs)
        except PydanticSerializationError:
            data = _finite(self.model_dump(mode="json", **kwargs))
            separators = (",", ":") if indent is None else None
            return json.dumps(data, ensure_ascii=True, indent=indent, separators=separators, allow_nan=False)


_DIGIT_BITS = 14_000
"""Bits of an integer ``str()`` still writes (Python's limit is 4,300 digits, about 14,280 bits)."""


def _finite(value: object) -> object:
    """``value`` (plain JSON data) with the numbers ``json`` cannot write (NaN, infinities, integers past Python's
    digit limit) as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int):
        return value if value.bit_length() <= _DIGIT_BITS else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


class ToolCallRecord(BaseModel):
    step: int
    call_id: str
    tool: str
    args: dict[str, object] | None = None
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
    kind: Literal["fact", "confirmation", "follow_up", "context", "fallback", "persona", "end"]
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


class Grade(PublicModel):
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
    stages: list[Grade] | None = Field(None, description="per-stage grades of a multi-stage task, in order")


class StageMark(BaseModel):
    """Where a stage of a multi-stage episode begins in the trajectory."""

    index: int = Field(description="0 for the spec's own request, k for spec.stages[k-1]")
    id: str
    first_step: int = Field(description="the first agent step of the stage")
    first_message: int = Field(description="the message the agent's view of the stage starts at")
    context: str = Field("conversation", description="conversation: earlier messages stay visible; notes: not")
    clock: str | None = None


class Trajectory(PublicModel):
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
    stages: list[StageMark] | None = Field(None, description="stage boundaries of a multi-stage episode")


EpisodeStatus = Literal["ok", "error", "timeout"]


class EpisodeRecord(PublicModel):
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


def stage_of_step(marks: list[StageMark] | None, step: int) -> tuple[int, int]:
    """(stage index, first message of its view) of an agent step; (0, 0) without stages."""
    index, view = 0, 0
    for mark in marks or []:
        if mark.first_step > step:
            break
        index = mark.index
        view = mark.first_message if mark.context == "notes" else view
    return index, view


def view_segments(marks: list[StageMark] | None, n_messages: int) -> list[tuple[int, int, list[int]]]:
    """(first message, end, stage indices) of each stretch of the transcript the agent saw as one conversation:
    the whole episode, unless a ``notes`` stage started the agent's view over."""
    marks = marks or []
    segments: list[tuple[int, int, list[int]]] = [(0, n_messages, [m.index for m in marks])]
    for mark in marks:
        if mark.context == "notes":
            start, _, stages = segments[-1]
            segments[-1] = (start, mark.first_message, [i for i in stages if i < mark.index])
            segments.append((mark.first_message, n_messages, [i for i in stages if i >= mark.index]))
    return segments
