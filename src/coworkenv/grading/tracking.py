"""Incremental check tracking: the live result of every state check, kept current from the
records that changed rather than recomputed over the whole workspace.

A state check's result depends on the records of one collection. At construction (once
per environment, so once per spec's workspace) the tracker computes the step-0 picture:
for each ``where`` check, the initial records that match. During the episode it reads
the workspace's change log and re-evaluates a check only on the records a write
changed, keeping just the differences from step 0; a reset drops them. The results
equal :func:`coworkenv.grading.checks.state_check` on the same state, always (the tests
compare both on random write sequences).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from coworkenv.expr import record_fields
from coworkenv.expr_ops import COMPARE
from coworkenv.grading.checks import record_matches, state_check, unchanged_result
from coworkenv.spec import models as m
from coworkenv.spec.models import STATE_CHECKS

if TYPE_CHECKING:  # the runtime imports grading; grading only reads its workspace
    from coworkenv.runtime.workspace import Workspace
    from coworkenv.services.base import Record

_WHERE = (m.RecordExists, m.RecordAbsent, m.Count)
_DIRECT = (m.FieldEquals, m.FieldMatches, m.FieldNumber)
"""Checks evaluated on the live records when asked (one lookup, or a scan of the records' texts)."""


class CheckTracker:
    """State-check results and the step each first held, updated from the workspace's changes."""

    def __init__(self, checks: Iterable[Any], ws: Workspace) -> None:
        self.ws = ws
        self.checks = [c for c in checks if c.kind in STATE_CHECKS]
        self._baseline: dict[str, frozenset[str]] = {}  # where-check id -> initial records that match (step 0)
        self._watch: dict[tuple[str, str], list[Any]] = {}  # collection -> the checks that read its records
        for check in self.checks:
            if isinstance(check, _WHERE):
                self._baseline[check.id] = _initial_matches(ws, check.service, check.collection, check.where)
            self._watch.setdefault((check.service, check.collection), []).append(check)
        self.first_true: dict[str, int] = {}
        self._step0: dict[str, int] | None = None  # the checks true on the initial state: the same every reset
        self.reset()

    def reset(self) -> None:
        """Back to step 0: the baselines hold again, nothing has been seen."""
        # where checks: record id -> matches now (only where that differs from the baseline);
        # unchanged checks: record id -> True for each collateral change
        self._delta: dict[str, dict[str, bool]] = {c.id: {} for c in self.checks}
        self.first_true = {}
        self._epoch = self.ws.epoch
        self._seen = 0  # the deltas are relative to step 0, so every change since the reset counts
        self._dirty: set[tuple[str, str]] | None = None  # collections changed since the last record(); None: all

    def _sync(self) -> None:
        ws = self.ws
        if self._epoch != ws.epoch:  # the workspace was reset under us
            self.reset()
        if self._seen == len(ws.changes):
            return
        for service, collection, rid in dict.fromkeys(ws.changes[self._seen :]):
            for check in self._watch.get((service, collection), ()):
                self._refresh(check, rid)
            if self._dirty is not None:
                self._dirty.add((service, collection))
        self._seen = len(ws.changes)

    def _refresh(self, check: Any, rid: str) -> None:
        if isinstance(check, _DIRECT):
            return  # read directly when asked
        rec = self.ws.records(check.service, check.collection).get(rid)
        old = self.ws.initial_records(check.service, check.collection).get(rid)
        delta = self._delta[check.id]
        if isinstance(check, m.Unchanged):
            if self._collateral(check, rid, old, rec):
                delta[rid] = True
            else:
                delta.pop(rid, None)
            return
        initially = rid in self._baseline[check.id]
        if rec is not None and old is not None and _agree(old, rec, record_fields(check.where)):
            now = initially  # the fields the check reads are as they were at step 0
        else:
            now = rec is not None and record_matches(check.where, rec)
        if now == initially:
            delta.pop(rid, None)
        else:
            delta[rid] = now

    def _collateral(self, check: m.Unchanged, rid: str, old: Record | None, new: Record | None) -> bool:
        """:func:`collateral` of the record's initial and live versions, with ``allow`` on the initial record
        computed once per fixtures, and on the live one only when it differs in a field ``allow`` reads."""
        if old is new or old == new:
            return False
        if check.allow is None:
            return True
        if old is not None and _initially_allowed(self.ws, check, rid, old):
            return False
        if new is None or (old is not None and _agree(old, new, record_fields(check.allow))):
            return True  # ``allow`` holds of neither version (on the live one, as on the initial)
        return not record_matches(check.allow, new)

    def _count(self, check: Any) -> int:
        delta = self._delta[check.id]
        gained = sum(1 for v in delta.values() if v)
        return len(self._baseline[check.id]) + gained - (len(delta) - gained)

    def result(self, check: Any) -> tuple[bool, str]:
        """(passed, detail) of one state check on the live state, as :func:`state_check` gives it."""
        self._sync()
        if isinstance(check, m.RecordExists):
            n = self._count(check)
            return n > 0, f"{n} matching record(s)"
        if isinstance(check, m.RecordAbsent):
            n = self._count(check)
            return n == 0, f"{n} matching record(s)"
        if isinstance(check, m.Count):
            n = self._count(check)
            return COMPARE[check.op](n, check.value), f"count={n}"
        if isinstance(check, m.Unchanged):
            return unchanged_result(check, self._delta[check.id])
        return state_check(check, self.ws)  # _DIRECT checks

    def results(self) -> dict[str, tuple[bool, str]]:
        return {c.id: self.result(c) for c in self.checks}

    def record(self, step: int) -> None:
        """Note the checks that hold now and had not held before: they first held at ``step``. Only checks on a
        collection that changed since the last call can have turned true."""
        self._sync()
        if self._dirty is None and not self.ws.changes and self._step0 is not None:
            self.first_true = {cid: step for cid in self._step0}  # the initial state: known from the first reset
        else:
            dirty = self._dirty
            for check in self.checks if dirty is None else self._dirty_checks(dirty):
                if check.id not in self.first_true and self.result(check)[0]:
                    self.first_true[check.id] = step
            if dirty is None and not self.ws.changes:
                self._step0 = dict(self.first_true)
        self._dirty = set()

    def _dirty_checks(self, dirty: set[tuple[str, str]]) -> Iterable[Any]:
        for collection in dirty:
            yield from self._watch.get(collection, ())


_SCALARS = (str, int, float, bool)


def _agree(old: Record, new: Record, fields: frozenset[str] | None) -> bool:
    """Whether two records hold the same values in ``fields`` (None: unknown fields, so no), strictly: the same
    object, or equal scalars of the same type (``1 == 1.0 == True`` yet an expression may tell them apart)."""
    if fields is None:
        return False
    for name in fields:
        a, b = old.get(name), new.get(name)
        if a is not b and (type(a) is not type(b) or type(a) not in _SCALARS or a != b):
            return False
    return True


def _initially_allowed(ws: Workspace, check: m.Unchanged, rid: str, rec: Record) -> bool:
    """Whether an unchanged check's ``allow`` holds of an initial record: computed once per fixtures."""
    assert check.allow is not None
    key = ("allowed", check.service, check.collection, check.allow)
    memo = ws.initial_memo.get(key)
    if memo is None:
        memo = ws.initial_memo[key] = {}
    hit = memo.get(rid)
    if hit is None:
        hit = memo[rid] = record_matches(check.allow, rec)
    return hit


def _initial_matches(ws: Workspace, service: str, collection: str, where: str) -> frozenset[str]:
    """The initial records that satisfy ``where``: computed once per fixtures, as every episode starts there."""
    key = ("matches", service, collection, where)
    hit = ws.initial_memo.get(key)
    if hit is None:
        initial = ws.initial_records(service, collection)
        hit = ws.initial_memo[key] = frozenset(rid for rid, r in initial.items() if record_matches(where, r))
    return hit
