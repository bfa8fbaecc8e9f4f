"""Calendar steps: find a meeting in a date window among look-alikes, then cancel, move or extend it.

``locate_event`` finds a meeting with a colleague by its title on one day: the same title
a week later, a cancelled one, and another meeting that day look alike. It binds ``event``
and the colleague (``person``), and the report states the meeting's start time. The acts
cancel it, move it to the first slot both people are free the next working day, or invite
one more person.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.draft import stated
from coworkenv.synth.steps.base import Chain, Step
from coworkenv.synth.steps.people import colleague
from coworkenv.synth.world import busy_morning, free_slots

TOPICS = ("roadmap review", "budget check-in", "hiring sync", "design critique", "vendor review", "launch prep")
HOURS = ("09:00", "10:30", "13:00", "14:30", "16:00")


class Meeting(Step):
    """A meeting with a colleague on a day, by its title (the same title a week later, a cancelled copy)."""

    kind = "locate"
    name = "locate_event"
    gives: ClassVar[tuple[str, ...]] = ("event", "person")

    def apply(self, chain: Chain) -> None:
        world = chain.world
        who = colleague(chain)
        topic, other = world.rng.sample(TOPICS, 2)
        offset = world.rng.randrange(1, 8)
        day, hour = world.day(offset), world.rng.choice(HOURS)
        people = [world.me.email, who.email]
        title = f"{topic.capitalize()} with {who.first}"

        def event(when: str, at: str, name: str, **extra: object) -> dict[str, object]:
            record = {"title": name, "start": f"{when}T{at}", "end": world.at(when, at, 45), "attendees": people}
            return world.add("calendar", "events", record | extra)

        target = event(day, hour, title)
        event(world.day(offset + 5), hour, title)
        event(day, "08:00" if hour != "08:00" else "17:00", title, status="cancelled")
        event(day, "11:30" if hour != "11:30" else "15:00", f"{other.capitalize()} with {who.first}")
        chain.facts["day"] = stated("day", day)
        chain.facts["topic"] = stated("topic", topic)
        chain.subject = f"the {topic} with {who.name}"
        args = {"query": "${facts.topic}", "start_date": "${facts.day}", "end_date": "${facts.day}"}
        chain.call("calendar_list_events", args, save_as="agenda")
        chain.bind("event", target, "${agenda.events[0].id}", "calendar", "events")
        chain.report_found(hour, f"It starts at {hour}.")
        chain.clause(
            "find my {topic} with {person} on {day} and tell me what time it starts",
            "look up the {topic} I have with {person} on {day} and check its start time",
            "check when my {day} {topic} with {person} starts",
        )


class EventDetails(Step):
    """The meeting in full (attendees, location)."""

    kind = "read"
    name = "read_event"
    needs: ClassVar[tuple[str, ...]] = ("event",)

    def apply(self, chain: Chain) -> None:
        chain.call("calendar_get_event", {"event_id": chain.need("event").ref})
        chain.clause("open the invite", "look at the invite itself", "check the event's details")


class Cancel(Step):
    """Cancel the meeting."""

    kind = "act"
    name = "act_cancel_event"
    needs: ClassVar[tuple[str, ...]] = ("event",)
    gives: ClassVar[tuple[str, ...]] = ("decision",)

    def apply(self, chain: Chain) -> None:
        event = chain.need("event")
        chain.update("calendar_cancel_event", {"event_id": event.ref}, event, {"status": "cancelled"}, "cancelled")
        chain.bind("decision", {"status": "cancelled"}, event.ref, "calendar")
        chain.clause("cancel the meeting", "call the meeting off", "cancel that meeting")


class Move(Step):
    """Move the meeting to the first slot both people are free the next working day."""

    kind = "act"
    name = "act_move_event"
    needs: ClassVar[tuple[str, ...]] = ("event", "person")
    gives: ClassVar[tuple[str, ...]] = ("decision",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        event, person = chain.need("event"), chain.need("person")
        day = str(event.record["start"])[:10]
        offset = next(i for i in range(1, 12) if world.day(i) > day)
        nxt = world.day(offset)
        busy_morning(world, nxt, (world.me,))
        people = [world.me.email, person.record["email"]]
        slot = free_slots(world, people, nxt, 45)[0]
        chain.facts["next_day"] = stated("next_day", nxt)
        args = {"attendees": [world.me.email, "${who.contacts[0].email}"], "date": "${facts.next_day}"}
        chain.call("calendar_find_free_slots", args | {"duration_minutes": 45}, save_as="slots")
        moved = {"event_id": event.ref, "start": "${slots.slots[0].start}", "end": "${slots.slots[0].end}"}
        chain.update("calendar_update_event", moved, event, {"start": slot["start"], "end": slot["end"]}, "moved")
        chain.bind("decision", {"status": "moved"}, event.ref, "calendar")
        chain.report.append(f"I moved it to {slot['start']}.")
        chain.clause(
            "move the meeting to the first 45-minute slot we are both free on {next_day}",
            "push the meeting to the earliest 45-minute slot on {next_day} that works for both of us",
            "reschedule it to our first common free 45 minutes on {next_day}",
        )


LOCATE: tuple[Step, ...] = (Meeting(),)
START: tuple[Step, ...] = ()
READ: tuple[Step, ...] = (EventDetails(),)
ACT: tuple[Step, ...] = (Cancel(), Move())
