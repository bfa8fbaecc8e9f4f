"""A synthetic workplace: the company, the user, people, dates, money and fixture records.

One World per generated spec, seeded: Faker makes the names, companies and phrases, a
``random.Random`` makes every other choice, so the same seed gives the same world. The
fixture builder assigns ids the way the services do (``msg-1``, ``tkt-3``), so records the
agent creates later continue the sequence.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from coworkenv.services.calendar import Calendar
from coworkenv.services.registry import service_class
from coworkenv.spec.declared import ServiceDecl
from coworkenv.synth.fake import generator

DEPARTMENTS = ("Engineering", "Sales", "Finance", "Marketing", "Operations", "Support", "People", "Legal")
TITLES = {
    "Engineering": ("Software Engineer", "Engineering Manager", "Site Reliability Engineer", "QA Engineer"),
    "Sales": ("Account Executive", "Sales Manager", "Sales Engineer", "Account Manager"),
    "Finance": ("Accountant", "Finance Manager", "Controller", "Payroll Specialist"),
    "Marketing": ("Marketing Manager", "Content Strategist", "Product Marketer", "Designer"),
    "Operations": ("Operations Lead", "Office Manager", "Procurement Specialist", "Operations Analyst"),
    "Support": ("Support Engineer", "Support Lead", "Customer Success Manager", "Technical Writer"),
    "People": ("Recruiter", "HR Business Partner", "People Operations Manager", "Talent Partner"),
    "Legal": ("Counsel", "Paralegal", "Contracts Manager", "Compliance Officer"),
}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


@lru_cache(maxsize=8192)
def _working_day(today: date, offset: int) -> str:
    """The ISO date ``offset`` working days from ``today`` (a blueprint asks for a dozen days of one world, and
    worlds share their todays: a bank's worth of days fits the cache)."""
    d = today
    step = 1 if offset >= 0 else -1
    for _ in range(abs(offset)):
        d += timedelta(days=step)
        while d.weekday() >= 5:
            d += timedelta(days=step)
    return d.isoformat()


@dataclass(frozen=True)
class Person:
    name: str
    email: str
    title: str
    department: str
    manager_email: str | None = None
    company: str = ""

    @property
    def first(self) -> str:
        return self.name.split()[0]

    def contact(self) -> dict[str, Any]:
        """A contacts-service record body."""
        return {
            "name": self.name,
            "email": self.email,
            "title": self.title,
            "department": self.department,
            "manager_email": self.manager_email,
            "company": self.company,
        }


@dataclass
class World:
    seed: int
    rng: random.Random = field(init=False)
    fake: Any = field(init=False)
    fixtures: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    declared: dict[str, ServiceDecl] = field(default_factory=dict)
    """Services this world declares as data (domains), by name: the spec declares them too."""

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.fake = generator()
        self.fake.seed_instance(self.seed)
        self._names: set[str] = set()
        self.company = self.fake.company().replace(",", "")
        self.domain = f"{_slug(self.company.split()[0].split('-')[0])[:12] or 'corp'}.com"
        self.today = date(2025, 1, 6) + timedelta(days=self.rng.randrange(0, 420))
        while self.today.weekday() >= 5:
            self.today += timedelta(days=1)
        dept = self.rng.choice(DEPARTMENTS)
        self.boss = self.person(dept, title=self.rng.choice((*TITLES[dept][1:2], "Director of " + dept)))
        self.me = self.person(dept, manager=self.boss)

    # --- people, companies, time and money --------------------------------------------------

    def person(
        self,
        department: str | None = None,
        *,
        manager: Person | None = None,
        title: str | None = None,
        domain: str | None = None,
        company: str | None = None,
        first: str | None = None,
    ) -> Person:
        """A new person with a name unique in this world."""
        dept = department or self.rng.choice(DEPARTMENTS)
        while True:
            last = self.fake.last_name()
            name = f"{first or self.fake.first_name()} {last}"
            if name not in self._names and "'" not in name and _slug(last) not in _slug(self.company):
                break
        self._names.add(name)
        first_name, last = name.split(" ", 1)
        email = f"{_slug(first_name)}.{_slug(last)}@{domain or self.domain}"
        return Person(
            name,
            email,
            title or self.rng.choice(TITLES[dept]),
            dept,
            manager.email if manager else None,
            company if company is not None else self.company,
        )

    def claim(self, name: str) -> bool:
        """Take ``name`` for a new person or company of this world; False if it is taken already."""
        if name in self._names:
            return False
        self._names.add(name)
        return True

    def customer(self) -> tuple[str, str]:
        """An outside company's name and mail domain, distinct from ours."""
        while True:
            name = self.fake.company().replace(",", "")
            word = _slug(name.split()[0].split("-")[0])[:12]
            if name not in self._names and word and f"{word}.com" != self.domain:
                self._names.add(name)
                return name, f"{word}.io"

    def day(self, offset: int) -> str:
        """The ISO date ``offset`` working days from today."""
        return _working_day(self.today, offset)

    @staticmethod
    def at(day: str, hhmm: str, minutes: int = 0) -> str:
        """``YYYY-MM-DDTHH:MM`` of a day and time, plus ``minutes``."""
        t = datetime.fromisoformat(f"{day}T{hhmm}") + timedelta(minutes=minutes)
        return t.strftime("%Y-%m-%dT%H:%M")

    @staticmethod
    def weekday(day: str) -> str:
        return date.fromisoformat(day).strftime("%A")

    def money(self, lo: float, hi: float) -> float:
        return round(self.rng.uniform(lo, hi), 2)

    def context(self) -> str:
        return (
            f"You work for {self.me.name} ({self.me.email}), {self.me.title} at {self.company}. "
            f"Today is {self.weekday(self.today.isoformat())} {self.today.isoformat()}."
        )

    def persona(self) -> str:
        return f"{self.me.name}, {self.me.title} at {self.company}"

    # --- fixtures ---------------------------------------------------------------------------

    def add(self, service: str, collection: str, record: dict[str, Any]) -> dict[str, Any]:
        """Add a fixture record with the next id of its collection; returns it (with its id)."""
        rows = self.fixtures.setdefault(service, {}).setdefault(collection, [])
        prefix = service_class(service, self.declared).id_prefix.get(collection, collection[:3])
        rec = {"id": f"{prefix}-{len(rows) + 1}", **record}
        rows.append(rec)
        return rec

    def ensure(self, service: str, *collections: str) -> None:
        """Make sure a service (and collections) exist even when they hold no records."""
        colls = self.fixtures.setdefault(service, {})
        for c in collections:
            colls.setdefault(c, [])

    def contacts(self, *people: Person, extra: int = 3) -> None:
        """Directory entries for ``people`` (and the user and their manager) plus ``extra`` colleagues, shuffled."""
        everyone = [*people, self.me, self.boss, *(self.person() for _ in range(extra))]
        self.rng.shuffle(everyone)
        listed = {c["email"] for c in self.fixtures.get("contacts", {}).get("contacts", [])}
        for p in everyone:
            if p.email not in listed:
                listed.add(p.email)
                self.add("contacts", "contacts", p.contact())

    def mail(self, sender: str, subject: str, body: str, day: str, **extra: object) -> dict[str, Any]:
        return self.add(
            "mail",
            "messages",
            {"sender": sender, "to": [self.me.email], "subject": subject, "body": body, "date": day, **extra},
        )

    def noise_mail(self, n: int) -> None:
        """Unrelated mail: newsletters and chatter from colleagues."""
        for _ in range(n):
            who = self.person()
            self.mail(
                who.email,
                self.fake.catch_phrase(),
                self.fake.paragraph(nb_sentences=2),
                self.day(-self.rng.randrange(1, 15)),
                unread=self.rng.random() < 0.5,
            )


def free_slots(
    world: World, attendees: list[str], day: str, minutes: int, extra: tuple[dict[str, Any], ...] = ()
) -> list[dict[str, str]]:
    """The calendar's own answer to 'when are these people free' on the fixtures so far (plus ``extra``)."""
    events = [*world.fixtures.get("calendar", {}).get("events", []), *extra]
    cal = Calendar(Calendar.normalize_fixtures({"events": events}))
    slots: list[dict[str, str]] = cal.find_free_slots(attendees, day, minutes)["slots"]
    return slots


TEAMS = ("platform", "payments", "web", "mobile", "data", "identity", "search", "infra")


def noise_tickets(world: World, n: int, teams: tuple[str, ...] = TEAMS) -> None:
    """Unrelated tickets across teams, in assorted states."""
    for _ in range(n):
        world.add(
            "tickets",
            "tickets",
            {
                "title": world.fake.catch_phrase(),
                "description": world.fake.sentence(),
                "team": world.rng.choice(teams),
                "status": world.rng.choice(("open", "in_progress", "resolved", "closed")),
                "priority": world.rng.choice(("low", "medium", "high")),
                "created": world.day(-world.rng.randrange(1, 20)),
            },
        )


def busy_morning(world: World, day: str, people: tuple[Person, ...]) -> None:
    """Back-to-back meetings from 09:00, one per person in turn, over by 15:00 (so free slots remain)."""
    start = "09:00"
    for who in people:
        length = world.rng.choice((30, 60, 90))
        world.add(
            "calendar",
            "events",
            {
                "title": world.fake.catch_phrase(),
                "start": world.at(day, start),
                "end": world.at(day, start, length),
                "attendees": [who.email],
            },
        )
        start = world.at(day, start, length + world.rng.choice((0, 30)))[11:]


def manager_change(world: World, who: Person, new: Person) -> dict[str, object]:
    """An event: ``who`` now reports to ``new`` (added to the directory), right after the first directory search."""
    world.contacts(new, extra=0)
    cid = next(c["id"] for c in world.fixtures["contacts"]["contacts"] if c["email"] == who.email)
    return {
        "id": "new-manager",
        "on_tool": "contacts_search",
        "notify": f"HR update: {who.name} now reports to {new.name}.",
        "mutations": [
            {
                "service": "contacts",
                "collection": "contacts",
                "op": "update",
                "id": cid,
                "record": {"manager_email": new.email},
            }
        ],
    }


def slot_taken(world: World, who: str, slot: dict[str, str], notify: str) -> dict[str, Any]:
    """An event that books ``who`` into ``slot`` right after the agent first looks for free slots."""
    record = {
        "id": "evt-x1",
        "title": "Customer escalation",
        "start": slot["start"],
        "end": slot["end"],
        "attendees": [who],
        "organizer": who,
    }
    return {
        "id": "slot-taken",
        "on_tool": "calendar_find_free_slots",
        "notify": notify,
        "mutations": [{"service": "calendar", "collection": "events", "op": "insert", "record": record}],
    }
