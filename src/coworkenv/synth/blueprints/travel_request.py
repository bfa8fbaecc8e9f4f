"""Travel request: block the trip on the calendar, file the fare as a travel expense, get approval."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World


class TravelRequest(Blueprint):
    name = "travel_request"
    summary = "block a business trip on the calendar, expense the quoted fare and request the manager's approval"
    options: ClassVar[frozenset[str]] = frozenset({"aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng, me, boss = world.rng, world.me, world.boss
        customer, _ = world.customer()
        cities = rng.sample(("Lisbon", "Denver", "Toronto", "Osaka", "Nairobi", "Austin", "Lyon", "Perth"), 3)
        city = cities[0]
        out = rng.randrange(5, 15)
        depart, back = world.day(out), world.day(out + rng.randrange(1, 4))
        fare = world.money(250, 1400)
        for cat, limit in (("travel", 2000.0), ("meals", 100.0), ("lodging", 300.0)):
            world.add("expenses", "rules", {"category": cat, "limit": limit, "needs_receipt": True})
        for _ in range(rng.randrange(1, 3)):
            world.add(
                "expenses",
                "expenses",
                {
                    "employee": me.email,
                    "amount": world.money(20, 90),
                    "category": "meals",
                    "description": world.fake.bs(),
                    "date": world.day(-5),
                    "status": "submitted",
                    "receipt": True,
                },
            )
        for c in cities[1:]:
            world.mail(
                "quotes@travel-desk.example",
                f"Fare quote: {c}",
                f"Round trip to {c}: {world.money(250, 1400):.2f} USD, economy.",
                world.day(-2),
            )
        quote = world.mail(
            "quotes@travel-desk.example",
            f"Fare quote: {city}",
            f"Round trip to {city} departing {depart}, returning {back}: {fare:.2f} USD, economy.",
            world.day(-1),
        )
        world.noise_mail(rng.randrange(1, 3))
        world.contacts(extra=2)
        world.add(
            "calendar",
            "events",
            {
                "title": "Weekly 1:1",
                "start": world.at(depart, "10:00"),
                "end": world.at(depart, "10:30"),
                "attendees": [me.email, boss.email],
            },
        )
        title = f"Trip to {city} ({customer})"
        draft = Draft(
            blueprint=self.name,
            title=f"Travel request: {city}",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "I'm flying to {city} to visit {customer}{dates}. Please block my calendar for the trip, file the "
                "fare from the travel desk's quote in my inbox as a travel expense, submit it and ask my manager to "
                "approve it.",
                "Trip to {city} for {customer}{dates}: put it on my calendar, expense the quoted fare (the quote "
                "is in my mail) under travel, submit it and request my manager's approval.",
                "Please sort out the admin for my {city} trip ({customer}){dates}: calendar block for the whole "
                "trip, the fare from the travel desk quote in my inbox filed and submitted as a travel expense, "
                "and my manager's approval requested.",
            ],
            facts={
                "city": Fact("city", city, city, ["city"], "", "", withholdable=False),
                "customer": Fact("customer", customer, customer, ["customer"], "", "", withholdable=False),
                "dates": Fact(
                    "dates",
                    depart,
                    f", leaving {depart} and back {back}",
                    ["dates", "when", "leave"],
                    "When do you leave?",
                    f"I leave on {depart} and I'm back on {back}.",
                ),
            },
            reference=[
                {"call": "mail_search", "args": {"query": f"fare quote {city}"}, "save_as": "q"},
                {"call": "mail_read", "args": {"message_id": "${q.messages[0].id}"}},
                {
                    "call": "calendar_create_event",
                    "args": {"title": title, "start": "${facts.dates}T09:00", "end": f"{back}T17:00"},
                },
                {"call": "contacts_search", "args": {"query": me.name}, "save_as": "me"},
                {
                    "call": "expenses_create_expense",
                    "save_as": "exp",
                    "args": {
                        "employee": me.email,
                        "amount": fare,
                        "category": "travel",
                        "date": "${facts.dates}",
                        "description": f"Flight to {city} to visit {customer}",
                        "receipt": True,
                    },
                },
                {"call": "expenses_submit", "args": {"expense_id": "${exp.id}"}},
                {
                    "call": "expenses_request_approval",
                    "_main": True,
                    "args": {"expense_id": "${exp.id}", "approver": "${me.contacts[0].manager_email}"},
                },
            ],
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("mail", "messages", quote["id"], "body")],
            summary=[city, f"{fare:.2f}"],
        )
        answer = (
            f"Your {city} trip is on the calendar ({depart} to {back}) and the {fare:.2f} USD fare is filed "
            f"as ${{exp.id}}, waiting for {boss.name}'s approval."
        )
        if "aggregate" in options:
            draft.reference.append(
                {
                    "call": "calendar_list_events",
                    "save_as": "cal",
                    "args": {"start_date": depart, "end_date": back, "attendee": me.email},
                }
            )
            clashes = sum(
                1
                for e in world.fixtures["calendar"]["events"]
                if e["start"][:10] <= back and e["end"][:10] >= depart and me.email in e["attendees"]
            )
            answer += " You have ${cal.total} meetings during the trip to move."
            draft.ask_figure("And tell me how many meetings I have during the trip.", "clashes_told", clashes)
        draft.reference.append({"answer": answer})
        mine = f"r.employee == '{me.email}' and r.category == 'travel' and r.amount == {fare}"
        draft.check(
            "record_exists",
            "expensed",
            3.0,
            service="expenses",
            collection="expenses",
            where=f"{mine} and r.status == 'pending_approval' and r.approver == '{boss.email}'",
        )
        draft.check(
            "record_exists",
            "blocked",
            2.0,
            service="calendar",
            collection="events",
            where=f"r.title == '{title}' and startswith(r.start, '{depart}') and startswith(r.end, '{back}')",
        )
        draft.check("count", "filed_once", 1.0, service="expenses", collection="expenses", where=mine, value=1)
        draft.check("unchanged", "expenses_guard", 1.5, service="expenses", collection="expenses", allow=mine)
        draft.check(
            "unchanged", "calendar_guard", 1.0, service="calendar", collection="events", allow=f"r.title == '{title}'"
        )
        draft.check("answer_contains", "told_fare", 1.0, values=[f"{fare:.2f}"])
        return draft
