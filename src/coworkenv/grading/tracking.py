"""Incremental check tracking: the live result of every state check, kept current from the
records that changed rather than recomputed over the whole workspace.

A state check's result depends on the records of one collection. At construction (once
per environment, so once per spec's workspace) the tracker computes the step-0 picture:
for each ``where`` check, the initial records that match. During the episode it reads
the workspace's change log and re-evaluates a check only on the records a write
changed (through :func:`coworkenv.expr_fast.record_predicate`, the compiled form of
``record_matches``), keeping just the differences from step 0 and each where check's
live count; a reset drops them. The results
equal :func:`coworkenv.grading.checks.state_check` on the same state, always (the tests
compare both on random write sequences).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from coworkenv.expr import record_fields
from coworkenv.expr_fast import Predicate, record_predicate
from coworkenv.expr_ops import COMPARE
from coworkenv.grading.checks import state_check, unchanged_result
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
        self._count = {cid: len(ids) for cid, ids in self._baseline.items()}  # where check -> matching records now
        self.first_true = {}
        self._epoch = self.ws.epoch
        self._seen = 0  # the deltas are relative to step 0, so every change since the reset counts
        self._dirty: dict[_Watch, None] | None = None  # watches of collections changed since record(); None: all
        # per collection, which checks are open (see _Watch.settle); filled by the first record()
        self._open: dict[_Watch, Open] = {}
        self._pending: dict[tuple[_Watch, str], None] = {}  # records the settled checks have yet to see
        # (the episode's state lives in the tracker's own attributes, which a fork snapshot copies; a watch is shared)

    def _advance(self) -> None:
        """Read the changes made since the last call: bring each changed record up to date in every check of its
        collection (a :meth:`record` later looks at the collection's open checks)."""
        ws = self.ws
        if self._epoch != ws.epoch:  # the workspace was reset under us
            self.reset()
        changes = ws.changes
        seen = self._seen
        end = len(changes)
        if seen == end:
            return
        self._seen = end
        watches, dirty = self._watch, self._dirty
        for service, collection, rid in (changes[seen],) if end == seen + 1 else dict.fromkeys(changes[seen:]):
            watch = watches.get((service, collection))
            if watch is not None:
                watch.refresh(rid, self._delta, self._count, watch.wheres, watch.guards)
                if dirty is not None and self._open[watch].checks:
                    dirty[watch] = None

    def _sync(self) -> None:
        """Bring every check up to date: the new changes, and the records settled checks were spared."""
        self._advance()
        deltas, counts = self._delta, self._count
        for watch, rid in self._pending:  # again for the checks that had it: the same outcome
            watch.refresh(rid, deltas, counts, watch.wheres, watch.guards)
        self._pending.clear()

    def result(self, check: Any) -> tuple[bool, str]:
        """(passed, detail) of one state check on the live state, as :func:`state_check` gives it."""
        self._sync()
        if isinstance(check, m.RecordExists):
            n = self._count[check.id]
            return n > 0, f"{n} matching record(s)"
        if isinstance(check, m.RecordAbsent):
            n = self._count[check.id]
            return n == 0, f"{n} matching record(s)"
        if isinstance(check, m.Count):
            n = self._count[check.id]
            return COMPARE[check.op](n, check.value), f"count={n}"
        if isinstance(check, m.Unchanged):
            return unchanged_result(check, self._delta[check.id])
        return state_check(check, self.ws)  # field checks: read on the live records when asked (a lookup or a scan)

    def results(self) -> dict[str, tuple[bool, str]]:
        return {c.id: self.result(c) for c in self.checks}

    def record(self, step: int) -> None:
        """Note the checks that hold now and had not held before: they first held at ``step``. Only checks on a
        collection that changed since the last call can have turned true, and only checks that have not held yet
        are brought up to date here: those that have held already (``first_true``) are settled, and see the
        changed records when a result is asked for (:meth:`_sync`). Runs after every write: the changes are read
        here, not through a call."""
        ws = self.ws
        if self._epoch != ws.epoch:  # the workspace was reset under us
            self.reset()
        dirty = self._dirty
        if dirty is None:
            self._record_all(step)
            return
        changes = ws.changes
        seen = self._seen
        end = len(changes)
        if seen != end:
            self._seen = end
            watches, opened = self._watch, self._open
            for service, collection, rid in (changes[seen],) if end == seen + 1 else dict.fromkeys(changes[seen:]):
                watch = watches.get((service, collection))
                if watch is None:
                    continue
                state = opened[watch]
                moved = state.refreshing and watch.refresh(rid, self._delta, self._count, state.wheres, state.guards)
                if state.deferring:
                    self._pending[(watch, rid)] = None
                if moved or state.direct or rid in state.keyed:  # else no open check can have turned
                    dirty[watch] = None
        if not dirty:
            return
        first, counts, deltas = self.first_true, self._count, self._delta
        for watch in dirty:  # the open checks of the changed collections that hold now first held at ``step``
            turned = False
            for cid, check, kind in self._open[watch].checks:
                if kind == _UNCHANGED:
                    holds = not deltas[cid]
                elif kind == _EXISTS:
                    holds = counts[cid] > 0
                elif kind == _ABSENT:
                    holds = counts[cid] == 0
                elif kind == _COUNT:
                    holds = COMPARE[check.op](counts[cid], check.value)
                elif kind == _FIELD:  # as state_check judges it, without its detail text
                    rec = watch.table.get(check.record_id)
                    holds = rec is not None and rec.get(check.field) == check.value
                else:
                    holds = state_check(check, self.ws)[0]
                if holds:
                    first[cid] = step
                    turned = True
            if turned:
                self._open[watch] = watch.settle(first)
        dirty.clear()

    def _record_all(self, step: int) -> None:
        """The first :meth:`record` after a reset: every check is judged (on the initial state, known from the
        first episode), and which are open is worked out per collection."""
        self._sync()
        if not self.ws.changes and self._step0 is not None:
            self.first_true = {cid: step for cid in self._step0}  # the initial state: known from the first reset
            self._open = {watch: watch.step0 for watch in self._watch.values()}  # type: ignore[misc]
        else:
            for check in self.checks:
                if check.id not in self.first_true and self.result(check)[0]:
                    self.first_true[check.id] = step
            initial = not self.ws.changes
            if initial:
                self._step0 = dict(self.first_true)
            self._open = {watch: watch.settle(self.first_true, keep=initial) for watch in self._watch.values()}
        self._dirty = {}


class Open(NamedTuple):
    """A collection's open checks (not held yet) and what a write to it needs to do about them.

    An open check can turn only when what it reads moved: a where check's count or an unchanged check's
    differences (which the write's refresh reports), a field check's record (``keyed``); other kinds are looked
    at after every write (``direct``)."""

    checks: list[Any]  # (id, check, kind) of the open checks
    wheres: list[Any]  # the open where checks, as _Watch.wheres lists them
    guards: list[Any]  # the open unchanged checks, as _Watch.guards lists them
    deferring: bool  # some where or unchanged check is settled: a changed record waits for it in _pending
    refreshing: bool  # some where or unchanged check is open: a changed record is evaluated at the write
    keyed: frozenset[str]  # the records the open field checks read
    direct: bool  # some open check is of another kind


_EXISTS, _ABSENT, _COUNT, _UNCHANGED, _FIELD, _DIRECT_KIND = range(6)
_NO_RECORDS: frozenset[str] = frozenset()
_KINDS = (
    (m.RecordExists, _EXISTS),
    (m.RecordAbsent, _ABSENT),
    (m.Count, _COUNT),
    (m.Unchanged, _UNCHANGED),
    (m.FieldEquals, _FIELD),
)


class _Watch:
    """One collection's state checks, made ready once per environment: for a changed record, the where checks
    to re-evaluate against their step-0 matches and the unchanged checks against the initial record; and the
    checks that may have turned true, with their kind. Holds the live and the initial table (a workspace keeps
    its table objects for its lifetime)."""

    __slots__ = ("checks", "direct", "guards", "initial", "keyed", "step0", "table", "wheres")

    def __init__(self, ws: Workspace, key: tuple[str, str], checks: list[Any], baseline: dict[str, frozenset[str]]):
        service, collection = key
        self.table = ws.records(service, collection)  # a collection a workspace lacks stays empty: any {} will do
        self.initial = ws.initial_records(service, collection)
        self.wheres = [
            (c.id, record_predicate(c.where), record_fields(c.where), baseline[c.id])
            for c in checks
            if isinstance(c, _WHERE)
        ]
        self.guards = [
            (c.id, _allowed(c.allow), _fields(c.allow), _allow_memo(ws, service, collection, c.allow))
            for c in checks
            if isinstance(c, m.Unchanged)
        ]
        self.checks = [(c.id, c, next((k for t, k in _KINDS if isinstance(c, t)), _DIRECT_KIND)) for c in checks]
        self.keyed = [(cid, check.record_id) for cid, check, kind in self.checks if kind == _FIELD]
        self.direct = [cid for cid, _, kind in self.checks if kind == _DIRECT_KIND]
        self.step0: Open | None = None  # settle() on the initial state's results (the same every episode), kept

    def settle(self, first_true: dict[str, int], *, keep: bool = False) -> Open:
        """Which checks are open (have not held yet: brought up to date at every write) and which are settled;
        ``keep``: these are the initial state's."""
        wheres = [w for w in self.wheres if w[0] not in first_true]
        guards = [g for g in self.guards if g[0] not in first_true]
        state = Open(
            [c for c in self.checks if c[0] not in first_true],
            wheres,
            guards,
            len(wheres) < len(self.wheres) or len(guards) < len(self.guards),
            bool(wheres or guards),
            frozenset([rid for cid, rid in self.keyed if cid not in first_true]) if self.keyed else _NO_RECORDS,
            any([cid not in first_true for cid in self.direct]) if self.direct else False,
        )
        if keep:
            self.step0 = state
        return state

    def refresh(
        self, rid: str, deltas: dict[str, dict[str, bool]], counts: dict[str, int], wheres: list[Any], guards: list[Any]
    ) -> bool:
        """Bring the differences from step 0 (and each where check's count) of the checks in ``wheres`` and
        ``guards`` up to date for ``rid``; whether a count or an unchanged check's differences moved. Idempotent:
        the outcome depends on the record now and at step 0 only."""
        rec = self.table.get(rid)
        old = self.initial.get(rid)
        moved = False
        for cid, matches, fields, baseline in wheres:
            initially = rid in baseline
            if rec is None:
                now = False
            elif old is not None and _agree(old, rec, fields):
                now = initially  # the fields the check reads are as they were at step 0
            else:
                now = matches(rec)
            delta = deltas[cid]
            before = delta.get(rid, initially)
            if now is before:
                continue
            counts[cid] += 1 if now else -1
            moved = True
            if now is initially:
                del delta[rid]
            else:
                delta[rid] = now
        if guards:
            changed = old is not rec and old != rec
            for cid, allowed, fields, memo in guards:
                delta = deltas[cid]
                had = rid in delta
                if changed and _collateral(rid, old, rec, allowed, fields, memo):
                    delta[rid] = True
                    moved = moved or not had
                elif had:
                    del delta[rid]
                    moved = True
        return moved


def _collateral(
    rid: str,
    old: Record | None,
    new: Record | None,
    allowed: Predicate | None,
    fields: frozenset[str] | None,
    memo: dict[str, bool],
) -> bool:
    """Whether a changed record is a collateral change, as :func:`collateral` decides it: ``allow`` on the initial
    record computed once per fixtures (``memo``), and on the live one only when it differs in a field ``allow``
    reads."""
    if allowed is None:
        return True
    if old is not None:
        was = memo.get(rid)
        if was is None:
            was = memo[rid] = allowed(old)
        if was:
            return False
    if new is None or (old is not None and _agree(old, new, fields)):
        return True  # ``allow`` holds of neither version (on the live one, as on the initial)
    return not allowed(new)


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


def _allowed(allow: str | None) -> Predicate | None:
    return None if allow is None else record_predicate(allow)


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
        matches = record_predicate(where)
        hit = ws.initial_memo[key] = frozenset(rid for rid, r in initial.items() if matches(r))
    return hit
