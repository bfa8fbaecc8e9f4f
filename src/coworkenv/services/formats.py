"""Checks of the values tools and records take (addresses, dates, times): a ToolError for a tool, the same check
as a pydantic validator for a record field."""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import date, datetime
from functools import lru_cache
from typing import Annotated

from pydantic import AfterValidator

from coworkenv.services.tooling import ToolError


def check_email(addr: str, field: str = "email") -> str:
    """Return the address if it looks like an email, else raise ToolError. An address that passed is kept (up to
    :data:`_KEPT` of them): most writes check one, and an episode's addresses recur."""
    if type(addr) is str and addr in _EMAILS:
        return addr
    if not isinstance(addr, str) or addr.count("@") != 1 or not all(addr.split("@")) or " " in addr:
        raise ToolError(f"invalid {field} {addr!r}: expected an email address like name@example.com")
    if type(addr) is str and len(_EMAILS) < _KEPT:
        _EMAILS[addr] = None
    return addr


_EMAILS: dict[str, None] = {}
_KEPT = 4096


def check_choice(
    value: str, allowed: Collection[str], field: str, listed: str | None = None, problem: str = "invalid"
) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise a ToolError that lists them (under ``listed``, by
    default the field's plural): what an agent needs to retry with a value the tool takes."""
    if value not in allowed:
        raise ToolError(f"{problem} {field} {value!r}; {listed or field + 's'}: {', '.join(allowed)}")
    return value


def check_date(value: str, field: str = "date") -> str:
    """Return an ISO date ``YYYY-MM-DD`` or raise ToolError."""
    try:
        if len(value) == 10:
            return date.fromisoformat(value).isoformat()
    except (TypeError, ValueError):
        pass
    return _bad(value, field, "YYYY-MM-DD")


def check_datetime(value: str, field: str = "time") -> str:
    """Return an ISO date-time normalised to ``YYYY-MM-DDTHH:MM`` or raise ToolError."""
    try:
        return _normal_datetime(value)
    except (TypeError, ValueError):  # TypeError: also an unhashable value the cache cannot look up
        return _bad(value, field, "YYYY-MM-DDTHH:MM")


@lru_cache(maxsize=4096)
def _normal_datetime(value: str) -> str:
    """Cached: every write with a time parses it, and an episode's times recur."""
    return datetime.fromisoformat(value).strftime("%Y-%m-%dT%H:%M")


def as_validator(check: Callable[[str, str], str], value: str, field: str) -> str:
    """Run a ``check_*`` helper inside a pydantic validator: its ToolError becomes the ValueError pydantic reports,
    so a bad fixture is named by collection, record and field."""
    try:
        return check(value, field)
    except ToolError as exc:
        raise ValueError(str(exc)) from None


def _field_validator(check: Callable[[str, str], str], field: str) -> Callable[[str], str]:
    """``as_validator`` of one helper as a function of the value, cached: the helpers are pure, every write
    checks its records' dates and addresses, and an episode's values recur (a failure is not cached)."""

    @lru_cache(maxsize=4096)
    def validate(value: str) -> str:
        return as_validator(check, value, field)

    return validate


IsoDate = Annotated[str, AfterValidator(_field_validator(check_date, "date"))]
"""A record field holding a date ``YYYY-MM-DD`` (a fixture with anything else is refused, naming the field)."""
IsoDateTime = Annotated[str, AfterValidator(_field_validator(check_datetime, "time"))]
"""A record field holding a date-time, normalised to ``YYYY-MM-DDTHH:MM``."""
Email = Annotated[str, AfterValidator(_field_validator(check_email, "email"))]
"""A record field holding an email address."""


def _bad(value: object, field: str, fmt: str) -> str:
    raise ToolError(f"invalid {field} {value!r}: expected {fmt}")
