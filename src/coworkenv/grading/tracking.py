"""Live state-check results, kept current from the records that changed.

A state check judges each record of its collection on its own (:meth:`StateCheck.hit`), so a
write can only move the verdict through the records it changed. The tracker computes every
check's hits on the initial state once per fixtures, then reads the workspace's change log and
judges again only the changed records, keeping each check's differences from the start; a reset
drops them. The same two methods judge a whole collection (:meth:`StateCheck.judge`), so tracked
and recomputed results agree by construction.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from coworkenv.spec.checks import CheckModel, Hits, StateCheck
from coworkenv.spec.checks.base import Record

if TYPE_CHECKING:  # the runtime imports grading; grading only reads its workspace
    from coworkenv.runtime.workspace import Workspace

SNAPSHOT_SHARED = frozenset({"checks", "by_collection", "baseline"})
"""Attributes made with the tracker and never changed after: a fork snapshot keeps them, copying the rest."""
SNAPSHOT_NESTED = ("delta",)
"""Attributes whose items change during an episode: a fork snapshot copies them two levels deep."""


class CheckTracker:
    """State-check results and the step each first held, updated from the workspace's changes."""

    def __init__(self, checks: Iterable[CheckModel], ws: Workspace) -> None:
        self.ws = ws
        self.checks = [c for c in checks if isinstance(c, StateCheck)]
        self.by_collection: dict[tuple[str, str], list[StateCheck]] = {}
        for check in self.checks:
            self.by_collection.setdefault((check.service, check.collection), []).append(check)
        self.baseline = {c.id: _initial_hits(ws, c) for c in self.checks}
        self.reset()

    def reset(self) -> None:
        """Back to step 0: the initial hits hold again, nothing has been seen."""
        self.delta: dict[str, dict[str, bool]] = {c.id: {} for c in self.checks}
        self.count = {cid: len(hits) for cid, hits in self.baseline.items()}
        self.first_true: dict[str, int] = {}
        self.changed: set[tuple[str, str]] = set()
        self.fresh = True  # the first record() judges every check
        self.epoch = self.ws.epoch
        self.seen = 0

    def _advance(self) -> None:
        """Judge again the records changed since the last call, in every check of their collection."""
        ws = self.ws
        if self.epoch != ws.epoch:  # the workspace was reset or restored under us
            self.reset()
        changes = ws.changes
        if self.seen == len(changes):
            return
        for service, collection, rid in dict.fromkeys(changes[self.seen :]):
            group = self.by_collection.get((service, collection))
            if group is None:
                continue
            self.changed.add((service, collection))
            old = ws.initial_records(service, collection).get(rid)
            new = ws.records(service, collection).get(rid)
            for check in group:
                self._refresh(check, rid, old, new)
        self.seen = len(changes)

    def _refresh(self, check: StateCheck, rid: str, old: Record | None, new: Record | None) -> None:
        now = check.hit(rid, old, new)
        delta = self.delta[check.id]
        initially = rid in self.baseline[check.id]
        if now == delta.get(rid, initially):
            return
        self.count[check.id] += 1 if now else -1
        if now == initially:
            del delta[rid]
        else:
            delta[rid] = now

    def result(self, check: StateCheck) -> tuple[bool, str]:
        """(passed, detail) of one state check on the live state, as :meth:`StateCheck.judge` gives it."""
        self._advance()
        hits = Hits(self.baseline[check.id], self.delta[check.id], self.count[check.id])
        return check.verdict(hits, self.ws.records(check.service, check.collection))

    def results(self) -> dict[str, tuple[bool, str]]:
        return {c.id: self.result(c) for c in self.checks}

    def record(self, step: int) -> None:
        """Note the checks that hold now and had not held before: they first held at ``step``. Only a check whose
        collection changed since the last call can have turned."""
        self._advance()
        if self.fresh:
            candidates: Iterable[StateCheck] = self.checks
            self.fresh = False
        else:
            candidates = [c for key in self.changed for c in self.by_collection[key]]
        self.changed.clear()
        for check in candidates:
            if check.id not in self.first_true and self.result(check)[0]:
                self.first_true[check.id] = step


def _initial_hits(ws: Workspace, check: StateCheck) -> frozenset[str]:
    """The check's hits on the initial records: the same for every workspace of these fixtures, so kept once."""
    key = ("hits", check.model_dump_json(exclude={"id", "weight", "description", "required"}))
    hit = ws.initial_memo.get(key)
    if hit is None:
        initial = ws.initial_records(check.service, check.collection)
        hit = frozenset(rid for rid in check.candidates(initial, initial) if check.hit(rid, initial[rid], initial[rid]))
        ws.initial_memo[key] = hit
    return hit
