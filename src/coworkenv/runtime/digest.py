"""The incremental state hash: a digest per record, combined so that hashing costs what changed.

Each record contributes ``blake2b(service, collection, id, record)`` as a 512-bit integer; the
state's digest is the sum of the contributions modulo 2**512 (a set hash: the ids are
unique, so equal states give equal sums and a change to any record changes the sum).
A write replaces one contribution, so keeping the hash current costs one record's JSON,
not the workspace's. Records are replaced, never mutated, so a record object seen before
keeps its digest: a reset that puts the initial records back recomputes nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from coworkenv.services.base import Record

Key = tuple[str, str, str]  # service, collection, record id
State = dict[str, dict[str, dict[str, Record]]]
MODULUS = 1 << 512
_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_digest(key: Key, rec: Record) -> int:
    """One record's contribution: its place (service, collection, id) and its content."""
    blob = _JSON.encode([*key, rec]).encode()
    return int.from_bytes(hashlib.blake2b(blob, digest_size=64).digest(), "big")


class StateDigest:
    """The running hash of a workspace whose changes are reported key by key."""

    def __init__(self, initial: State) -> None:
        self._layout = _JSON.encode(sorted((s, sorted(colls)) for s, colls in initial.items())).encode()
        self._initial = initial
        self._initial_parts: dict[Key, int] | None = None  # computed on first use: many episodes never hash
        self._initial_sum = 0
        self._parts: dict[Key, int] = {}  # contributions that differ from the initial state's
        self._sum = 0
        self._hex: str | None = None

    def _ensure_initial(self) -> dict[Key, int]:
        if self._initial_parts is None:
            parts = {
                (s, c, rid): record_digest((s, c, rid), rec)
                for s, colls in self._initial.items()
                for c, recs in colls.items()
                for rid, rec in recs.items()
            }
            self._initial_parts = parts
            self._initial_sum = sum(parts.values()) % MODULUS
            self._sum = (self._sum + self._initial_sum) % MODULUS
        return self._initial_parts

    def reset(self) -> None:
        self._parts.clear()
        self._sum = self._initial_sum
        self._hex = None

    def update(self, state: State, keys: Iterable[Key]) -> None:
        """Fold in the current content of the records under ``keys`` (changed, added or removed)."""
        initial = self._ensure_initial()
        for key in keys:
            service, collection, rid = key
            rec = state[service][collection].get(rid)
            old = self._parts.get(key, initial.get(key, 0))
            if rec is None:
                new = 0
            elif rec is self._initial[service][collection].get(rid):
                new = initial[key]
            else:
                new = record_digest(key, rec)
            self._parts[key] = new
            self._sum = (self._sum + new - old) % MODULUS
        self._hex = None

    def hexdigest(self) -> str:
        self._ensure_initial()
        if self._hex is None:
            self._hex = hashlib.sha256(self._layout + self._sum.to_bytes(64, "big")).hexdigest()
        return self._hex


def full_digest(state: State) -> str:
    """The same hash computed from scratch: the reference the incremental one must always equal."""
    parts = (
        record_digest((s, c, rid), rec)
        for s, colls in state.items()
        for c, recs in colls.items()
        for rid, rec in recs.items()
    )
    layout = _JSON.encode(sorted((s, sorted(colls)) for s, colls in state.items())).encode()
    return hashlib.sha256(layout + (sum(parts) % MODULUS).to_bytes(64, "big")).hexdigest()
