"""A service's lookup indexes: field value -> the ids of the records holding it, each bucket in the table's order.

Kept current by ``Service.store`` record by record, so a lookup costs what it finds; the table's order is
kept through ranks (record id -> place in the table) because tools return a bucket as it is, and an order
that depended on the writes before (a record moved away and back, an earlier episode in a reused
environment) would make what the agent sees depend on history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coworkenv.services.base import Record


def index_key(value: object, lower: bool) -> object:
    """The key a value is indexed under (lower-cased text for case-blind lookups)."""
    return value.lower() if lower and isinstance(value, str) else value


def reposition(positions: dict[str, int], table: dict[str, Record], rid: str, removed: bool) -> None:
    """Keep ``positions`` ranking the table's keys in its order: a new key goes after the last (as in the dict),
    a removed one leaves (ranks may have gaps; only their order counts)."""
    if removed:
        positions.pop(rid, None)
    else:
        last = next(reversed(table), None)
        positions[rid] = 0 if last is None else positions[last] + 1


def reindex(
    index: dict[object, dict[str, None]],
    positions: dict[str, int] | None,
    rid: str,
    old: Record | None,
    new: Record | None,
    field: str,
    lower: bool,
) -> None:
    """Move ``rid`` to the bucket of its new value, keeping every bucket in the table's order."""
    before = None if old is None else index_key(old.get(field), lower)
    after = None if new is None else index_key(new.get(field), lower)
    if old is not None and new is not None and before == after:
        return
    if old is not None:
        bucket = index.get(before)
        if bucket is not None:
            bucket.pop(rid, None)
            if not bucket:
                del index[before]
    if new is not None:
        bucket = index.setdefault(after, {})
        assert positions is not None  # built with the collection's first index
        if bucket and positions[next(reversed(bucket))] > positions[rid]:  # an earlier record joins: not at the end
            rank = positions.__getitem__
            index[after] = dict.fromkeys(sorted([*bucket, rid], key=rank))
        else:
            bucket[rid] = None
