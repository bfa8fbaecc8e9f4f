"""Checks on which records of a collection match a ``where``: one exists, none does, or how many."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import ClassVar, Literal

from pydantic import Field

from coworkenv.expr.ops import COMPARE
from coworkenv.spec.checks.base import Record, StateCheck, record_matches


class WhereCheck(StateCheck):
    """A check whose hits are the records that match ``where`` now."""

    where: str
    selects_record: ClassVar[bool] = True

    def expressions(self) -> tuple[tuple[str, str | None], ...]:
        return (("where", self.where),)

    def hit(self, rid: str, old: Record | None, new: Record | None) -> bool:
        return new is not None and record_matches(self.where, new)


class RecordExists(WhereCheck):
    """Some record of the collection matches ``where``: the write the task asks for happened."""

    kind: Literal["record_exists"] = "record_exists"
    where: str = Field(description="expression over the record as 'r'")

    def verdict(self, hits: Collection[str], live: Mapping[str, Record]) -> tuple[bool, str]:
        return bool(hits), f"{len(hits)} matching record(s)"


class RecordAbsent(WhereCheck):
    """No record of the collection matches ``where``: a removal, or (holding at the start) a guard."""

    kind: Literal["record_absent"] = "record_absent"
    where: str
    guard: ClassVar[bool] = True

    def verdict(self, hits: Collection[str], live: Mapping[str, Record]) -> tuple[bool, str]:
        return not hits, f"{len(hits)} matching record(s)"

    def is_guard(self, holds_at_start: bool) -> bool:
        return holds_at_start  # one that does not hold at the start asks for a removal

    def forbidden_records(self) -> tuple[str, str, str] | None:
        return self.service, self.collection, self.where


class Count(WhereCheck):
    """The number of records matching ``where`` compares to ``value`` by ``op``."""

    kind: Literal["count"] = "count"
    where: str = "true"
    op: Literal["==", "!=", "<", "<=", ">", ">="] = "=="
    value: int

    def verdict(self, hits: Collection[str], live: Mapping[str, Record]) -> tuple[bool, str]:
        n = len(hits)
        return COMPARE[self.op](n, self.value), f"count={n}"
