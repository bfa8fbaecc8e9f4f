"""Checks: the declarative, weighted predicates the grader evaluates (state, trajectory, answer)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from coworkenv.patterns import pattern_problem
from coworkenv.spec.base import SpecModel as _Model


class _Check(_Model):
    id: str
    weight: float = Field(1.0, gt=0, le=1_000_000, allow_inf_nan=False)  # bounded: weights are summed
    description: str = ""
    required: bool = Field(
        False, description="the task fails when this check fails, whatever the rest (score capped below the pass mark)"
    )


class RecordExists(_Check):
    """Some record of the collection matches ``where``: the write the task asks for happened."""

    kind: Literal["record_exists"] = "record_exists"
    service: str
    collection: str
    where: str = Field(description="expression over the record as 'r'")


class RecordAbsent(_Check):
    """No record of the collection matches ``where``: a removal, or (holding at the start) a guard."""

    kind: Literal["record_absent"] = "record_absent"
    service: str
    collection: str
    where: str


class FieldEquals(_Check):
    """The record ``record_id`` has ``field`` equal to ``value`` at the end."""

    kind: Literal["field_equals"] = "field_equals"
    service: str
    collection: str
    record_id: str
    field: str
    value: Any


class Count(_Check):
    """The number of records matching ``where`` compares to ``value`` by ``op``."""

    kind: Literal["count"] = "count"
    service: str
    collection: str
    where: str = "true"
    op: Literal["==", "!=", "<", "<=", ">", ">="] = "=="
    value: int


class FieldMatches(_Check):
    """Some record (matching ``where``) has a text ``field`` the regular expression ``pattern`` finds.

    Patterns run on RE2 (linear time, no backtracking); see :mod:`coworkenv.patterns`.
    """

    kind: Literal["field_matches"] = "field_matches"
    service: str
    collection: str
    where: str = Field("true", description="expression over the record as 'r'")
    field: str
    pattern: str = Field(min_length=1, description="RE2 syntax, searched case-insensitively")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        problem = pattern_problem(pattern)
        if problem:
            raise ValueError(problem)
        return pattern


class FieldNumber(_Check):
    """Some record (matching ``where``) has a text ``field`` that states ``value`` within ``tolerance``."""

    kind: Literal["field_number"] = "field_number"
    service: str
    collection: str
    where: str = Field("true", description="expression over the record as 'r'")
    field: str
    value: float = Field(allow_inf_nan=False)
    tolerance: float = Field(0.01, ge=0, allow_inf_nan=False)


class Unchanged(_Check):
    """No collateral damage: records not matched by ``allow`` are as they started."""

    kind: Literal["unchanged"] = "unchanged"
    service: str
    collection: str
    allow: str | None = Field(None, description="records (as 'r', old or new) that may change")


class ToolCalled(_Check):
    """``tool`` was called successfully at least ``min_times`` times (with arguments matching ``where``)."""

    kind: Literal["tool_called"] = "tool_called"
    tool: str
    where: str | None = Field(None, description="expression over the call's 'args'")
    min_times: int = Field(1, ge=1)


class ToolNotCalled(_Check):
    """``tool`` was never called successfully (with arguments matching ``where``). A guard."""

    kind: Literal["tool_not_called"] = "tool_not_called"
    tool: str
    where: str | None = None


class MaxCalls(_Check):
    """An upper bound: at most ``max`` successful calls of ``tool`` (matching ``where``). A guard."""

    kind: Literal["max_calls"] = "max_calls"
    tool: str
    where: str | None = Field(None, description="expression over the call's 'args'")
    max: int = Field(ge=0, le=1000)


class Order(_Check):
    """The first successful call of ``first`` precedes the first of ``then``."""

    kind: Literal["order"] = "order"
    first: str
    then: str


class AskedUser(_Check):
    """The agent asked the user about the hidden fact ``slot`` (instead of guessing)."""

    kind: Literal["asked_user"] = "asked_user"
    slot: str


class ConfirmedBefore(_Check):
    """Every successful call of ``tool`` came after a user confirmation."""

    kind: Literal["confirmed_before"] = "confirmed_before"
    tool: str


class AnswerContains(_Check):
    """The agent's reply to the user states every item of ``values`` (case-insensitive)."""

    kind: Literal["answer_contains"] = "answer_contains"
    values: list[str | list[str]] = Field(
        min_length=1, description="each item must be stated; a list is an any-of group: one of its alternatives"
    )
    scope: Literal["final", "any"] = "any"

    @field_validator("values")
    @classmethod
    def _groups(cls, values: list[str | list[str]]) -> list[str | list[str]]:
        for i, group in enumerate(values):
            if isinstance(group, list) and not group:
                raise ValueError(f"item {i}: an any-of group needs at least one alternative")
        return values

    @property
    def groups(self) -> list[list[str]]:
        """Every item as a group of alternatives (a plain value is a group of one)."""
        return [g if isinstance(g, list) else [g] for g in self.values]


class AnswerNumber(_Check):
    """The agent's reply to the user states the number ``value`` within ``tolerance``."""

    kind: Literal["answer_number"] = "answer_number"
    value: float
    tolerance: float = Field(0.01, ge=0)
    scope: Literal["final", "any"] = "any"


Check = Annotated[
    RecordExists
    | RecordAbsent
    | FieldEquals
    | Count
    | FieldMatches
    | FieldNumber
    | Unchanged
    | ToolCalled
    | ToolNotCalled
    | MaxCalls
    | Order
    | AskedUser
    | ConfirmedBefore
    | AnswerContains
    | AnswerNumber,
    Field(discriminator="kind"),
]
STATE_CHECKS = ("record_exists", "record_absent", "field_equals", "count", "field_matches", "field_number", "unchanged")
GUARD_CHECKS = ("unchanged", "tool_not_called", "max_calls", "record_absent")
"""Checks that say what must *not* happen: they hold until the agent errs, so may hold at the start."""
