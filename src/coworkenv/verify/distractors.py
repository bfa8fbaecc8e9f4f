"""Look-alike records: what a distractor run changes so that the reference acts on, or reads, the wrong one.

Two kinds of look-alike. A check that selects a record (the other Sam Ortiz, last year's
invoice) is probed by re-pointing the reference's calls at the most similar other record of
that record's collection. A ``field_number`` check is about a number the agent must read from
a fixture record (the March catering expense) and write somewhere, often into its own post
that the check selects by author: there the look-alike is the most similar other record
holding a different number in the same field (February's catering expense), and the run
writes and reports that number instead.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from typing import TypeGuard, overload

from coworkenv.spec.events import Record
from coworkenv.spec.models import Fixtures, TaskSpec
from coworkenv.values import numbers_in

MAX_DISTRACTORS = 2
"""Runs per kind of look-alike and spec (each costs an episode)."""
"""The checks about particular records: a distractor run re-points the reference at a look-alike."""
_KEYS = ("id", "email", "name")
_TOKEN = re.compile(r"(?<![\w.,:/-])\d+(?:[.,]\d+)*(?![\w:/-]|[.,]\d)")
"""A written quantity standing on its own (not part of a date, a time or an identifier)."""


@dataclass(frozen=True)
class Swap:
    """What a distractor run changes in the reference: the look-alike's identifying values put in place of the
    right record's (in the calls only), or the look-alike's number in place of the one the agent should read
    (in the calls and in what it tells the user: an agent that misread the number reports it too)."""

    texts: dict[str, str] = field(default_factory=dict)
    number: tuple[float, float] | None = None
    """(the number the check wants, the look-alike's number)."""

    @overload
    def apply(self, value: str) -> str: ...

    @overload
    def apply(self, value: str | dict[str, object]) -> str | dict[str, object]: ...

    @overload
    def apply(self, value: object) -> object: ...

    def apply(self, value: object) -> object:
        """``value`` (a call's arguments, or text) with the swaps made, at any depth."""
        if isinstance(value, str):
            for old, new in self.texts.items():
                value = value.replace(old, new)
            return value if self.number is None else _TOKEN.sub(self._token, value)
        if isinstance(value, list):
            return [self.apply(v) for v in value]
        if isinstance(value, dict):
            return {k: self.apply(v) for k, v in value.items()}
        if self.number is not None and _is_number(value) and _same(float(value), self.number[0]):
            wrong = self.number[1]
            return int(wrong) if isinstance(value, int) and wrong.is_integer() else wrong
        return value

    def shown(self, show: Callable[[str], str]) -> Swap:
        """The swap as the agent's turns carry it, its values in the form ``show`` gives (an interface's ids)."""
        return Swap({show(old): show(new) for old, new in self.texts.items()}, self.number)

    def used_in(self, calls: object) -> bool:
        """Whether making the swaps would change ``calls`` (else a run with them replays the reference)."""
        text = json.dumps(calls)
        return any(json.dumps(old)[1:-1] in text for old in self.texts) or (
            self.number is not None and self.apply(calls) != calls
        )

    def _token(self, m: re.Match[str]) -> str:
        right, wrong = self.number or (0.0, 0.0)
        token = m.group()
        found = numbers_in(token)
        return written_like(token, wrong) if len(found) == 1 and _same(found[0], right) else token


def written_like(token: str, x: float) -> str:
    """``x`` written as ``token`` is: as many decimals (at least those ``x`` needs), thousands grouped or not."""
    head, dot, tail = token.partition(".")
    needed = len(repr(x).partition(".")[2].rstrip("0")) if not x.is_integer() else 0
    decimals = max(len(tail) if dot and tail.isdigit() else 0, needed)
    return f"{x:,.{decimals}f}" if "," in head else f"{x:.{decimals}f}"


def distractor_swaps(spec: TaskSpec) -> list[tuple[str, Swap]]:
    """Every distractor run of ``spec``: the record swaps, then the number swaps."""
    return record_swaps(spec) + number_swaps(spec)


def record_swaps(spec: TaskSpec) -> list[tuple[str, Swap]]:
    """For each record-selecting check: the value swaps that re-point the reference at the look-alike record.

    The record a check is about is the fixture record whose identifying values (id, email,
    name, or any value the check quotes) appear in the check; its look-alike is the other
    record of its collection sharing the most values and words with it.
    """
    out: list[tuple[str, Swap]] = []
    done: set[str] = set()
    for i, check in enumerate(spec.checks):
        if not check.selects_record or len(out) >= MAX_DISTRACTORS:
            continue
        text = repr(check.model_dump())
        fixtures = _fixtures(spec)
        found = fixtures.subject(text)
        if found is None or str(found[1]["id"]) in done:
            continue
        records, rec = found
        other = max((r for r in records if r is not rec), key=lambda r: fixtures.likeness(rec, r), default=None)
        if other is None:
            continue
        swaps = {
            str(v): str(other[k])
            for k, v in rec.items()
            if isinstance(v, str)
            and isinstance(other.get(k), str)
            and v != other[k]
            and len(v) >= 4
            and (k in _KEYS or f"'{v}'" in text)
        }
        if swaps:
            done.add(str(rec["id"]))
            out.append((f"checks[{i}]", Swap(texts=swaps)))
    return out


def number_swaps(spec: TaskSpec) -> list[tuple[str, Swap]]:
    """For each ``field_number`` check whose number a fixture record holds: the look-alike's number in its place.

    The holder is the first fixture record with a number field equal to the check's value;
    its look-alike is the record of the same collection whose same field holds another number,
    one the check's tolerance admits first (the look-alike a loose check cannot tell apart),
    then the most like the holder. Whatever record the check selects (a fixture record, or the agent's own
    post picked by author), the run writes the look-alike's number where the reference wrote
    the right one.
    """
    out: list[tuple[str, Swap]] = []
    for i, check in enumerate(spec.checks):
        stated = check.stated_number()
        if stated is None or len(out) >= MAX_DISTRACTORS:
            continue
        value, tolerance = stated
        found = _holder(spec, value)
        if found is None:
            continue
        records, rec, key = found
        numbers = {id(r): v for r in records if r is not rec and _is_number(v := r.get(key)) and not _same(v, value)}
        others = [r for r in records if id(r) in numbers]
        if others:
            like = _fixtures(spec).likeness
            other = max(others, key=lambda r: (abs(numbers[id(r)] - value) <= tolerance, like(rec, r)))
            out.append((f"checks[{i}].value", Swap(number=(value, float(numbers[id(other)])))))
    return out


def _holder(spec: TaskSpec, value: float) -> tuple[list[Record], Record, str] | None:
    """The first fixture record with a number field equal to ``value``: (its collection's records, it, the field)."""
    for collections in spec.services.values():
        for records in collections.values():
            for rec in records:
                key = next((k for k, v in rec.items() if k != "id" and _is_number(v) and _same(v, value)), None)
                if key is not None and "id" in rec:
                    return records, rec, key
    return None


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


class _Fixtures:
    """The spec's fixture records as a check's subject is looked for among them: each record's string values of four
    characters or more, lowercased and indexed by their first four characters once for all the checks that look,
    and each record's words (for likeness)."""

    def __init__(self, services: Fixtures) -> None:
        self.services = services  # held: the cache below is keyed by its id
        self.entries = [
            (records, rec) for collections in services.values() for records in collections.values() for rec in records
        ]
        self._words: dict[int, set[str]] = {}
        self.by_start: dict[str, list[tuple[int, str, str]]] = {}  # a value's first four characters -> its entries
        get = self.by_start.get
        for i, (_, rec) in enumerate(self.entries):
            for key, value in rec.items():
                if isinstance(value, str) and len(value) >= 4:
                    low = value.lower()
                    bucket = get(low[:4])
                    if bucket is None:
                        self.by_start[low[:4]] = [(i, key, low)]
                    else:
                        bucket.append((i, key, low))

    def subject(self, text: str) -> tuple[list[Record], Record] | None:
        """The fixture record a check is about: the most of its values quoted whole in the check (the first of
        equals; an id, email or name counts three), else the first whose id, email or name contains a literal the
        check quotes (a loose check: ``'sam.ortiz'``). A value in the text starts at one of its four-character
        pieces, so only the values that start with one are tried: a workspace of hundreds of records costs what the
        check quotes."""
        low = text.lower()
        score: dict[int, int] = {}
        for start in {low[i : i + 4] for i in range(len(low) - 3)}:
            for i, key, value in self.by_start.get(start, ()):
                if value in low:
                    score[i] = score.get(i, 0) + (3 if key in _KEYS else 1)
        if score:
            best = min(score, key=lambda i: (-score[i], i))
            return self.entries[best]
        quoted = [q.lower() for q in re.findall(r"'([^']{4,})'", text.replace("\\'", ""))]
        first = min((self._first_holding(q) for q in quoted), default=None)
        return None if first is None or first == len(self.entries) else self.entries[first]

    def _first_holding(self, part: str) -> int:
        """The first entry whose id, email or name contains ``part`` (the number of entries if none does): found in
        the keys joined into one text, at the first place ``part`` lies within a single key."""
        text, starts = self.keys
        at = text.find(part)
        while at != -1:
            k = bisect_right(starts, at) - 1
            if at + len(part) < starts[k + 1]:  # the next key starts one separator after this one ends
                return k // len(_KEYS)
            at = text.find(part, at + 1)
        return len(self.entries)

    def likeness(self, a: Record, b: Record) -> float:
        """How alike two records of a collection are: equal fields, and half a point per word they share."""
        same = sum(1 for k, v in a.items() if k != "id" and b.get(k) == v)
        text = " ".join(v for v in b.values() if isinstance(v, str)).lower()  # b's words, split in one call
        return same + 0.5 * len(self.words(a).intersection(text.split()))

    def words(self, rec: Record) -> set[str]:
        hit = self._words.get(id(rec))  # the records are the held services' own: ids stay theirs
        if hit is None:
            hit = self._words[id(rec)] = {w for v in rec.values() if isinstance(v, str) for w in v.lower().split()}
        return hit

    @cached_property
    def keys(self) -> tuple[str, list[int]]:
        """Each entry's id, email and name, lowercased, joined by a separator, and where each starts (with where one
        after the last would start): only a loose check (no value quoted whole) reads them."""
        keys = [str(rec.get(k, "")).lower() for _, rec in self.entries for k in _KEYS]
        starts = [0, *accumulate(len(k) + 1 for k in keys)]
        return "\n".join(keys), starts


_CACHE: OrderedDict[int, _Fixtures] = OrderedDict()


def _fixtures(spec: TaskSpec) -> _Fixtures:
    """The fixture entries of ``spec``'s services, made once for every stage view (they share the fixtures) and
    every check that looks."""
    hit = _CACHE.get(id(spec.services))
    if hit is None or hit.services is not spec.services:
        hit = _CACHE[id(spec.services)] = _Fixtures(spec.services)
        while len(_CACHE) > 8:
            _CACHE.popitem(last=False)
    return hit
