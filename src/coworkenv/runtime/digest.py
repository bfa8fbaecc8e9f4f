"""The incremental state hash: a digest per record, combined so that hashing costs what changed.

Each record contributes ``blake2b(service, collection, id, record)`` as a 512-bit integer; the
state's digest is the sum of the contributions modulo 2**512 (a set hash: the ids are
unique, so equal states give equal sums and a change to any record changes the sum).
A write replaces one contribution, so keeping the hash current costs one record's JSON,
not the workspace's. Records are replaced, never mutated, so a record object seen before
keeps its digest: a reset that puts the initial records back recomputes nothing. The initial
records' contributions are computed on first use, one by one: the verifier compares a probe run's
final state with the reference run's by their changes alone, which hash only the records changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from coworkenv.services.base import Record
from coworkenv.spec.io import compact_bytes

Key = tuple[str, str, str]  # service, collection, record id
State = dict[str, dict[str, dict[str, Record]]]
MODULUS = 1 << 512


def record_digest(key: Key, rec: Record) -> int:
    """One record's contribution: its place (service, collection, id) and its content."""
    blob = compact_bytes([*key, rec])  # model text may hold lone surrogates: they pass through
    return int.from_bytes(hashlib.blake2b(blob, digest_size=64).digest(), "big")


class InitialDigest:
    """The contributions of an initial state's records, each computed on first use and shared by every workspace
    built from the same fixtures: comparing two states of those fixtures reads only the records they changed, and
    only a full hash (:meth:`StateDigest.hexdigest`) reads them all."""

    def __init__(self, initial: State) -> None:
        self.state = initial
        self.layout = compact_bytes(sorted((s, sorted(colls)) for s, colls in initial.items()))
        self._parts: dict[Key, int] = {}
        self._total: int | None = None

    def part(self, key: Key) -> int:
        """The initial record's contribution under ``key`` (0 where the initial state has none)."""
        got = self._parts.get(key)
        if got is None:
            service, collection, rid = key
            rec = self.state.get(service, {}).get(collection, {}).get(rid)
            got = self._parts[key] = 0 if rec is None else record_digest(key, rec)
        return got

    @property
    def total(self) -> int:
        """The initial state's sum of contributions."""
        if self._total is None:
            self._total = (
                sum(
                    self.part((s, c, rid))
                    for s, colls in self.state.items()
                    for c, recs in colls.items()
                    for rid in recs
                )
                % MODULUS
            )
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
        initial = self._initial
        for key in dict.fromkeys(keys):
            service, collection, rid = key
            rec = state[service][collection].get(rid)
            old = self._parts[key] if key in self._parts else initial.part(key)
            if rec is None:
                new = 0
            elif rec is initial.state[service][collection].get(rid):
                new = initial.part(key)
            else:
                new = record_digest(key, rec)
            self._parts[key] = new
            self._delta = (self._delta + new - old) % MODULUS
        self._hex = None

    @property
    def change(self) -> int:
        """The sum of (current - initial) contributions: two states of the same initial state have equal sums, and
        so equal hexdigests, exactly when their changes are equal, and the change hashes only changed records."""
        return self._delta

    def hexdigest(self) -> str:
        if self._hex is None:
            total = (self._initial.total + self._delta) % MODULUS
            self._hex = hashlib.sha256(self._initial.layout + total.to_bytes(64, "big")).hexdigest()
        return self._hex


def full_digest(state: State) -> str:
    """The same hash computed from scratch: the reference the incremental one must always equal."""
    return StateDigest(InitialDigest(state)).hexdigest()
