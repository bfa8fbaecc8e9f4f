"""Values as a reader understands them, not as strings: times, dates, numbers, money and names.

"2pm" and "14:00" are one time, "$1,200" and 1200 one amount, "Ortiz, Sam" and
"sam.ortiz@corp.com" one person, and "tomorrow" a date once the workspace clock is known.
Grading reads numbers out of answers with it; the verifier compares normalised values so a
rephrasing neither hides a leaked fact nor makes a solvable task look unsolvable.

A value is reduced to *keys* such as ``("time", "14:00")``, ``("date", "2025-03-04")``,
``("md", "03-04")`` (a day without a year), ``("num", 1200.0)`` or ``("name", "sam ortiz")``;
text is reduced to the set of keys it mentions.
"""

from __future__ import annotations

import contextlib
import re
from datetime import date, timedelta

Key = tuple[str, object]

_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_ORD = r"(?:st|nd|rd|th)?"
_ISO = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?(?!\d)")
_ISO_FAST = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?")
"""``_ISO`` without its guards, several times faster for scanning long tool results."""
_TIME24 = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?::\d{2})?(?![\d:])")
_TIME12 = re.compile(r"(?<![\d:.])(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*([apAP])\.?[mM]\b\.?")
_TIME_WORDS = {"noon": "12:00", "midday": "12:00", "midnight": "00:00"}
_MONTH_WORD = re.compile(rf"(?:{_MONTH})\b\.?")
_DAYS_BEFORE = re.compile(rf"(?:^|[^\d.])(?:(\d{{1,2}}){_ORD}\s*[-–]\s*)?(\d{{1,2}}){_ORD}\s+(?:of\s+)?$")
_DAYS_AFTER = re.compile(rf"\s+(\d{{1,2}}){_ORD}(?:\s*[-–]\s*(\d{{1,2}}){_ORD})?(?![\d:])")
_YEAR_AFTER = re.compile(r",?\s+(\d{4})\b")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_WORD = re.compile(r"(?:" + "|".join(_WEEKDAYS) + r"|today|tonight|tomorrow|yesterday)\b")
_QUALIFIED = re.compile(r"(?:(the day after)|(next|this|coming|last)|(today is))\s+$")
_EXPLICIT = re.compile(r",?\s*(?:\d{4}-\d{2}-\d{2}|\d{1,2}(?:st|nd|rd|th)?\s+[a-z]|(?:" + _MONTH + r")\.?\s+\d)")
"""After a weekday, an explicit date ("Monday 2025-03-03"): the weekday only labels it."""
_SPAN = re.compile(r"(day|week)s?\b(\s+ago)?")
_COUNT = re.compile(r"(?:^|\s)(in\s+)?(\d+|an?|one|two|three)\s+$")
_HOURS = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?|an?|one|two|three|half an?)[-\s]?(?:hours?|hrs?|h)\b")
"""A duration in hours, which also states its length in minutes ("an hour" states 60)."""
_RELATIVE_HINTS = ("day", "tomorrow", "tonight", "week")
"""Cheap substring tests that rule relative dates out for most text."""
_SMALL = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "half an": 0.5, "half a": 0.5}
_ID = re.compile(r"\b[A-Za-z]+(?:[-_/#]?\d+)(?:[-_/][A-Za-z0-9]+)*\b")
_NUMBER = re.compile(
    rf"(?P<skip>{_ISO.pattern}|{_TIME24.pattern}|{_TIME12.pattern}|{_ID.pattern})"
    r"|(?P<sign>(?<![^\s(=:\[])[-−](?=\d))?(?<![\w.,])(?P<num>\d+(?:[.,]\d+)*)"
)
"""A quantity, or something that only looks like one (a date, a clock time, an identifier) to skip."""
_DIGITS = re.compile(r"\d+")
_DELIMITERS = frozenset(" \t\n\r\"'(){}[];<>")
_GROUPED = {",": re.compile(r"\d{1,3}(?:,\d{3})+"), ".": re.compile(r"\d{1,3}(?:\.\d{3})+")}
_EMAIL = re.compile(r"\b([a-z0-9._%+-]+)@[a-z0-9.-]+\.[a-z]{2,}\b", re.I)
_CAP = r"[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?"
_NAME = re.compile(rf"(?=\b({_CAP})\s+({_CAP})\b)")
_NAME_REVERSED = re.compile(rf"\b({_CAP}),\s+({_CAP})\b")


def _parse_number(token: str) -> list[float]:
    """One written number; thousands and decimal separators in either convention.

    "1,234.50" and "1.234,50" are 1234.5; "1,200" is 1200; "12,5" is 12.5; a token that
    fits no convention ("1,2,3") is read as the numbers it lists.
    """
    if "," in token and "." in token:
        dec = token[max(token.rfind(","), token.rfind("."))]
        thousands = "." if dec == "," else ","
        head, _, tail = token.rpartition(dec)
        if _GROUPED[thousands].fullmatch(head) or head.isdigit():
            return [float(head.replace(thousands, "") + "." + tail)]
    elif "," in token or token.count(".") > 1:
        sep = "," if "," in token else "."
        if _GROUPED[sep].fullmatch(token):
            return [float(token.replace(sep, ""))]
        head, _, tail = token.partition(sep)
        if sep == "," and token.count(",") == 1 and len(tail) <= 2:
            return [float(f"{head}.{tail}")]
    else:
        return [float(token)]
    return [float(p) for p in re.split(r"[.,]", token)]


def _chunks(text: str) -> list[tuple[int, int]]:
    """(start, end) of the delimiter-bounded pieces of text that hold a digit (most text has none)."""
    out: list[tuple[int, int]] = []
    end = -1
    for m in _DIGITS.finditer(text):
        if m.start() < end:
            continue
        start, end = m.start(), m.end()
        while start > 0 and text[start - 1] not in _DELIMITERS:
            start -= 1
        while end < len(text) and text[end] not in _DELIMITERS:
            end += 1
        out.append((start, end))
    return out


def numbers_in(text: str) -> list[float]:
    """Quantities written in text, in order.

    Tolerates currency signs and thousands separators of either convention; a hyphen
    between numbers is a range, not a minus ("24-28 March" is 24 and 28); identifiers
    ("tkt-501", "Q3"), ISO dates and clock times ("14:00", "2 pm") are not quantities.
    """
    out: list[float] = []
    for start, end in _chunks(text):
        piece = text[start : end + 6]  # room for the " pm" of a bare hour
        for m in _NUMBER.finditer(piece):
            if m.start() >= end - start:
                break
            if m.group("num"):
                sign = -1.0 if m.group("sign") else 1.0
                out += [sign * x for x in _parse_number(m.group("num"))]
    return out


def clock(text: str) -> date | None:
    """The workspace's today, as a spec's context states it ("Today is Monday 2025-03-03")."""
    m = re.search(r"today is\D{0,20}?(\d{4}-\d{2}-\d{2})", text, re.I)
    try:
        return date.fromisoformat(m.group(1)) if m else None
    except ValueError:
        return None


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def _month(name: str) -> int:
    return 1 + _MONTHS.index(name[:3].lower())


def _day_keys(year: str | None, month: int, day: int, today: date | None) -> set[Key]:
    """A written day: its date (the year from the text, else the clock's) and, without a year, "md"."""
    if not 1 <= day <= 31:
        return set()
    keys: set[Key] = set() if year else {("md", f"{month:02d}-{day:02d}")}
    y = int(year) if year else (today.year if today else None)
    if y is not None:
        with contextlib.suppress(ValueError):  # 31 February is no day
            keys.add(("date", date(y, month, day).isoformat()))
    return keys


def _written_dates(low: str, today: date | None) -> set[Key]:
    """Days written with a month name: "3 March", "24-28 March 2025", "Mar 3rd", "March 3, 2025"."""
    keys: set[Key] = set()
    for m in _MONTH_WORD.finditer(low):
        if m.start() and low[m.start() - 1].isalpha():
            continue
        month = _month(m.group(0))
        before = _DAYS_BEFORE.search(low, max(0, m.start() - 16), m.start())
        after = None if before else _DAYS_AFTER.match(low, m.end())
        found = before or after
        if found is None:
            continue
        year = _YEAR_AFTER.match(low, found.end() if after else m.end())
        for d in filter(None, found.groups()):
            keys |= _day_keys(year.group(1) if year else None, month, int(d), today)
    return keys


def _relative_dates(low: str, today: date) -> set[Key]:
    """Dates that words like "tomorrow", "next Friday" or "in 3 days" name, seen from ``today``."""
    days: set[date] = set()
    for m in _DAY_WORD.finditer(low):
        if m.start() and low[m.start() - 1].isalpha():
            continue
        word = m.group(0)
        after, which, label = (_QUALIFIED.search(low, max(0, m.start() - 14), m.start()) or _NO_QUALIFIER).groups()
        if word in _WEEKDAYS:
            if label or _EXPLICIT.match(low, m.end()):
                continue  # "Today is Monday", "Monday 2025-03-03": a label, not a relative date
            days |= _weekday(today, _WEEKDAYS.index(word), which or "")
        elif not label:
            offset = {"yesterday": -1, "tomorrow": 1}.get(word, 0) + (1 if after and word == "tomorrow" else 0)
            days |= _shifted(today, offset)
    for m in _SPAN.finditer(low):
        count = _COUNT.search(low, max(0, m.start() - 12), m.start())
        if count is None or not (m.group(2) or count.group(1)):
            continue  # "in 3 days" and "3 days ago" are dates; "3 days" alone is a length
        n = int(_SMALL.get(count.group(2)) or int(count.group(2)))
        days |= _shifted(today, (-1 if m.group(2) else 1) * n * (7 if m.group(1) == "week" else 1))
    return {("date", d.isoformat()) for d in days} | {("md", d.strftime("%m-%d")) for d in days}


_NO_QUALIFIER: re.Match[str] = re.compile(r"()()()").fullmatch("")  # type: ignore[assignment]  # matches ""


def _shifted(today: date, days: int) -> set[date]:
    """The day ``days`` from ``today``, or none past the calendar's ends: "in 9999999 days" is just text."""
    try:
        return {today + timedelta(days=days)}
    except OverflowError:
        return set()


def _weekday(today: date, weekday: int, which: str) -> set[date]:
    """The day a weekday names: "Friday" and "this Friday" the coming one; "next Friday" that or the one after."""
    ahead = (weekday - today.weekday()) % 7
    if which == "last":
        return _shifted(today, -((7 - ahead) or 7))
    days = _shifted(today, ahead)
    if which in ("next", "") or ahead == 0:
        days |= _shifted(today, ahead + 7)
    return days


def _times(low: str) -> set[Key]:
    """Clock times in lower-case text: "14:00", "2pm", "9:30 a.m.", "noon"."""
    keys: set[Key] = {("time", f"{int(h):02d}:{mm}") for h, mm in _TIME24.findall(low)}
    for h, mm, half in _TIME12.findall(low):
        hour = int(h) % 12 + (12 if half == "p" else 0)
        keys.add(("time", f"{hour:02d}:{mm or '00'}"))
    keys |= {("time", t) for word, t in _TIME_WORDS.items() if word in low}
    return keys


def _is_name(*words: str) -> bool:
    return not any(w.lower() in _WEEKDAYS or re.fullmatch(_MONTH, w, re.I) for w in words)


def _names(text: str) -> set[Key]:
    keys: set[Key] = {("name", f"{a} {b}".lower()) for a, b in _NAME.findall(text) if _is_name(a, b)}
    keys |= {("name", f"{b} {a}".lower()) for a, b in _NAME_REVERSED.findall(text) if _is_name(a, b)}
    for local in _EMAIL.findall(text):
        parts = [p for p in re.split(r"[._-]", local.lower()) if p.isalpha()]
        if len(parts) >= 2:
            keys.add(("name", " ".join(parts)))
    return keys


KINDS = frozenset({"num", "date", "time", "name"})
"""What ``mentions`` can look for ("date" includes the year-less "md" keys)."""


def mentions(text: str, today: date | None = None, kinds: frozenset[str] = KINDS) -> set[Key]:
    """The normalised values of ``kinds`` that ``text`` mentions; relative dates need ``today``.

    ISO dates are read only along with the "time" kind (a date-time states both): alone, an
    ISO date is its own text, which ``mentioned`` finds as a substring.
    """
    low = text.lower()  # the patterns are lower-case: case-insensitive matching is several times slower
    keys: set[Key] = set()
    if "num" in kinds:
        keys |= {("num", round(x, 2)) for x in numbers_in(text)}
        if "h" in low:
            keys |= {("num", round(60 * (_SMALL.get(n) or float(n)), 2)) for n in _HOURS.findall(low)}
    if "time" in kinds:
        for y, mo, d, hh, mi in _ISO_FAST.findall(text):
            keys |= _day_keys(y, int(mo), int(d), today)
            if hh:
                keys.add(("time", f"{hh}:{mi}"))
        keys |= _times(low)
    if "date" in kinds:
        keys |= _written_dates(low, today)
    if "date" in kinds and today is not None and any(h in low for h in _RELATIVE_HINTS):
        keys |= _relative_dates(low, today)
    if "name" in kinds:
        keys |= _names(text)
    return keys


def kinds_of(alternatives: list[frozenset[Key]]) -> frozenset[str]:
    """The ``mentions`` kinds needed to test these alternatives."""
    return frozenset("date" if k[0] == "md" else k[0] for alt in alternatives for k in alt)


def forms(value: object, *, names: bool = True) -> list[frozenset[Key]]:
    """Ways a value can be stated: it is mentioned when all keys of one alternative are."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return [frozenset({("num", round(float(value), 2))})]
    if isinstance(value, list):
        return [f for v in value for f in forms(v, names=names)]
    text = str(value).strip()
    iso = _ISO.fullmatch(text)
    if iso:
        y, mo, d, hh, mi = iso.groups()
        time = {("time", f"{hh}:{mi}")} if hh else set()
        return [frozenset({("date", f"{y}-{mo}-{d}"), *time}), frozenset({("md", f"{mo}-{d}"), *time})]
    if _TIME24.fullmatch(text) or _TIME12.fullmatch(text):
        kinds: tuple[str, ...] = ("time",)
    elif _is_amount(text):
        kinds = ("num",)
    elif names and re.fullmatch(rf"{_CAP}(?:\s+{_CAP}){{1,2}}", text):
        return [frozenset({("name", text.lower())})]
    else:
        return []
    return [frozenset({k}) for k in mentions(text) if k[0] in kinds]


def _is_amount(text: str) -> bool:
    """Text that is only a number, possibly with a currency sign or code ("$1,200", "1200 USD")."""
    return bool(re.fullmatch(r"[-−]?[$€£]?\s*\d[\d.,]*\s*(?:[A-Z]{3}|[$€£])?", text))


def mentioned(value: object, text: str, keys: set[Key], *, names: bool = True) -> bool:
    """Whether ``text`` (with its ``mentions`` already computed as ``keys``) states ``value``."""
    if isinstance(value, str) and value.strip():
        word = re.escape(value.strip().lower())
        if re.search(rf"(?<![a-z0-9]){word}(?![a-z0-9])", text.lower()):
            return True
    return any(alt <= keys for alt in forms(value, names=names))
