"""What the scheduling blueprints share: finding the earliest common slot and booking it.

Meeting and interview scheduling both look up free slots, optionally lose the first one to
a mid-episode booking (the ``dynamic`` option) and book what is left; the booking check
requires everyone invited at exactly that slot.
"""

from __future__ import annotations

from coworkenv.synth.draft import Draft
from coworkenv.synth.expr_builder import Expr, and_, field
from coworkenv.synth.world import Person, World, free_slots, slot_taken

TAKER = "evt-x1"
"""The id of the event a mid-episode booking inserts (the guard allows it)."""


def find_slot(draft: Draft, attendees: list[str], day: str, minutes: str) -> None:
    """Ask the calendar for the attendees' free slots (role ``find``)."""
    args = {"attendees": attendees, "date": day, "duration_minutes": minutes}
    draft.reference.call("calendar_find_free_slots", args, save_as="free", role="find")


def lose_first_slot(
    draft: Draft, world: World, who: Person, emails: list[str], slot: dict[str, str], day: str, minutes: int, say: str
) -> dict[str, str]:
    """The ``dynamic`` option: ``who`` is booked into ``slot`` once the agent looked; look again.

    Returns the slot that is then the earliest.
    """
    event = slot_taken(world, who.email, slot, f"Calendar update: {who.name} just accepted another meeting on {day}.")
    draft.events.append(event)
    draft.reference.again("find", say)
    return free_slots(world, emails, day, minutes, (event["mutations"][0]["record"],))[0]


def book(draft: Draft, title: str, attendees: list[str]) -> None:
    """Book the first free slot found (the key write)."""
    args = {"title": title, "start": "${free.slots[0].start}", "end": "${free.slots[0].end}", "attendees": attendees}
    draft.reference.call("calendar_create_event", args, role="main")


def at_slot(slot: dict[str, str], emails: list[str]) -> Expr:
    """An event at exactly ``slot`` with all of ``emails`` invited."""
    return and_(
        field("start").eq(slot["start"]), field("end").eq(slot["end"]), *(field("attendees").has(e) for e in emails)
    )


def guard_calendar(draft: Draft, title: str, weight: float) -> None:
    """No other calendar change than the booking (and the mid-episode one)."""
    allow = field("title").eq(title) | field("id").eq(TAKER)
    draft.checks.unchanged("calendar_guard", "calendar", "events", allow, weight)
