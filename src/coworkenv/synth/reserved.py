"""What background records may never contain: every value and word a task's request, reference, checks and facts use.

A task selects its records by words (a search matches a query word anywhere in a record's text),
by exact values (a team, a status, a folder, a day) and by flags (``unread=True``). Background is
drawn from pools with all of these taken out beforehand, so that no background record can be
selected by anything the task does, whatever the draw: collisions are excluded by construction,
not filtered after the fact.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import compress

from pydantic import BaseModel

from coworkenv.synth.draft import Draft

_TOKEN = re.compile(r"[a-z0-9]+")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_NAMED = ("name", "email", "sender", "to", "cc", "attendees", "customer", "company", "owner", "employee")
"""Fields of the task's own records whose words background must not share (people and companies, look-alikes too)."""
_SEARCHED = ("query", "sender", "author", "customer", "company", "keywords")
"""Reference arguments matched as substrings: their short words count too."""
MIN_WORD = 3
"""Shorter words of the task's prose are no search term (a query's or a matched argument's always are)."""


@dataclass(frozen=True)
class Reserved:
    """The task's words (no background text may contain one), values (none may equal one) and flags."""

    words: frozenset[str]
    searched: frozenset[str]
    """The words reference calls search or match by (a subset of ``words``)."""
    values: frozenset[str]
    days: frozenset[str]
    flags: frozenset[tuple[str, bool]]
    longest: int = 0
    """The length of the longest reserved word."""

    def allows(self, text: str) -> bool:
        """Whether ``text`` contains none of the task's words and is none of its values."""
        low = text.lower()
        if low in self.values:
            return False
        words, longest = self.words, self.longest
        return not any(low[a:b] in words for a in range(len(low)) for b in range(a + 1, a + longest + 1))

    def searched_in(self, text: str) -> bool:
        """Whether a word the reference searches or matches by occurs in ``text``."""
        low = text.lower()
        return any(w in low for w in self.searched)

    def choices(self, options: Sequence[str]) -> list[str]:
        """The options background may use (an option's substrings are indexed once: options are constants)."""
        values, words = self.values, self.words
        return [o for o in options if o.lower() not in values and words.isdisjoint(_substrings(o.lower()))]

    def flag(self, name: str) -> list[bool]:
        """The values of boolean field ``name`` that no reference call filters on."""
        return [v for v in (False, True) if (name, v) not in self.flags]


def reserved(draft: Draft) -> Reserved:
    """Everything of ``draft`` (but the background) that could select a record."""
    found = _Leaves()
    found.scan(_task_parts(draft), "")
    texts, flags = found.texts, found.flags
    searched = set(_TOKEN.findall("\n".join(found.searched).lower()))  # no token spans a line break
    for records in (rows for colls in draft.fixtures.values() for rows in colls.values()):
        for rec in records:
            texts.extend(str(v) for f in _NAMED for v in _as_list(rec.get(f)))
    values = {text.lower() for text in texts}
    lows = "\n".join(values)  # searched at once: neither a token nor a day spans a line break
    days = set(_DAY.findall(lows))
    tokens = set(_TOKEN.findall(lows))
    values |= tokens
    words = set(searched) | {token for token in tokens if len(token) >= MIN_WORD and not token.isdigit()}
    longest = max(map(len, words), default=0)
    return Reserved(
        frozenset(words), frozenset(searched), frozenset(values), frozenset(days), frozenset(flags), longest
    )


def _task_parts(draft: Draft) -> list[object]:
    """The parts of a draft a task reads or writes by: all but its fixtures."""
    facts = list(draft.facts.values())
    stages = [[s.opening, s.advance, s.mutations, s.events, list(s.reference), list(s.checks)] for s in draft.stages]
    return [
        draft.title,
        draft.context,
        draft.openings,
        facts,
        list(draft.reference),
        list(draft.checks),
        draft.rules,
        draft.events,
        draft.follow_ups,
        draft.confirmations,
        draft.summary,
        stages,
    ]


@dataclass
class _Leaves:
    """The scalar leaves of nested data by kind: every text, the texts under a searched key, and the flags, each
    flag with the key it sits under."""

    texts: list[str] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)
    flags: set[tuple[str, bool]] = field(default_factory=set)

    def scan(self, value: object, key: str) -> None:
        """Take in the leaves of ``value`` (the scalars of a container are taken in its loop, not a call each)."""
        if isinstance(value, BaseModel):
            value = value.model_dump()
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if isinstance(value, dict):
            pairs = [(str(k), v) for k, v in value.items()]
        elif isinstance(value, list | tuple):
            pairs = [(key, v) for v in value]
        else:
            pairs = [(key, value)]
        for k, v in pairs:
            if isinstance(v, str):
                self.texts.append(v)
                if k in _SEARCHED:
                    self.searched.append(v)
            elif isinstance(v, bool):
                self.flags.add((k, v))
            elif isinstance(v, BaseModel | dict | list | tuple) or dataclasses.is_dataclass(v):
                self.scan(v, k)


@cache
def _substrings(low: str) -> frozenset[str]:
    """Every substring of ``low``: a word is in it when the two sets meet."""
    return frozenset(low[a:b] for a in range(len(low)) for b in range(a + 1, len(low) + 1))


def _as_list(value: object) -> list[object]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


class Pool:
    """Words (names, vocabulary) background draws from, with an index of their substrings to take words out fast."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = tuple(dict.fromkeys(words))
        self.containing: dict[str, set[int]] = {}
        """Each substring of the words (lowercased), and the words holding it (a whole word holds itself)."""
        for i, word in enumerate(self.words):
            low = word.lower()
            for a in range(len(low)):
                for b in range(a + 1, len(low) + 1):
                    self.containing.setdefault(low[a:b], set()).add(i)
        self.equal: dict[str, list[int]] = {}
        """Each word lowercased, and the words that are it."""
        for i, word in enumerate(self.words):
            self.equal.setdefault(word.lower(), []).append(i)

    def without(self, reserved: Reserved) -> list[str]:
        """The words that contain none of the reserved words and equal none of its values (the sets are met once,
        not a word at a time: a task reserves hundreds of words)."""
        banned = set().union(
            *(self.containing[word] for word in self.containing.keys() & reserved.words),
            *(self.equal[value] for value in self.equal.keys() & reserved.values),
        )
        keep = bytearray(b"\x01") * len(self.words)
        for i in banned:
            keep[i] = 0
        return list(compress(self.words, keep))


@cache
def pool(name: str) -> Pool:
    """A pool of Faker's word lists: ``first``, ``last`` (names) or ``words`` (business vocabulary)."""
    from faker.providers.company.en_US import Provider as Company
    from faker.providers.lorem.en_US import Provider as Lorem
    from faker.providers.person.en_US import Provider as Person

    if name == "first":
        return Pool([n for n in Person.first_names if n.isalpha()])
    if name == "last":
        return Pool([n for n in Person.last_names if n.isalpha()])
    vocabulary = [w for group in (*Company.catch_phrase_words, *Company.bsWords) for w in group]
    return Pool([w for w in (*vocabulary, *Lorem.word_list) if len(w) >= 4 and w.isalpha()])
