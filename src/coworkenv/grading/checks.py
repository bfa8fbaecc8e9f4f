"""Evaluation of declarative checks.

State checks read the workspace; trajectory checks read the tool-call log and the user
simulator's replies; answer checks read what the agent told the user. Predicates are
:mod:`coworkenv.expr` expressions, never Python code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from coworkenv.expr import ExprError, evaluate
from coworkenv.expr_ops import COMPARE
from coworkenv.grading.answers import Prompt, answer_ok
from coworkenv.patterns import pattern_search
from coworkenv.spec import models as m
from coworkenv.trajectory import ToolCallRecord, UserReply
from coworkenv.values import numbers_in


class Records(Protocol):
    """What state checks read: the live records and the records as they were at the start (the workspace, or
    a later stage's view of it whose start is the stage's)."""

    def records(self, service: str, collection: str) -> dict[str, dict[str, Any]]: ...

    def initial_records(self, service: str, collection: str) -> dict[str, dict[str, Any]]: ...


@dataclass
class EpisodeLog:
    """The parts of an episode the trajectory and answer checks look at."""

    calls: list[ToolCallRecord] = field(default_factory=list)
    replies: list[UserReply] = field(default_factory=list)
    answers: list[tuple[int, str]] = field(default_factory=list)
    last_step: int = 0
    prompt: Prompt | None = None


def _truthy(expr: str, ctx: dict[str, Any]) -> bool:
    try:
        return bool(evaluate(expr, ctx))
    except ExprError:
        return False


def record_matches(where: str, rec: dict[str, Any]) -> bool:
    """Whether a record satisfies a check's ``where`` (an expression that fails counts as false)."""
    return _truthy(where, {"r": rec})


class _Matches:
    """Whether an initial record satisfies a ``where``, kept per record object: stored records are copy-on-write (a
    service replaces a record, never edits it), so a record object matches a ``where`` for as long as it lives, and
    the grades of a spec's episodes ask it of the same initial records. Records an episode wrote are evaluated
    each time (they are new every episode: keeping them would only fill the memo)."""

    def __init__(self, limit: int = 1 << 16) -> None:
        self.limit = limit
        self.known: dict[tuple[str, int], tuple[dict[str, Any], bool]] = {}

    def __call__(self, where: str, records: dict[str, Any], initial: dict[str, Any]) -> list[dict[str, Any]]:
        known, hits = self.known, []
        for rid, rec in records.items():
            stored_at_start = initial.get(rid) is rec
            if not stored_at_start:
                matched = record_matches(where, rec)
            else:
                entry = known.get((where, id(rec)))
                if entry is None:  # an entry holds its record, so no other record can have taken its id
                    if len(known) >= self.limit:
                        known.clear()
                    entry = known[(where, id(rec))] = (rec, record_matches(where, rec))
                matched = entry[1]
            if matched:
                hits.append(rec)
        return hits


_matches = _Matches()


def _matching(ws: Records, service: str, collection: str, where: str) -> list[dict[str, Any]]:
    """The stored records of a collection that satisfy ``where``, in their order."""
    return _matches(where, ws.records(service, collection), ws.initial_records(service, collection))


def state_check(check: Any, ws: Records) -> tuple[bool, str]:
    """Evaluate a state check on the live workspace; returns (passed, detail)."""
    if isinstance(check, m.RecordExists):
        hits = _matching(ws, check.service, check.collection, check.where)
        return bool(hits), f"{len(hits)} matching record(s)"
    if isinstance(check, m.RecordAbsent):
        hits = _matching(ws, check.service, check.collection, check.where)
        return not hits, f"{len(hits)} matching record(s)"
    if isinstance(check, m.FieldEquals):
        rec = ws.records(check.service, check.collection).get(check.record_id)
        if rec is None:
            return False, f"record {check.record_id} missing"
        return rec.get(check.field) == check.value, f"{check.field}={rec.get(check.field)!r}"
    if isinstance(check, m.Count):
        n = len(_matching(ws, check.service, check.collection, check.where))
        return COMPARE[check.op](n, check.value), f"count={n}"
    if isinstance(check, m.FieldMatches | m.FieldNumber):
        hits = [r for r in _matching(ws, check.service, check.collection, check.where) if text_holds(check, r)]
        return bool(hits), f"{len(hits)} record(s) whose {check.field} states it"
    if isinstance(check, m.Unchanged):
        return _unchanged(check, ws)
    raise TypeError(f"not a state check: {check.kind}")


def text_holds(check: m.FieldMatches | m.FieldNumber, rec: dict[str, Any]) -> bool:
    """Whether a record's field finds the check's pattern, or states its number within the tolerance."""
    value = rec.get(check.field)
    if isinstance(check, m.FieldMatches):
        return pattern_search(check.pattern, value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        found = [float(value)]
    else:
        found = numbers_in(value) if isinstance(value, str) else []
    return any(abs(x - check.value) <= check.tolerance for x in found)


def _unchanged(check: m.Unchanged, ws: Records) -> tuple[bool, str]:
    before = ws.initial_records(check.service, check.collection)
    after = ws.records(check.service, check.collection)
    bad = [rid for rid in set(before) | set(after) if collateral(check, before.get(rid), after.get(rid))]
    return unchanged_result(check, bad)


def collateral(check: m.Unchanged, old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
    """Whether a record's change (``None``: absent) is collateral damage: a change ``allow`` does not cover."""
    if old is new or old == new:
        return False
    return not any(
        rec is not None and check.allow is not None and _truthy(check.allow, {"r": rec}) for rec in (old, new)
    )


def unchanged_result(check: m.Unchanged, bad: Iterable[str]) -> tuple[bool, str]:
    """The verdict on the collateral changes found; the smallest id is named, so the detail is reproducible."""
    first = min(bad, default=None)
    if first is None:
        return True, "no collateral changes"
    return False, f"collateral change to {check.collection}/{first}"


def _calls(log: EpisodeLog, tool: str, where: str | None) -> list[ToolCallRecord]:
    return [
        c for c in log.calls if c.ok and c.tool == tool and (where is None or _truthy(where, {"args": c.args or {}}))
    ]


def episode_check(check: Any, log: EpisodeLog) -> tuple[bool, int | None, str]:
    """Evaluate a trajectory or answer check; returns (passed, first_step, detail)."""
    if isinstance(check, m.ToolCalled):
        hits = _calls(log, check.tool, check.where)
        ok = len(hits) >= check.min_times
        return ok, hits[check.min_times - 1].step if ok else None, f"{len(hits)} call(s)"
    if isinstance(check, m.ToolNotCalled):
        hits = _calls(log, check.tool, check.where)
        return not hits, log.last_step if not hits else None, f"{len(hits)} call(s)"
    if isinstance(check, m.MaxCalls):
        hits = _calls(log, check.tool, check.where)
        ok = len(hits) <= check.max
        return ok, log.last_step if ok else None, f"{len(hits)} call(s), at most {check.max}"
    if isinstance(check, m.Order):
        first, then = _calls(log, check.first, None), _calls(log, check.then, None)
        ok = bool(first and then) and first[0].step <= then[0].step and _before(log, first[0], then[0])
        return ok, then[0].step if ok else None, "in order" if ok else "missing or out of order"
    if isinstance(check, m.AskedUser):
        step = next((r.step for r in log.replies if r.kind == "fact" and check.slot in r.slots), None)
        return step is not None, step, "asked" if step is not None else "never asked"
    if isinstance(check, m.ConfirmedBefore):
        hits = _calls(log, check.tool, None)
        bad = [c for c in hits if not c.confirmed]
        ok = bool(hits) and not bad
        return ok, log.last_step if ok else None, f"{len(bad)} unconfirmed of {len(hits)}"
    if isinstance(check, m.AnswerContains | m.AnswerNumber):
        answers = log.answers[-1:] if check.scope == "final" else log.answers
        step = next((s for s, text in answers if answer_ok(check, text, log.prompt)), None)
        return step is not None, step, "found" if step is not None else "not in the answer"
    raise TypeError(f"not an episode check: {check.kind}")


def _before(log: EpisodeLog, a: ToolCallRecord, b: ToolCallRecord) -> bool:
    return log.calls.index(a) < log.calls.index(b)
