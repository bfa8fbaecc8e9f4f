"""The collateral-damage guard: records the task is not about end as they started."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import ClassVar, Literal

from pydantic import Field

from coworkenv.spec.checks.base import Record, StateCheck, record_matches


class Unchanged(StateCheck):
    """No collateral damage: records not matched by ``allow`` are as they started."""

    kind: Literal["unchanged"] = "unchanged"
    allow: str | None = Field(None, description="records (as 'r', old or new) that may change")
    guard: ClassVar[bool] = True

    def expressions(self) -> tuple[tuple[str, str | None], ...]:
        return (("allow", self.allow),)

    def candidates(self, initial: Mapping[str, Record], live: Mapping[str, Record]) -> Iterable[str]:
        return set(initial) | set(live)

    def hit(self, rid: str, old: Record | None, new: Record | None) -> bool:
        """A collateral change: the record changed (``None``: absent) and ``allow`` covers neither version."""
        if old is new or old == new:
            return False
        allow = self.allow
        return allow is None or not any(rec is not None and record_matches(allow, rec) for rec in (old, new))

    def verdict(self, hits: Collection[str], live: Mapping[str, Record]) -> tuple[bool, str]:
        first = min(hits, default=None)  # the smallest id is named, so the detail is reproducible
        if first is None:
            return True, "no collateral changes"
        return False, f"collateral change to {self.collection}/{first}"

    def collateral_guard(self) -> tuple[str, str, str | None] | None:
        return self.service, self.collection, self.allow
