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
    blob = _JSON.encode([*key, rec]).encode("utf-8", "surrogatepass")  # model text may hold lone surrogates
    return int.from_bytes(hashlib.blake2b(blob, digest_size=64).digest(), "big")


class InitialDigest:
    """The contributions of an initial state's records: computed once, on first use (many episodes never
    hash), and shared by every workspace built from the same fixtures."""

    def __init__(self, initial: State) -> None:
        self.state = initial
        self.layout = _JSON.encode(sorted((s, sorted(colls)) for s, colls in initial.items())).encode()
        self._parts: dict[Key, int] | None = None
        self._total = 0

    @property
    def parts(self) -> dict[Key, int]:
        if self._parts is None:
            self._parts = {
                (s, c, rid): record_digest((s, c, rid), rec)
                for s, colls in self.state.items()
                for c, recs in colls.items()
                for rid, rec in recs.items()
            }
            self._total = sum(self._parts.values()) % MODULUS
        return self._parts

    @property
    def total(self) -> int:
        """The initial state's sum of contributions."""
        self.parts  # noqa: B018 - computed on first use
        return self._total


class StateDigest:
    """The running hash of a workspace whose changes are reported key by key."""

    def __init__(self, initial: InitialDigest) -> None:
        self._initial = initial
        self._parts: dict[Key, int] = {}  # contributions that differ from the initial state's
        self._delta = 0  # the sum of (current - initial) contributions
        self._hex: str | None = None

    def reset(self) -> None:
        self._parts.clear()
        self._delta = 0
        self._hex = None

    def update(self, state: State, keys: Iterable[Key]) -> None:
        """Fold in the current content of the records under ``keys`` (changed, added or removed; a key given twice
        is folded in once: only the record's content now counts)."""
        initial = self._initial.parts
        for key in dict.fromkeys(keys):
            service, collection, rid = key
            rec = state[service][collection].get(rid)
            old = self._parts.get(key, initial.get(key, 0))
            if rec is None:
                new = 0
            elif rec is self._initial.state[service][collection].get(rid):
                new = initial[key]
            else:
                new = record_digest(key, rec)
            self._parts[key] = new
            self._delta = (self._delta + new - old) % MODULUS
        self._hex = None

    def hexdigest(self) -> str:
        if self._hex is None:
            total = (self._initial.total + self._delta) % MODULUS
            self._hex = hashlib.sha256(self._initial.layout + total.to_bytes(64, "big")).hexdigest()
        return self._hex


def full_digest(state: State) -> str:
    """The same hash computed from scratch: the reference the incremental one must always equal."""
    return StateDigest(InitialDigest(state)).hexdigest()
