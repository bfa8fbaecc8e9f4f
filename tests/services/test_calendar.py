import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.calendar import Calendar

A, B = "ana@acme.com", "bob@acme.com"
FIXTURES = {
    "events": [
        {"id": "e1", "title": "Standup", "start": "2026-03-02T09:00", "end": "2026-03-02T09:30", "attendees": [A, B]},
        {
            "id": "e2",
            "title": "Budget review",
            "start": "2026-03-02T11:00",
            "end": "2026-03-02T12:00",
            "attendees": [A],
            "location": "Room 4",
        },
        {
            "id": "e3",
            "title": "Offsite",
            "start": "2026-03-02T14:00",
            "end": "2026-03-02T16:00",
            "attendees": [B],
            "status": "cancelled",
        },
        {"id": "e4", "title": "Planning", "start": "2026-03-03T10:00", "end": "2026-03-03T11:00", "attendees": [B]},
    ]
}


@pytest.fixture
def svc() -> Calendar:
    return Calendar(Calendar.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Calendar,
        {
            "calendar_list_events": "read",
            "calendar_get_event": "read",
            "calendar_find_free_slots": "read",
            "calendar_create_event": "write",
            "calendar_update_event": "write",
            "calendar_cancel_event": "write",
        },
    )


def test_list_events_filters(svc):
    ids = lambda r: [e["id"] for e in r["events"]]  # noqa: E731
    assert ids(svc.list_events(start_date="2026-03-02", end_date="2026-03-02")) == ["e1", "e2"]
    assert ids(svc.list_events(start_date="2026-03-02", end_date="2026-03-02", include_cancelled=True)) == [
        "e1",
        "e2",
        "e3",
    ]
    assert ids(svc.list_events(attendee=B)) == ["e1", "e4"]
    assert ids(svc.list_events(query="budget")) == ["e2"]
    page = svc.list_events(limit=1, offset=1)
    assert ids(page) == ["e2"] and page["total"] == 3 and page["next_offset"] == 2
    with pytest.raises(ToolError):
        svc.list_events(start_date="March 2")


def test_find_free_slots(svc):
    res = svc.find_free_slots(attendees=[A, B], date="2026-03-02", duration_minutes=60, day_end="13:00")
    # busy 9:00-9:30 (both) and 11:00-12:00 (ana); the cancelled offsite does not block
    assert [s["start"][11:] for s in res["slots"]] == ["09:30", "10:00", "12:00"]
    afternoon = svc.find_free_slots(attendees=[B], date="2026-03-02", duration_minutes=120, day_start="14:00")
    assert afternoon["slots"][0] == {"start": "2026-03-02T14:00", "end": "2026-03-02T16:00"}
    with pytest.raises(ToolError):
        svc.find_free_slots(attendees=[], date="2026-03-02")


def test_create_update_cancel_copy_on_write(svc):
    created = svc.create_event(title="1:1", start="2026-03-04T10:00", end="2026-03-04T10:30", attendees=[A])
    assert svc.get_event(event_id=created["id"])["organizer"] == "me"
    old = svc.db["events"]["e2"]
    svc.update_event(event_id="e2", start="2026-03-02T13:00", end="2026-03-02T14:00")
    assert old["start"] == "2026-03-02T11:00" and svc.db["events"]["e2"]["start"] == "2026-03-02T13:00"
    svc.cancel_event(event_id="e2")
    assert svc.db["events"]["e2"]["status"] == "cancelled"
    with pytest.raises(ToolError):
        svc.cancel_event(event_id="e2")


def test_validation(svc):
    with pytest.raises(ToolError, match="after start"):
        svc.create_event(title="x", start="2026-03-04T10:00", end="2026-03-04T09:00")
    with pytest.raises(ToolError):
        svc.create_event(title="x", start="tomorrow", end="2026-03-04T09:00")
    with pytest.raises(ToolError):
        svc.create_event(title="x", start="2026-03-04T10:00", end="2026-03-04T11:00", attendees=["bob"])
    with pytest.raises(ToolError, match="after start"):
        svc.update_event(event_id="e1", end="2026-03-02T08:00")
    with pytest.raises(ToolError):
        svc.update_event(event_id="e1")
    with pytest.raises(ToolError):
        svc.get_event(event_id="nope")
