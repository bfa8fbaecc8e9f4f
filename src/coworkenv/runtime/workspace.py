"""The Workspace: the state of every service in one episode.

Holds the initial fixtures (validated once) and the live state. Every record change goes
through a service's ``store``, which reports it here: the workspace keeps the keys changed
since the reset, so a reset puts back only those records, a diff compares only those, and
the state hash and the check tracker update from them. What a step costs therefore depends
on what it changed, not on how big the workspace is.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from coworkenv.runtime.digest import InitialDigest, Key, StateDigest
from coworkenv.services.base import Collections, Record, Service
from coworkenv.services.registry import Declared, service_class
from coworkenv.spec.models import Fixtures, Mutation

State = dict[str, Collections]
_CACHE_SIZE = 64


@dataclass(frozen=True)
class Prepared:
    """What every workspace of the same fixtures shares: the validated initial records and their digests."""

    fixtures: Fixtures  # held, so its id cannot be reused while the entry lives
    declared: Declared  # the service declarations the state was validated by
    state: State
    digest: InitialDigest
    memo: dict[Any, Any] = field(default_factory=dict)  # facts about the initial state, e.g. which records match


_PREPARED: OrderedDict[int, Prepared] = OrderedDict()


def _prepared(fixtures: Fixtures, declared: Declared) -> Prepared:
    """The fixtures validated once per spec, not once per episode (a rollout builds a workspace per episode).

    Keyed by identity: a spec is data that nothing edits in place, so the same fixtures object means
    the same records. Only the most recent few are kept."""
    hit = _PREPARED.get(id(fixtures))
    if hit is not None and hit.fixtures is fixtures and hit.declared is declared:
        _PREPARED.move_to_end(id(fixtures))
        return hit
    state = {name: service_class(name, declared).normalize_fixtures(colls) for name, colls in fixtures.items()}
    entry = Prepared(fixtures, declared, state, InitialDigest(state))
    _PREPARED[id(fixtures)] = entry
    while len(_PREPARED) > _CACHE_SIZE:
        _PREPARED.popitem(last=False)
    return entry


def prepared_state(fixtures: Fixtures, declared: Declared = None) -> State:
    """The fixtures' validated initial records, kept for the workspaces built from them next (the verifier's
    fixture check validates them once for both); raises ValueError naming a record that does not fit."""
    return _prepared(fixtures, declared).state


class Workspace:
    def __init__(self, fixtures: Fixtures, declared: Declared = None) -> None:
        """``declared``: the spec's declared services (their classes come from the declarations)."""
        prepared = _prepared(fixtures, declared)
        self.initial: State = prepared.state
        self.initial_memo = prepared.memo  # shared by every workspace of these fixtures: facts about ``initial``
        self.state: State = {name: {c: dict(recs) for c, recs in colls.items()} for name, colls in self.initial.items()}
        self.services: dict[str, Service] = {
            name: service_class(name, declared)(db, self._changed) for name, db in self.state.items()
        }
        self.changes: list[Key] = []  # every record change since the reset, in order (repeats included)
        self.epoch = 0  # counts resets: a reader of ``changes`` starts over when it moves
        self._reordered: set[tuple[str, str]] = set()  # collections that lost an initial record
        self._digest = StateDigest(prepared.digest)
        self._hashed = 0  # how many of ``changes`` the digest has folded in

    def _changed(self, service: str, collection: str, record_id: str, removed: bool) -> None:
        self.changes.append((service, collection, record_id))
        if removed and record_id in self.initial[service][collection]:
            self._reordered.add((service, collection))

    def reset(self) -> None:
        """Back to the initial state by putting back what changed (a deletion puts back its whole collection,
        so records keep their order)."""
        for service, collection in self._reordered:
            self.services[service].restore(collection, self.initial[service][collection])
        for service, collection, rid in self.changed_keys():
            if (service, collection) not in self._reordered:
                original = self.initial[service][collection].get(rid)
                self.services[service].store(collection, rid, original, notify=False)
        self.changes.clear()
        self._reordered.clear()
        self._digest.reset()
        self._hashed = 0
        self.epoch += 1

    def changed_keys(self) -> list[Key]:
        """The records changed since the reset, each once, in order of first change."""
        return list(dict.fromkeys(self.changes))

    def records(self, service: str, collection: str) -> dict[str, Record]:
        return self.state.get(service, {}).get(collection, {})

    def initial_records(self, service: str, collection: str) -> dict[str, Record]:
        return self.initial.get(service, {}).get(collection, {})

    def apply(self, mutation: Mutation) -> None:
        """Apply an event's mutation directly (events bypass tools and rules)."""
        svc = self.services[mutation.service]
        if mutation.op == "insert":
            assert mutation.record is not None
            rec = svc._validated(mutation.collection, dict(mutation.record))
            svc.store(mutation.collection, rec["id"], rec)
        elif mutation.op == "update":
            assert mutation.id is not None and mutation.record is not None
            svc.update(mutation.collection, mutation.id, dict(mutation.record))
        else:
            assert mutation.id is not None
            svc.delete(mutation.collection, mutation.id)

    def snapshot(self) -> State:
        """A copy of the state that later writes cannot change."""
        return {name: {c: dict(recs) for c, recs in colls.items()} for name, colls in self.state.items()}

    def diff(self) -> dict[str, object]:
        """Records added, removed and changed since the initial state, per service.collection."""
        touched: dict[tuple[str, str], set[str]] = {}
        for service, collection, rid in self.changes:
            touched.setdefault((service, collection), set()).add(rid)
        out: dict[str, object] = {}
        for name, colls in self.state.items():
            for coll, recs in colls.items():
                rids = touched.get((name, coll))
                if not rids:
                    continue
                before = self.initial[name].get(coll, {})
                added = sorted(r for r in rids if r in recs and r not in before)
                removed = sorted(r for r in rids if r in before and r not in recs)
                changed = sorted(
                    r for r in rids if r in recs and r in before and recs[r] is not before[r] and recs[r] != before[r]
                )
                if added or removed or changed:
                    out[f"{name}.{coll}"] = {
                        "added": [recs[r] for r in added],
                        "removed": removed,
                        "changed": {r: _changed_fields(before[r], recs[r]) for r in changed},
                    }
        return out

    def state_hash(self) -> str:
        """A stable content hash of the live state: equal states, equal hashes (see :mod:`.digest`)."""
        self._fold()
        return self._digest.hexdigest()

    def state_change(self) -> int:
        """The live state's change from the initial state, as a number: two workspaces of the same fixtures hold
        equal states exactly when their changes are equal, which costs a digest of what changed, not of every
        record (see :mod:`.digest`)."""
        self._fold()
        return self._digest.change

    def _fold(self) -> None:
        """Fold the changes made since the last hash into the digest."""
        if self._hashed < len(self.changes):
            self._digest.update(self.state, self.changes[self._hashed :])
            self._hashed = len(self.changes)


def _changed_fields(old: Record, new: Record) -> dict[str, list[object]]:
    keys = sorted(set(old) | set(new))
    return {k: [old.get(k), new.get(k)] for k in keys if old.get(k) != new.get(k)}
