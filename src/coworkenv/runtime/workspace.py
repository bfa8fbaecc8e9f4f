"""The Workspace: the state of every service in one episode.

Holds the initial fixtures (validated once) and the live state. Because services write
copy-on-write, a reset copies only the outer dicts, and a diff compares records by
identity before equality.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from coworkenv.services.base import Collections, Record, Service
from coworkenv.services.registry import service_class
from coworkenv.spec.models import Fixtures, Mutation

State = dict[str, Collections]


class Workspace:
    def __init__(self, fixtures: Fixtures) -> None:
        self.initial: State = {}
        for name, collections in fixtures.items():
            self.initial[name] = service_class(name).normalize_fixtures(collections)
        self.state: State = {}
        self.services: dict[str, Service] = {}
        self.reset()

    def reset(self) -> None:
        self.state = {name: {c: dict(recs) for c, recs in colls.items()} for name, colls in self.initial.items()}
        self.services = {name: service_class(name)(db) for name, db in self.state.items()}

    def records(self, service: str, collection: str) -> dict[str, Record]:
        return self.state.get(service, {}).get(collection, {})

    def initial_records(self, service: str, collection: str) -> dict[str, Record]:
        return self.initial.get(service, {}).get(collection, {})

    def apply(self, mutation: Mutation) -> None:
        """Apply an event's mutation directly (events bypass tools and policies)."""
        svc = self.services[mutation.service]
        if mutation.op == "insert":
            assert mutation.record is not None
            rec = svc._validated(mutation.collection, dict(mutation.record))
            svc.db[mutation.collection][rec["id"]] = rec
        elif mutation.op == "update":
            assert mutation.id is not None and mutation.record is not None
            svc.update(mutation.collection, mutation.id, dict(mutation.record))
        else:
            assert mutation.id is not None
            svc.delete(mutation.collection, mutation.id)

    def snapshot(self) -> State:
        """A copy of the state that later writes cannot change."""
        return {name: {c: dict(recs) for c, recs in colls.items()} for name, colls in self.state.items()}

    def diff(self) -> dict[str, Any]:
        """Records added, removed and changed since the initial state, per service.collection."""
        out: dict[str, Any] = {}
        for name, colls in self.state.items():
            for coll, recs in colls.items():
                before = self.initial[name].get(coll, {})
                added = sorted(set(recs) - set(before))
                removed = sorted(set(before) - set(recs))
                changed = sorted(
                    rid for rid, rec in recs.items() if rid in before and rec is not before[rid] and rec != before[rid]
                )
                if added or removed or changed:
                    out[f"{name}.{coll}"] = {
                        "added": [recs[r] for r in added],
                        "removed": removed,
                        "changed": {r: _changed_fields(before[r], recs[r]) for r in changed},
                    }
        return out

    def state_hash(self) -> str:
        """A stable content hash of the live state."""
        blob = json.dumps(self.state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()


def _changed_fields(old: Record, new: Record) -> dict[str, list[Any]]:
    keys = sorted(set(old) | set(new))
    return {k: [old.get(k), new.get(k)] for k in keys if old.get(k) != new.get(k)}
