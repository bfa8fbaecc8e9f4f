"""Calendar: events with attendees, listing, free-slot search, scheduling and cancelling."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache
from typing import Annotated, ClassVar, Literal, TypedDict

from pydantic import AfterValidator, Field

from coworkenv.services.base import (
    Limit,
    Offset,
    Record,
    RecordModel,
    Result,
    Service,
    ToolError,
    check_date,
    check_datetime,
    check_email,
    joined,
    page,
    query_words,
    tool,
)
from coworkenv.services.damage import Damage

SLOT_STEP = timedelta(minutes=30)


def _iso(v: str) -> str:
    """A stored time as it is, when ``datetime.fromisoformat`` reads it (else its ValueError: pydantic names the
    field). A validator of the value alone, not a model's ``field_validator``: the record stays plain, so a write
    builds it without running the model."""
    datetime.fromisoformat(v)
    return v


IsoText = Annotated[str, AfterValidator(_iso)]


class CalendarEvent(RecordModel):
    title: str
    start: IsoText
    end: IsoText
    attendees: list[str] = []
    location: str = ""
    organizer: str = "me"
    status: Literal["confirmed", "cancelled"] = "confirmed"
    description: str = ""


def _hhmm(value: str, field: str) -> str:
    try:
        return _normal_hhmm(value)
    except (TypeError, ValueError):  # TypeError: also an unhashable value the cache cannot look up
        raise ToolError(f"invalid {field} {value!r}: expected HH:MM") from None


@lru_cache(maxsize=1024)
def _normal_hhmm(value: str) -> str:
    """Cached: strptime costs more than the rest of a free-slot search, and the same few times recur."""
    return datetime.strptime(value, "%H:%M").strftime("%H:%M")


def _emails(addrs: list[str]) -> list[str]:
    return [check_email(a, "attendee") for a in addrs]


class FreeSlots(TypedDict):
    """What ``calendar_find_free_slots`` answers: the free ``{"start", "end"}`` slots of a date."""

    date: str
    duration_minutes: int
    slots: list[dict[str, str]]


def _search_text(e: Record) -> str:
    return joined(e["title"], e["location"], e["description"])


class Calendar(Service):
    name = "calendar"
    description = "the shared team calendar"
    records = {"events": CalendarEvent}
    id_prefix = {"events": "evt"}
    damage: ClassVar[dict[str, Damage]] = {"events": Damage("calendar_cancel_event", "event_id", "status", "cancelled")}

    @tool("read")
    def list_events(
        self,
        start_date: Annotated[str | None, Field(description="first day, YYYY-MM-DD")] = None,
        end_date: Annotated[str | None, Field(description="last day (inclusive), YYYY-MM-DD")] = None,
        attendee: Annotated[str | None, Field(description="only events this email attends or organizes")] = None,
        query: str = "",
        include_cancelled: bool = False,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> Result:
        """List events between two dates (inclusive), optionally for one attendee or matching words. Earliest first."""
        lo = check_date(start_date, "start_date") if start_date else ""
        hi = check_date(end_date, "end_date") if end_date else ""
        who = attendee.lower() if attendee else None
        words = query_words(query)
        hits = [
            e
            for e in self.text_search("events", words, _search_text)
            if (include_cancelled or e["status"] == "confirmed")
            and (not lo or e["end"][:10] >= lo)
            and (not hi or e["start"][:10] <= hi)
            and (who is None or who == e["organizer"].lower() or who in " ".join(e["attendees"]).lower().split())
        ]
        hits.sort(key=lambda e: (e["start"], e["id"]))
        return page(hits, limit, offset, key="events")

    @tool("read")
    def get_event(self, event_id: str) -> Result:
        """Get one event in full."""
        return self.get("events", event_id)

    @tool("read")
    def find_free_slots(
        self,
        attendees: list[str],
        date: Annotated[str, Field(description="YYYY-MM-DD")],
        duration_minutes: Annotated[int, Field(ge=15, le=480)] = 30,
        day_start: Annotated[str, Field(description="HH:MM")] = "09:00",
        day_end: Annotated[str, Field(description="HH:MM")] = "17:00",
    ) -> FreeSlots:
        """Find start times (every 30 minutes) on a date when none of the attendees has a confirmed event."""
        if not attendees:
            raise ToolError("'attendees' needs at least one email")
        if duration_minutes <= 0:
            raise ToolError("duration_minutes must be positive")
        day = check_date(date)
        lo = datetime.fromisoformat(f"{day}T{_hhmm(day_start, 'day_start')}")
        hi = datetime.fromisoformat(f"{day}T{_hhmm(day_end, 'day_end')}")
        if hi <= lo:
            raise ToolError("day_end must be after day_start")
        who = {a.lower() for a in attendees}
        busy = []
        for e in self.db["events"].values():
            if e["status"] != "confirmed" or e["start"][:10] > day or e["end"][:10] < day:
                continue
            if e["organizer"].lower() in who or any(a.lower() in who for a in e["attendees"]):
                busy.append((datetime.fromisoformat(e["start"]), datetime.fromisoformat(e["end"])))
        length = timedelta(minutes=duration_minutes)
        slots: list[dict[str, str]] = []
        t = lo
        while t + length <= hi:
            if all(t + length <= s or t >= f for s, f in busy):
                # isoformat: same text as strftime("%Y-%m-%dT%H:%M") for these naive times, 3x faster
                slots.append(
                    {"start": t.isoformat(timespec="minutes"), "end": (t + length).isoformat(timespec="minutes")}
                )
            t += SLOT_STEP
        return {"date": day, "duration_minutes": duration_minutes, "slots": slots}

    @tool("write")
    def create_event(
        self,
        title: str,
        start: Annotated[str, Field(description="YYYY-MM-DDTHH:MM")],
        end: Annotated[str, Field(description="YYYY-MM-DDTHH:MM")],
        attendees: list[str] | None = None,
        location: str = "",
        description: str = "",
    ) -> Result:
        """Create an event organized by the user and invite the attendees (emails)."""
        if not title.strip():
            raise ToolError("title must not be empty")
        start, end = check_datetime(start, "start"), check_datetime(end, "end")
        if end <= start:
            raise ToolError("end must be after start")
        rec = self.insert(
            "events",
            {
                "title": title,
                "start": start,
                "end": end,
                "attendees": _emails(attendees or []),
                "location": location,
                "description": description,
            },
        )
        return {"created": True, "id": rec["id"], "event": rec}

    @tool("write")
    def update_event(
        self,
        event_id: str,
        title: str | None = None,
        start: Annotated[str | None, Field(description="YYYY-MM-DDTHH:MM")] = None,
        end: Annotated[str | None, Field(description="YYYY-MM-DDTHH:MM")] = None,
        location: str | None = None,
        attendees: list[str] | None = None,
    ) -> Result:
        """Change an event's title, time, location or attendee list (fields left out stay as they are)."""
        old = self.get("events", event_id)
        if old["status"] == "cancelled":
            raise ToolError(f"event {event_id!r} is cancelled")
        changes: dict[str, object] = {}
        if title is not None:
            if not title.strip():
                raise ToolError("title must not be empty")
            changes["title"] = title
        if start is not None:
            changes["start"] = check_datetime(start, "start")
        if end is not None:
            changes["end"] = check_datetime(end, "end")
        if location is not None:
            changes["location"] = location
        if attendees is not None:
            changes["attendees"] = _emails(attendees)
        if not changes:
            raise ToolError("nothing to update: give at least one of title, start, end, location, attendees")
        if str(changes.get("end", old["end"])) <= str(changes.get("start", old["start"])):
            raise ToolError("end must be after start")
        rec = self.update("events", event_id, changes)
        return {"updated": True, "id": event_id, "event": rec}

    @tool("write")
    def cancel_event(self, event_id: str) -> Result:
        """Cancel an event (it stays on the calendar with status 'cancelled')."""
        if self.get("events", event_id)["status"] == "cancelled":
            raise ToolError(f"event {event_id!r} is already cancelled")
        self.update("events", event_id, {"status": "cancelled"})
        return {"id": event_id, "status": "cancelled"}
