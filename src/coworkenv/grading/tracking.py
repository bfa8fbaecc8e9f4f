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


class CheckTracker:
    """State-check results and the step each first held, updated from the workspace's changes."""

    def __init__(self, checks: Iterable[Any], ws: Workspace) -> None:
        self.ws = ws
        self.checks = [c for c in checks if c.kind in STATE_CHECKS]
        self._baseline: dict[str, frozenset[str]] = {}  # where-check id -> initial records that match (step 0)
        by_collection: dict[tuple[str, str], list[Any]] = {}
        for check in self.checks:
            if isinstance(check, _WHERE):
                self._baseline[check.id] = _initial_matches(ws, check.service, check.collection, check.where)
            by_collection.setdefault((check.service, check.collection), []).append(check)
        self._watch = {key: _Watch(ws, key, group, self._baseline) for key, group in by_collection.items()}
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
        changes = ws.changes
        if self._seen == len(changes):
            return
        watches, dirty, deltas = self._watch, self._dirty, self._delta
        for service, collection, rid in dict.fromkeys(changes[self._seen :]):
            key = (service, collection)
            watch = watches.get(key)
            if watch is not None:
                watch.refresh(rid, deltas)
            if dirty is not None:
                dirty.add(key)
        self._seen = len(changes)

    def _count(self, check_id: str) -> int:
        delta = self._delta[check_id]
        gained = sum(1 for v in delta.values() if v)
        return len(self._baseline[check_id]) + gained - (len(delta) - gained)

    def result(self, check: Any) -> tuple[bool, str]:
        """(passed, detail) of one state check on the live state, as :func:`state_check` gives it."""
        self._sync()
        if isinstance(check, m.RecordExists):
            n = self._count(check.id)
            return n > 0, f"{n} matching record(s)"
        if isinstance(check, m.RecordAbsent):
            n = self._count(check.id)
            return n == 0, f"{n} matching record(s)"
        if isinstance(check, m.Count):
            n = self._count(check.id)
            return COMPARE[check.op](n, check.value), f"count={n}"
        if isinstance(check, m.Unchanged):
            return unchanged_result(check, self._delta[check.id])
        return state_check(check, self.ws)  # field checks: read on the live records when asked (a lookup or a scan)

    def results(self) -> dict[str, tuple[bool, str]]:
        return {c.id: self.result(c) for c in self.checks}

    def record(self, step: int) -> None:
        """Note the checks that hold now and had not held before: they first held at ``step``. Only checks on a
        collection that changed since the last call can have turned true."""
        self._sync()
        dirty = self._dirty
        if dirty is None:
            if not self.ws.changes and self._step0 is not None:
                self.first_true = {cid: step for cid in self._step0}  # the initial state: known from the first reset
            else:
                for check in self.checks:
                    if check.id not in self.first_true and self.result(check)[0]:
                        self.first_true[check.id] = step
                if not self.ws.changes:
                    self._step0 = dict(self.first_true)
        else:
            first = self.first_true
            for key in dirty:
                watch = self._watch.get(key)
                if watch is not None:
                    for cid, check, kind in watch.checks:
                        if cid not in first and self._holds(cid, check, kind):
                            first[cid] = step
        self._dirty = set()

    def _holds(self, check_id: str, check: Any, kind: int) -> bool:
        """``result(check)[0]`` once the changes are read, without its detail text (``kind``: see :class:`_Watch`)."""
        if kind == _UNCHANGED:
            return not self._delta[check_id]
        if kind == _DIRECT_KIND:
            return state_check(check, self.ws)[0]
        n = self._count(check_id)
        if kind == _EXISTS:
            return n > 0
        if kind == _ABSENT:
            return n == 0
        return COMPARE[check.op](n, check.value)


_EXISTS, _ABSENT, _COUNT, _UNCHANGED, _DIRECT_KIND = range(5)
_KINDS = ((m.RecordExists, _EXISTS), (m.RecordAbsent, _ABSENT), (m.Count, _COUNT), (m.Unchanged, _UNCHANGED))


class _Watch:
    """One collection's state checks, made ready once per environment: for a changed record, the where checks
    to re-evaluate against their step-0 matches and the unchanged checks against the initial record; and the
    checks that may have turned true, with their kind. Holds the live and the initial table (a workspace keeps
    its table objects for its lifetime)."""

    __slots__ = ("checks", "guards", "initial", "table", "wheres")

    def __init__(self, ws: Workspace, key: tuple[str, str], checks: list[Any], baseline: dict[str, frozenset[str]]):
        service, collection = key
        self.table = ws.records(service, collection)  # a collection a workspace lacks stays empty: any {} will do
        self.initial = ws.initial_records(service, collection)
        self.wheres = [(c.id, c.where, record_fields(c.where), baseline[c.id]) for c in checks if isinstance(c, _WHERE)]
        self.guards = [
            (c.id, c.allow, _fields(c.allow), _allow_memo(ws, service, collection, c.allow))
            for c in checks
            if isinstance(c, m.Unchanged)
        ]
        self.checks = [(c.id, c, next((k for t, k in _KINDS if isinstance(c, t)), _DIRECT_KIND)) for c in checks]

    def refresh(self, rid: str, deltas: dict[str, dict[str, bool]]) -> None:
        """Bring every check's differences from step 0 up to date for the record ``rid``."""
        rec = self.table.get(rid)
        old = self.initial.get(rid)
        for cid, where, fields, baseline in self.wheres:
            initially = rid in baseline
            if rec is not None and old is not None and _agree(old, rec, fields):
                now = initially  # the fields the check reads are as they were at step 0
            else:
                now = rec is not None and record_matches(where, rec)
            if now == initially:
                deltas[cid].pop(rid, None)
            else:
                deltas[cid][rid] = now
        if self.guards:
            changed = old is not rec and old != rec
            for cid, allow, fields, memo in self.guards:
                if changed and _collateral(rid, old, rec, allow, fields, memo):
                    deltas[cid][rid] = True
                else:
                    deltas[cid].pop(rid, None)


def _collateral(
    rid: str,
    old: Record | None,
    new: Record | None,
    allow: str | None,
    fields: frozenset[str] | None,
    memo: dict[str, bool],
) -> bool:
    """Whether a changed record is a collateral change, as :func:`collateral` decides it: ``allow`` on the initial
    record computed once per fixtures (``memo``), and on the live one only when it differs in a field ``allow``
    reads."""
    if allow is None:
        return True
    if old is not None:
        allowed = memo.get(rid)
        if allowed is None:
            allowed = memo[rid] = record_matches(allow, old)
        if allowed:
            return False
    if new is None or (old is not None and _agree(old, new, fields)):
        return True  # ``allow`` holds of neither version (on the live one, as on the initial)
    return not record_matches(allow, new)


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


def _fields(allow: str | None) -> frozenset[str] | None:
    return None if allow is None else record_fields(allow)


def _allow_memo(ws: Workspace, service: str, collection: str, allow: str | None) -> dict[str, bool]:
    """Whether an unchanged check's ``allow`` holds of each initial record, as far as asked: kept once per
    fixtures."""
    if allow is None:
        return {}
    key = ("allowed", service, collection, allow)
    memo = ws.initial_memo.get(key)
    if memo is None:
        memo = ws.initial_memo[key] = {}
    return memo


def _initial_matches(ws: Workspace, service: str, collection: str, where: str) -> frozenset[str]:
    """The initial records that satisfy ``where``: computed once per fixtures, as every episode starts there."""
    key = ("matches", service, collection, where)
    hit = ws.initial_memo.get(key)
    if hit is None:
        initial = ws.initial_records(service, collection)
        hit = ws.initial_memo[key] = frozenset(rid for rid, r in initial.items() if record_matches(where, r))
    return hit
