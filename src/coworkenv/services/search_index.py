"""A collection's search index: each trigram of a record's lower-cased search text -> the ids of the records holding it.

A query word of three or more characters can only occur in a text holding every one of its trigrams, so the
intersection of their posting sets holds every match; each candidate is then checked with the plain substring
test, so a search finds exactly what a scan over every record finds, at the cost of what it finds. Words shorter
than a trigram have no grams: they are only checked on the candidates of the longer words, or, when a query has
no longer word, on every record (the scan, over the cached lower-cased texts).

Writes stay as cheap as without an index: ``Service.store`` only marks a record stale (one dict insertion), and
the next search re-indexes the stale records, comparing each with the version indexed by identity (records are
replaced, never edited). A collection put back whole (``Service.restore``: a reset or a fork) marks the index
unsure, and the next search compares every record by identity. The index holds no order: callers rank what it
finds by the table's order, so results never depend on the history of writes, resets and forks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coworkenv.services.base import Record

GRAM = 3
MIN_RECORDS = 256
"""Collections smaller than this are scanned. Building the index adds every trigram of every text to a set, which
costs some hundred to two hundred scans of the collection (the workload's mail and documents, 300 to 1,000 records),
so it pays only where a collection is searched that often: in an environment reused across episodes (the rollout
pool, the benchmark). The usual workspace holds tens of records per collection and is scanned in microseconds; a
collection of a few hundred records scanned costs a few hundred microseconds per search, and from there on a search
through the index costs what it finds (tens of microseconds)."""


def grams(text: str) -> set[str]:
    """The distinct trigrams of ``text`` (none for a text shorter than a trigram)."""
    return {text[i : i + GRAM] for i in range(len(text) - GRAM + 1)}


class TextIndex:
    """The trigram index of one collection's search texts (one per text function)."""

    __slots__ = ("indexed", "postings", "stale", "text", "unsure")

    def __init__(self, text: Callable[[Record], str], table: dict[str, Record]) -> None:
        self.text = text
        self.indexed: dict[str, tuple[Record, str]] = {}  # id -> (the record version indexed, its text lower-cased)
        self.postings: dict[str, set[str]] = {}
        self.stale: dict[str, None] = {}  # ids written since the last search
        self.unsure = False  # the collection was put back whole: any record may differ
        for rid, rec in table.items():
            self._add(rid, rec)

    def _add(self, rid: str, rec: Record) -> None:
        hay = self.text(rec).lower()
        self.indexed[rid] = (rec, hay)
        postings = self.postings
        for gram in grams(hay):
            bucket = postings.get(gram)
            if bucket is None:
                postings[gram] = {rid}
            else:
                bucket.add(rid)

    def _remove(self, rid: str) -> None:
        _, hay = self.indexed.pop(rid)
        postings = self.postings
        for gram in grams(hay):
            bucket = postings[gram]
            bucket.discard(rid)
            if not bucket:
                del postings[gram]

    def refresh(self, table: dict[str, Record]) -> None:
        """Re-index the records that changed since the last search (every record after a restore)."""
        rids = self.indexed.keys() | table.keys() if self.unsure else self.stale
        indexed = self.indexed
        for rid in rids:
            rec = table.get(rid)
            hit = indexed.get(rid)
            if hit is not None and hit[0] is rec:
                continue
            if hit is not None:
                self._remove(rid)
            if rec is not None:
                self._add(rid, rec)
        self.stale.clear()
        self.unsure = False

    def find(self, words: tuple[str, ...], table: dict[str, Record]) -> list[str]:
        """The ids of the records whose text holds every word (lower-cased), in no particular order."""
        self.refresh(table)
        sets: list[set[str]] = []
        postings = self.postings
        for word in words:
            for gram in grams(word):
                bucket = postings.get(gram)
                if bucket is None:
                    return []
                sets.append(bucket)
        indexed = self.indexed
        if not sets:  # only words shorter than a trigram: check every record's text
            return [rid for rid, (_, hay) in indexed.items() if all(w in hay for w in words)]
        sets.sort(key=len)
        found = sets[0]
        for bucket in sets[1:]:
            found = found & bucket  # iterates the smaller set
            if not found:
                return []
        return [rid for rid in found if all(w in indexed[rid][1] for w in words)]
