"""The workspace clock: its text form and how it advances between the stages of a multi-day workflow."""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import Field, model_validator

from coworkenv.spec.base import SpecModel as _Model

CLOCK_FORMAT = "%Y-%m-%dT%H:%M"
CLOCK_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$"


def parse_clock(text: str) -> datetime:
    """A workspace time, ``YYYY-MM-DDTHH:MM``; ValueError naming the expected form otherwise."""
    try:
        return datetime.strptime(text, CLOCK_FORMAT)
    except ValueError:
        raise ValueError(f"{text!r} is not a time of the form YYYY-MM-DDTHH:MM") from None


class Advance(_Model):
    """How the workspace clock moves before a stage: ``to`` a time, or by ``days``/``hours`` (then ``at`` a time
    of day). "Next morning 09:00" is ``{days: 1, at: "09:00"}``."""

    to: str | None = Field(None, pattern=CLOCK_PATTERN, description="the new time, YYYY-MM-DDTHH:MM")
    days: int = Field(0, ge=0, le=366)
    hours: int = Field(0, ge=0, le=24 * 366)
    at: str | None = Field(None, pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$", description="time of day, HH:MM")

    @model_validator(mode="after")
    def _one_form(self) -> Advance:
        if self.to is not None:
            if self.days or self.hours or self.at:
                raise ValueError("give either 'to' or 'days'/'hours'/'at', not both")
            parse_clock(self.to)
        elif not (self.days or self.hours or self.at):
            raise ValueError("give 'to', or move by 'days'/'hours' (and optionally 'at')")
        return self

    def apply(self, now: datetime) -> datetime:
        """The time after this advance from ``now``; ValueError when it would pass the calendar's last day."""
        if self.to is not None:
            return parse_clock(self.to)
        try:
            moved = now + timedelta(days=self.days, hours=self.hours)
        except OverflowError:
            raise ValueError(f"advancing from {now:%Y-%m-%dT%H:%M} would pass the year 9999") from None
        if self.at is not None:
            hour, minute = (int(x) for x in self.at.split(":"))
            moved = moved.replace(hour=hour, minute=minute)
        return moved
