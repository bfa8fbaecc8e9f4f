"""The shape of a Claw-Eval ``task.yaml``, as far as the importer reads it.

The importer works on the parsed mapping; these models only say whether that mapping has the
shape it reads (other keys are allowed and ignored), so that a malformed task is refused with
``file: field: message`` instead of failing somewhere inside the import.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Scalar = str | int | float | bool | None


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class _Prompt(_Loose):
    text: str = Field(min_length=1)


class _Service(_Loose):
    name: object = None  # its own check gives the clearer message (a lower-case name)
    env: dict[str, Scalar] = Field(default_factory=dict)


class _Schema(_Loose):
    properties: dict[str, dict[str, object]] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)


class _Tool(_Loose):
    name: str = Field(min_length=1)
    description: Scalar = ""
    input_schema: _Schema | None = None


class _Check(_Loose):
    type: str | None = None
    tool_name: str | None = None
    min_calls: int = Field(1, ge=1)
    min_length: int | None = Field(None, ge=1)
    keywords: list[Scalar] | None = None
    categories: list[Scalar] | None = None
    description: Scalar = ""


class _Component(_Loose):
    name: Scalar = None
    weight: float | None = Field(None, ge=0, strict=False)
    check: _Check | None = None


class _Safety(_Loose):
    type: str | None = None
    tool_name: str | None = None
    description: Scalar = ""


class _Environment(_Loose):
    max_turns: int | None = Field(None, ge=1)


class _UserAgent(_Loose):
    enabled: bool = True
    persona: str = Field(min_length=1)
    max_rounds: int = Field(8, ge=1, le=50)
    system_prompt_suffix: Scalar = ""


class TaskShape(_Loose):
    """The parts of a task the importer reads."""

    task_id: str | int
    prompt: _Prompt
    services: list[_Service] | None = None
    tools: list[_Tool] | None = None
    scoring_components: list[_Component] | None = None
    safety_checks: list[_Safety] | None = None
    environment: _Environment | None = None
    user_agent: _UserAgent | None = None
    sandbox_files: list[str] | None = None
    judge_rubric: Scalar = ""
    reference_solution: Scalar = ""


def shape_problem(task: object) -> str:
    """What in a parsed ``task.yaml`` the importer cannot read, as ``field: message`` (empty when nothing)."""
    if not isinstance(task, dict):
        return f"expected a mapping at the top, got {type(task).__name__}"
    try:
        TaskShape.model_validate(task)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
        return f"{where or 'task'}: {first['msg']}"
    return ""
