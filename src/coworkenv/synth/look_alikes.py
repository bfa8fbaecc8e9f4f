"""What a report must not state: the values look-alike records hold where the reported one is.

An answer check that asks for a value read from the fixtures (the on-call engineer's address,
the booked fare, the urgent ticket's id) is satisfied by a report that lists everything the
agent saw. The same field of the other records of that collection (the other engineer, the
other fare) is what tells the two apart: a right report names one, a dump names them all. The
values are taken in the shape the check states them ("420.00" of the number 420.0, "10:00" of
"2025-03-04T10:00").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from coworkenv.spec.checks import AnswerCheck, AnswerContains, AnswerNumber, CheckModel

LIMIT = 8
"""Look-alike values kept per check, the most similar records first."""
_NUMBER = re.compile(r"-?\d+(?:\.(\d+))?")
_DIGIT = re.compile(r"\d")
_PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
_ANCHOR = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+|\b[A-Za-z]+-\d+\b|(?<![\w.])\d+\.\d\d(?!\d)|\b\d{2}:\d{2}\b")

Shape = Callable[[object], str | None]
Fixtures = Mapping[str, Mapping[str, list[dict[str, Any]]]]


def stated_values(check: CheckModel) -> list[str]:
    """The values an answer check asks a report to state, as text (none for other checks)."""
    if isinstance(check, AnswerContains):
        return [str(v) for group in check.groups for v in group]
    return [_plain(check.value)] if isinstance(check, AnswerNumber) else []


def versions(fixtures: Fixtures, mutations: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The fixtures with each record as an update of ``mutations`` (of events, or between stages) leaves it added
    beside it: the value an update replaces is the look-alike of the one it brings (the engineer on call before
    the swap). Records that mutations add are left out: a report may well name them all (the mail and its
    correction)."""
    out = {s: {c: list(recs) for c, recs in colls.items()} for s, colls in fixtures.items()}
    for m in mutations:
        records = out.get(str(m.get("service")), {}).get(str(m.get("collection")), [])
        old = next((r for r in records if r.get("id") == m.get("id")), None)
        change = m.get("record")
        if m.get("op") == "update" and old is not None and isinstance(change, Mapping):
            records.append({**old, **change})
    return out


def anchors(answers: Sequence[str]) -> list[str]:
    """The literal values of report templates (an id, an address, an amount, a time; placeholders cut out): what a
    right report names besides what its checks ask for."""
    found: dict[str, None] = {}
    for text in answers:
        found.update(dict.fromkeys(_ANCHOR.findall(_PLACEHOLDER.sub(" ", text))))
    return list(found)


def with_exclusions(check: CheckModel, fixtures: Fixtures, keep: set[str], named: list[str]) -> CheckModel:
    """``check`` with ``excludes`` set to the look-alike values of what it asks for and of the values a right report
    ``named`` (none that ``keep``, lower-cased, holds)."""
    values = stated_values(check)
    if not values or not isinstance(check, AnswerCheck):
        return check
    values += named
    found = dict.fromkeys(check.excludes)
    for value in values:
        found.update(dict.fromkeys(look_alike_values(value, fixtures)))
    excludes = [v for v in found if v.lower() not in keep and v.strip() == v and v][:LIMIT]
    return check.model_copy(update={"excludes": excludes}) if excludes else check


def look_alike_values(value: str, fixtures: Fixtures) -> list[str]:
    """What the other records of each collection holding ``value`` hold in its place, the most similar first."""
    out: dict[str, None] = {}
    places = _places(value)
    for records in (recs for colls in fixtures.values() for recs in colls.values()):
        for rec in records:
            for name, shape in places(rec):
                others = sorted((o for o in records if o is not rec), key=lambda o: -_shared(rec, o))
                for other in others:
                    alike = shape(other.get(name))
                    if alike is not None and alike.lower() != value.lower():
                        out[alike] = None
    return list(out)


def _places(value: str) -> Callable[[Mapping[str, Any]], Iterator[tuple[str, Shape]]]:
    """How to find each field of a record that holds ``value``, with how to read the same from another record's
    field (``value``'s patterns made once for all the records it is looked for in)."""
    low = value.lower()
    number = _NUMBER.fullmatch(value)
    amount = float(value) if number is not None else 0.0
    token = _token(re.escape(low)) if _DIGIT.search(low) else None

    def places(rec: Mapping[str, Any]) -> Iterator[tuple[str, Shape]]:
        for name, field in rec.items():
            if isinstance(field, bool):
                continue
            if isinstance(field, int | float) and number is not None and abs(amount - field) < 0.005:
                yield name, _formatted(len(number.group(1) or ""))
            elif isinstance(field, str) and field.lower() == low:
                yield name, _whole
            elif isinstance(field, str) and token is not None and token.search(field.lower()):
                yield name, _alike(value)

    return places


def _token(pattern: str) -> re.Pattern[str]:
    """``pattern`` as a whole part of a text ("10:00" of "2025-03-04T10:00", "317.97" of "Fare: 317.97 USD")."""
    return re.compile(rf"(?:(?<=\dt)|(?<![\w.-])){pattern}(?![\w-]|\.\d)", re.IGNORECASE)


def _whole(other: object) -> str | None:
    return other if isinstance(other, str) and other.strip() else None


def _formatted(decimals: int) -> Shape:
    def shape(other: object) -> str | None:
        ok = isinstance(other, int | float) and not isinstance(other, bool)
        return f"{other:.{decimals}f}" if ok else None

    return shape


def _alike(value: str) -> Shape:
    """The first part of another text written like ``value`` (digits for digits, letters for letters: "tkt-7" for
    "tkt-4", "410.50" for "317.97")."""
    runs = re.findall(r"\d+|[^\W\d_]+|.", value)
    shape = "".join(r"\d+" if r.isdigit() else "[^\\W\\d_]+" if r.isalpha() else re.escape(r) for r in runs)
    pattern = _token(shape)

    def alike(other: object) -> str | None:
        m = pattern.search(other) if isinstance(other, str) else None
        return m.group(0) if m else None

    return alike


def _shared(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
    return sum(1 for k, v in a.items() if k != "id" and b.get(k) == v)


def _plain(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"
