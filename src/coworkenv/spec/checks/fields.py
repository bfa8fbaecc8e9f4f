"""Checks on one field of a record: equal to a value, found by a pattern, or stating a number."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import ClassVar, Literal

from pydantic import Field, field_validator

from coworkenv.patterns import pattern_problem, pattern_search
from coworkenv.spec.checks.base import Names, Record, StateCheck, record_matches
from coworkenv.values import numbers_in


class FieldEquals(StateCheck):
    """The record ``record_id`` has ``field`` equal to ``value`` at the end."""

    kind: Literal["field_equals"] = "field_equals"
    record_id: str
    field: str
    value: object
    selects_record: ClassVar[bool] = True

    def names(self) -> Names:
        return Names(collection=(self.service, self.collection), record_id=self.record_id)

    def candidates(self, initial: Mapping[str, Record], live: Mapping[str, Record]) -> Iterable[str]:
        return (self.record_id,) if self.record_id in live else ()

    def hit(self, rid: str, old: Record | None, new: Record | None) -> bool:
        return rid == self.record_id and new is not None and new.get(self.field) == self.value

    def verdict(self, hits: Collection[str], live: Mapping[str, Record]) -> tuple[bool, str]:
        rec = live.get(self.record_id)
        if rec is None:
            return False, f"record {self.record_id} missing"
        return self.record_id in hits, f"{self.field}={rec.get(self.field)!r}"


class TextCheck(StateCheck):
    """Some record (matching ``where``) has a ``field`` whose text satisfies the check."""

    where: str = Field("true", description="expression over the record as 'r'")
    field: str
    selects_record: ClassVar[bool] = True

    def names(self) -> Names:
        return Names(collection=(self.service, self.collection), expressions=(("where", self.where),), field=self.field)

    def hit(self, rid: str, old: Record | None, new: Record | None) -> bool:
        return new is not None and record_matches(self.where, new) and self.states(new.get(self.field))

    def states(self, value: object) -> bool:
        """Whether a field's value satisfies the check."""
        raise NotImplementedError

    def verdict(self, hits: Collection[str], live: Mapping[str, Record]) -> tuple[bool, str]:
        return bool(hits), f"{len(hits)} record(s) whose {self.field} states it"


class FieldMatches(TextCheck):
    """Some record (matching ``where``) has a text ``field`` the regular expression ``pattern`` finds.

    Patterns run on RE2 (linear time, no backtracking); see :mod:`coworkenv.patterns`.
    """

    kind: Literal["field_matches"] = "field_matches"
    pattern: str = Field(min_length=1, description="RE2 syntax, searched case-insensitively")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        problem = pattern_problem(pattern)
        if problem:
            raise ValueError(problem)
        return pattern

    def states(self, value: object) -> bool:
        return pattern_search(self.pattern, value)


class FieldNumber(TextCheck):
    """Some record (matching ``where``) has a text ``field`` that states ``value`` within ``tolerance``."""

    kind: Literal["field_number"] = "field_number"
    value: float = Field(allow_inf_nan=False)
    tolerance: float = Field(0.01, ge=0, allow_inf_nan=False)

    def states(self, value: object) -> bool:
        if isinstance(value, int | float) and not isinstance(value, bool):
            found = [float(value)]
        else:
            found = numbers_in(value) if isinstance(value, str) else []
        return any(abs(x - self.value) <= self.tolerance for x in found)

    def stated_number(self) -> tuple[float, float] | None:
        return self.value, self.tolerance
