"""Checks on the agent's successful tool calls: made, never made, bounded, in order, confirmed."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from coworkenv.spec.checks.base import CallBound, EpisodeCheck, EpisodeLog, Names, Scope, holds
from coworkenv.trajectory import ToolCallRecord


def successful_calls(log: EpisodeLog, tool: str, where: str | None = None) -> list[ToolCallRecord]:
    """The successful calls of ``tool`` whose arguments satisfy ``where`` (as ``args``), in order."""
    return [c for c in log.calls if c.ok and c.tool == tool and (where is None or holds(where, {"args": c.args or {}}))]


class CallCheck(EpisodeCheck):
    """A check on the calls of one tool."""

    reads: ClassVar[Scope] = "calls"
    tool: str

    def names(self) -> Names:
        return Names(tools=(("tool", self.tool),), expressions=(("where", getattr(self, "where", None)),))


class ToolCalled(CallCheck):
    """``tool`` was called successfully at least ``min_times`` times (with arguments matching ``where``)."""

    kind: Literal["tool_called"] = "tool_called"
    where: str | None = Field(None, description="expression over the call's 'args'")
    min_times: int = Field(1, ge=1)

    def judge(self, log: EpisodeLog) -> tuple[bool, int | None, str]:
        hits = successful_calls(log, self.tool, self.where)
        ok = len(hits) >= self.min_times
        return ok, hits[self.min_times - 1].step if ok else None, f"{len(hits)} call(s)"


class ToolNotCalled(CallCheck):
    """``tool`` was never called successfully (with arguments matching ``where``). A guard."""

    kind: Literal["tool_not_called"] = "tool_not_called"
    where: str | None = None
    guard: ClassVar[bool] = True

    def judge(self, log: EpisodeLog) -> tuple[bool, int | None, str]:
        hits = successful_calls(log, self.tool, self.where)
        return not hits, log.last_step if not hits else None, f"{len(hits)} call(s)"

    def call_bound(self) -> CallBound | None:
        return CallBound(self.tool, self.where, 0)


class MaxCalls(CallCheck):
    """An upper bound: at most ``max`` successful calls of ``tool`` (matching ``where``). A guard."""

    kind: Literal["max_calls"] = "max_calls"
    where: str | None = Field(None, description="expression over the call's 'args'")
    max: int = Field(ge=0, le=1000)
    guard: ClassVar[bool] = True

    def judge(self, log: EpisodeLog) -> tuple[bool, int | None, str]:
        hits = successful_calls(log, self.tool, self.where)
        ok = len(hits) <= self.max
        return ok, log.last_step if ok else None, f"{len(hits)} call(s), at most {self.max}"

    def call_bound(self) -> CallBound | None:
        return CallBound(self.tool, self.where, self.max)


class ConfirmedBefore(CallCheck):
    """Every successful call of ``tool`` came after a user confirmation."""

    kind: Literal["confirmed_before"] = "confirmed_before"

    def judge(self, log: EpisodeLog) -> tuple[bool, int | None, str]:
        hits = successful_calls(log, self.tool)
        bad = [c for c in hits if not c.confirmed]
        ok = bool(hits) and not bad
        return ok, log.last_step if ok else None, f"{len(bad)} unconfirmed of {len(hits)}"


class Order(EpisodeCheck):
    """The first successful call of ``first`` precedes the first of ``then``."""

    kind: Literal["order"] = "order"
    first: str
    then: str
    reads: ClassVar[Scope] = "calls"

    def names(self) -> Names:
        return Names(tools=(("first", self.first), ("then", self.then)))

    def judge(self, log: EpisodeLog) -> tuple[bool, int | None, str]:
        first, then = successful_calls(log, self.first), successful_calls(log, self.then)
        ok = (
            bool(first and then)
            and first[0].step <= then[0].step
            and log.calls.index(first[0]) < log.calls.index(then[0])
        )
        return ok, then[0].step if ok else None, "in order" if ok else "missing or out of order"
