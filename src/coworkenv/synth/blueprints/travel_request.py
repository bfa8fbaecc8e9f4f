"""Travel request: block the trip on the calendar, file the fare as a travel expense, get approval."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact, stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.world import World

CITIES = ("Lisbon", "Denver", "Toronto", "Osaka", "Nairobi", "Austin", "Lyon", "Perth")
DESK = "quotes@travel-desk.example"
OPENINGS = [
    "I'm flying to {city} to visit {customer}{dates}. Please block my calendar for the trip, file the "
    "fare from the travel desk's quote in my inbox as a travel expense, submit it and ask my manager to "
    "approve it.",
    "Trip to {city} for {customer}{dates}: put it on my calendar, expense the quoted fare (the quote "
    "is in my mail) under travel, submit it and request my manager's approval.",
    "Please sort out the admin for my {city} trip ({customer}){dates}: calendar block for the whole "
    "trip, the fare from the travel desk quote in my inbox filed and submitted as a travel expense, "
    "and my manager's approval requested.",
]


class TravelRequest(Blueprint):
    name = "travel_request"
    summary = "block a business trip on the calendar, expense the quoted fare and request the manager's approval"
    options: ClassVar[frozenset[str]] = frozenset({"aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng, me, boss = world.rng, world.me, world.boss
        customer, _ = world.customer()
        cities = rng.sample(CITIES, 3)
        city = cities[0]
        out = rng.randrange(5, 15)
        depart, back = world.day(out), world.day(out + rng.randrange(1, 4))
        fare = world.money(250, 1400)
        _expenses(world)
        quote = _quotes(world, cities, depart, back, fare)
        world.noise_mail(rng.randrange(1, 3))
        world.contacts(extra=2)
        one_on_one = {"title": "Weekly 1:1", "start": world.at(depart, "10:00"), "end": world.at(depart, "10:30")}
        world.add("calendar", "events", {**one_on_one, "attendees": [me.email, boss.email]})
        title = f"Trip to {city} ({customer})"
        draft = _draft(self, world, city, customer, depart, back, quote)
        draft.summary = [city, f"{fare:.2f}"]
        _request(draft, world, title, city, customer, back, fare)
        answer = (
            f"Your {city} trip is on the calendar ({depart} to {back}) and the {fare:.2f} USD fare is filed "
            f"as ${{exp.id}}, waiting for {boss.name}'s approval."
        )
        if "aggregate" in options:
            answer += _clashes(draft, world, depart, back)
        draft.reference.answer(answer)
        _checks(draft, world, title, depart, back, fare)
        return draft


def _expenses(world: World) -> None:
    """The expense rules and a few earlier meal claims of the user."""
    for cat, limit in (("travel", 2000.0), ("meals", 100.0), ("lodging", 300.0)):
        world.add("expenses", "rules", {"category": cat, "limit": limit, "needs_receipt": True})
    for _ in range(world.rng.randrange(1, 3)):
        claim = {"employee": world.me.email, "amount": world.money(20, 90), "category": "meals"}
        claim |= {"description": world.fake.bs(), "date": world.day(-5), "status": "submitted", "receipt": True}
        world.add("expenses", "expenses", claim)


def _quotes(world: World, cities: list[str], depart: str, back: str, fare: float) -> dict[str, Any]:
    """Fare quotes for other cities and the trip's (returned)."""
    for c in cities[1:]:
        body = f"Round trip to {c}: {world.money(250, 1400):.2f} USD, economy."
        world.mail(DESK, f"Fare quote: {c}", body, world.day(-2))
    body = f"Round trip to {cities[0]} departing {depart}, returning {back}: {fare:.2f} USD, economy."
    return world.mail(DESK, f"Fare quote: {cities[0]}", body, world.day(-1))


def _draft(
    bp: Blueprint, world: World, city: str, customer: str, depart: str, back: str, quote: dict[str, Any]
) -> Draft:
    facts = {
        "city": stated("city", city),
        "customer": stated("customer", customer),
        "dates": Fact(
            "dates",
            depart,
            f", leaving {depart} and back {back}",
            ["dates", "when", "leave"],
            "When do you leave?",
            f"I leave on {depart} and I'm back on {back}.",
        ),
    }
    readable = [("mail", "messages", quote["id"], "body")]
    return Draft.start(bp.name, f"Travel request: {city}", world, OPENINGS, facts, set(bp.capabilities), readable)


def _request(draft: Draft, world: World, title: str, city: str, customer: str, back: str, fare: float) -> None:
    """Read the quote, block the calendar, file and submit the fare, ask the manager to approve (the key write)."""
    ref = draft.reference
    ref.call("mail_search", {"query": f"fare quote {city}"}, save_as="q")
    ref.call("mail_read", {"message_id": "${q.messages[0].id}"})
    ref.call("calendar_create_event", {"title": title, "start": "${facts.dates}T09:00", "end": f"{back}T17:00"})
    ref.call("contacts_search", {"query": world.me.name}, save_as="me")
    claim = {"employee": world.me.email, "amount": fare, "category": "travel", "date": "${facts.dates}"}
    claim |= {"description": f"Flight to {city} to visit {customer}", "receipt": True}
    ref.call("expenses_create_expense", claim, save_as="exp")
    ref.call("expenses_submit", {"expense_id": "${exp.id}"})
    approval = {"expense_id": "${exp.id}", "approver": "${me.contacts[0].manager_email}"}
    ref.call("expenses_request_approval", approval, role="main")


def _clashes(draft: Draft, world: World, depart: str, back: str) -> str:
    """The ``aggregate`` option: how many of the user's meetings fall during the trip."""
    args = {"start_date": depart, "end_date": back, "attendee": world.me.email}
    draft.reference.call("calendar_list_events", args, save_as="cal")
    events = world.fixtures["calendar"]["events"]
    mine = [e for e in events if world.me.email in e["attendees"]]
    clashes = sum(1 for e in mine if e["start"][:10] <= back and e["end"][:10] >= depart)
    draft.ask_figure("And tell me how many meetings I have during the trip.", "clashes_told", clashes, label="meeting")
    return " You have ${cal.total} meetings during the trip to move."


def _checks(draft: Draft, world: World, title: str, depart: str, back: str, fare: float) -> None:
    mine = and_(field("employee").eq(world.me.email), field("category").eq("travel"), field("amount").eq(fare))
    pending = and_(mine, field("status").eq("pending_approval"), field("approver").eq(world.boss.email))
    draft.checks.record_exists("expensed", "expenses", "expenses", pending, 3.0)
    trip = and_(field("title").eq(title), field("start").startswith(depart), field("end").startswith(back))
    draft.checks.record_exists("blocked", "calendar", "events", trip, 2.0)
    draft.checks.count("filed_once", "expenses", "expenses", mine, 1)
    draft.checks.unchanged("expenses_guard", "expenses", "expenses", mine, 1.5)
    draft.checks.unchanged("calendar_guard", "calendar", "events", field("title").eq(title))
    draft.checks.answer_contains("told_fare", [f"{fare:.2f}"])
