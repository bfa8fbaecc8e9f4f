"""Onboarding across services: directory entry, document share, welcome post, intro meeting."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact, stated
from coworkenv.synth.expr_builder import and_, arg, field, path
from coworkenv.synth.rules import require_prior
from coworkenv.synth.world import DEPARTMENTS, TITLES, Person, World

OPENINGS = [
    "{hire} ({email}) joins {dept} as {title} {start}. Please add them to the directory with {manager} as "
    "their manager, share the {dept} onboarding checklist with them, post a welcome in #{channel}, and "
    "book a 30-minute intro with {manager} on their first day {time}.",
    "New hire: {hire}, {title} in {dept}, email {email}, starting {start}. Add them to the directory "
    "(manager: {manager}), share the {dept} onboarding checklist, welcome them in #{channel}, and set up "
    "a 30-minute intro with {manager} {time} on day one.",
    "Please get {hire} set up: they join {dept} as {title} {start} ({email}). Directory entry with "
    "{manager} as manager, the {dept} onboarding checklist shared with them, a welcome post in "
    "#{channel}, and a 30-minute intro with {manager} on their first day {time}.",
]
POLICY = require_prior(
    "share-with-directory",
    "documents_share",
    "contacts_create",
    "Only share documents with people who are in the company directory.",
    prior_when=path("prior", "email").eq(arg("email")),
)


class Onboarding(Blueprint):
    name = "onboarding"
    summary = "onboard a new hire: directory entry with manager, share the checklist, welcome post, intro meeting"
    capabilities = ("tool_coordination", "workflow_compliance")
    options: ClassVar[frozenset[str]] = frozenset()

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        dept = rng.choice(DEPARTMENTS)
        title = rng.choice(TITLES[dept])
        manager = world.person(dept, title=f"{dept} Manager")
        hire = world.person(dept, title=title, manager=manager)
        world.contacts(manager, extra=3)
        channel = f"{dept.lower()}-team"
        _chat(world, channel, manager)
        doc = _checklists(world, dept)
        start = world.day(rng.randrange(3, 10))
        time = rng.choice(("10:00", "11:00", "14:00", "15:30"))
        draft = _draft(self, world, hire, manager, channel, start, time)
        end = world.at(start, time, 30)
        _onboard(draft, world, hire, manager, channel, end)
        world.ensure("calendar", "events")
        _checks(draft, hire, manager, channel, doc["id"], f"{start}T{time}", end)
        return draft


def _chat(world: World, channel: str, manager: Person) -> None:
    for name in (channel, "general", "random"):
        world.add("chat", "channels", {"name": name, "members": [world.me.email], "topic": f"{name} chatter"})
    post = {"channel": channel, "author": manager.email, "text": "Standup moved to 10:00."}
    world.add("chat", "messages", {**post, "ts": f"{world.day(-1)}T09:00"})


def _checklists(world: World, dept: str) -> dict[str, Any]:
    """Onboarding checklists of four departments (the hire's returned) and an offboarding one."""
    docs = {}
    for d in [*world.rng.sample([d for d in DEPARTMENTS if d != dept], 3), dept]:
        doc = {"path": f"/HR/Onboarding/{d} checklist", "title": f"{d} onboarding checklist", "updated": world.day(-40)}
        content = f"1. Laptop setup\n2. Meet the {d} team\n3. Read the {d} handbook"
        docs[d] = world.add("documents", "documents", {**doc, "content": content})
    offboarding = {"path": "/HR/Offboarding checklist", "content": "Return the laptop.", "updated": world.day(-40)}
    world.add("documents", "documents", offboarding)
    return docs[dept]


def _draft(bp: Blueprint, world: World, hire: Person, manager: Person, channel: str, start: str, time: str) -> Draft:
    dept, title = hire.department, hire.title
    facts = {
        "hire": stated("hire", hire.name, "name"),
        "email": stated("email", hire.email),
        "dept": stated("dept", dept, "department"),
        "title": stated("title", title),
        "manager": stated("manager", manager.name),
        "channel": stated("channel", channel),
    }
    facts["start"] = Fact(
        "start",
        start,
        f"on {start}",
        ["start", "first day", "when"],
        "When is their first day?",
        f"They start on {start}.",
        withheld="soon",
    )
    facts["time"] = Fact(
        "time", time, f"at {time}", ["time", "what time"], "What time would you like the intro?", f"Make it {time}."
    )
    draft = Draft.start(bp.name, f"Onboard {hire.name}", world, OPENINGS, facts, set(bp.capabilities))
    draft.rules.append(POLICY)
    draft.summary = [hire.name, f"{start}T{time}"]
    return draft


def _onboard(draft: Draft, world: World, hire: Person, manager: Person, channel: str, end: str) -> None:
    """Directory entry, checklist share, welcome post, then the intro meeting (the key write)."""
    ref = draft.reference
    dept = hire.department
    ref.call("contacts_search", {"query": manager.name}, save_as="mgr")
    entry = {"name": hire.name, "email": hire.email, "title": hire.title, "department": dept}
    ref.call("contacts_create", {**entry, "company": world.company, "manager_email": "${mgr.contacts[0].email}"})
    ref.call("documents_search", {"query": f"onboarding {dept} checklist"}, save_as="doc")
    ref.call("documents_share", {"document_id": "${doc.documents[0].id}", "email": hire.email})
    ref.call("chat_post_message", {"channel": channel, "text": f"Please welcome {hire.name}, our new {hire.title}!"})
    intro = {"title": f"Intro: {hire.first} and {manager.first}", "start": "${facts.start}T${facts.time}", "end": end}
    ref.call("calendar_create_event", {**intro, "attendees": [hire.email, "${mgr.contacts[0].email}"]}, role="main")
    ref.answer(
        f"{hire.name} is in the directory under {manager.name}, has the {dept} checklist, was "
        f"welcomed in #{channel}, and has an intro with {manager.first} on ${{facts.start}} at "
        "${facts.time}."
    )


def _checks(draft: Draft, hire: Person, manager: Person, channel: str, doc: str, start: str, end: str) -> None:
    c = draft.checks
    entry = and_(
        field("email").eq(hire.email), field("manager_email").eq(manager.email), field("department").eq(hire.department)
    )
    c.record_exists("in_directory", "contacts", "contacts", entry, 2.0)
    shared = field("id").eq(doc) & field("shared_with").has(hire.email)
    c.record_exists("shared", "documents", "documents", shared, 1.5)
    welcomed = field("channel").eq(channel) & field("text").contains(hire.first)
    c.record_exists("welcomed", "chat", "messages", welcomed)
    intro = and_(
        field("start").eq(start),
        field("end").eq(end),
        field("attendees").has(hire.email),
        field("attendees").has(manager.email),
    )
    c.record_exists("intro", "calendar", "events", intro, 2.0)
    c.unchanged("docs_guard", "documents", "documents", field("id").eq(doc), 1.5)
    c.unchanged("contacts_guard", "contacts", "contacts", field("email").eq(hire.email))
