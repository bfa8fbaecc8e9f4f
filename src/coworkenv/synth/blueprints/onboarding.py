"""Onboarding across services: directory entry, document share, welcome post, intro meeting."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import DEPARTMENTS, TITLES, World


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
        for name in (channel, "general", "random"):
            world.add("chat", "channels", {"name": name, "members": [world.me.email], "topic": f"{name} chatter"})
        world.add(
            "chat",
            "messages",
            {
                "channel": channel,
                "author": manager.email,
                "text": "Standup moved to 10:00.",
                "ts": f"{world.day(-1)}T09:00",
            },
        )
        docs = {}
        for d in [*rng.sample([d for d in DEPARTMENTS if d != dept], 3), dept]:
            docs[d] = world.add(
                "documents",
                "documents",
                {
                    "path": f"/HR/Onboarding/{d} checklist",
                    "title": f"{d} onboarding checklist",
                    "updated": world.day(-40),
                    "content": f"1. Laptop setup\n2. Meet the {d} team\n3. Read the {d} handbook",
                },
            )
        world.add(
            "documents",
            "documents",
            {"path": "/HR/Offboarding checklist", "content": "Return the laptop.", "updated": world.day(-40)},
        )
        start = world.day(rng.randrange(3, 10))
        time = rng.choice(("10:00", "11:00", "14:00", "15:30"))
        doc = docs[dept]
        draft = Draft(
            blueprint=self.name,
            title=f"Onboard {hire.name}",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "{hire} ({email}) joins {dept} as {title} {start}. Please add them to the directory with {manager} as "
                "their manager, share the {dept} onboarding checklist with them, post a welcome in #{channel}, and "
                "book a 30-minute intro with {manager} on their first day {time}.",
                "New hire: {hire}, {title} in {dept}, email {email}, starting {start}. Add them to the directory "
                "(manager: {manager}), share the {dept} onboarding checklist, welcome them in #{channel}, and set up "
                "a 30-minute intro with {manager} {time} on day one.",
                "Please get {hire} set up: they join {dept} as {title} {start} ({email}). Directory entry with "
                "{manager} as manager, the {dept} onboarding checklist shared with them, a welcome post in "
                "#{channel}, and a 30-minute intro with {manager} on their first day {time}.",
            ],
            facts={
                "hire": Fact("hire", hire.name, hire.name, ["name"], "", "", withholdable=False),
                "email": Fact("email", hire.email, hire.email, ["email"], "", "", withholdable=False),
                "dept": Fact("dept", dept, dept, ["department"], "", "", withholdable=False),
                "title": Fact("title", title, title, ["title"], "", "", withholdable=False),
                "manager": Fact("manager", manager.name, manager.name, ["manager"], "", "", withholdable=False),
                "channel": Fact("channel", channel, channel, ["channel"], "", "", withholdable=False),
                "start": Fact(
                    "start",
                    start,
                    f"on {start}",
                    ["start", "first day", "when"],
                    "When is their first day?",
                    f"They start on {start}.",
                    withheld="soon",
                ),
                "time": Fact(
                    "time",
                    time,
                    f"at {time}",
                    ["time", "what time"],
                    "What time would you like the intro?",
                    f"Make it {time}.",
                ),
            },
            reference=[
                {"call": "contacts_search", "args": {"query": manager.name}, "save_as": "mgr"},
                {
                    "call": "contacts_create",
                    "args": {
                        "name": hire.name,
                        "email": hire.email,
                        "title": title,
                        "department": dept,
                        "company": world.company,
                        "manager_email": "${mgr.contacts[0].email}",
                    },
                },
                {"call": "documents_search", "args": {"query": f"onboarding {dept} checklist"}, "save_as": "doc"},
                {"call": "documents_share", "args": {"document_id": "${doc.documents[0].id}", "email": hire.email}},
                {
                    "call": "chat_post_message",
                    "args": {"channel": channel, "text": f"Please welcome {hire.name}, our new {title}!"},
                },
                {
                    "call": "calendar_create_event",
                    "_main": True,
                    "args": {
                        "title": f"Intro: {hire.first} and {manager.first}",
                        "start": "${facts.start}T${facts.time}",
                        "end": "",
                        "attendees": [hire.email, "${mgr.contacts[0].email}"],
                    },
                },
                {
                    "answer": f"{hire.name} is in the directory under {manager.name}, has the {dept} checklist, was "
                    f"welcomed in #{channel}, and has an intro with {manager.first} on ${{facts.start}} at "
                    "${facts.time}."
                },
            ],
            checks=[],
            capabilities=set(self.capabilities),
            policies=[
                {
                    "id": "share-with-directory",
                    "tool": "documents_share",
                    "rule": "require_prior",
                    "prior_tool": "contacts_create",
                    "prior_when": "prior.email == args.email",
                    "description": "Only share documents with people who are in the company directory.",
                }
            ],
            summary=[hire.name, f"{start}T{time}"],
        )
        end = world.at(start, time, 30)
        draft.reference[5]["args"]["end"] = end
        world.ensure("calendar", "events")
        draft.check(
            "record_exists",
            "in_directory",
            2.0,
            service="contacts",
            collection="contacts",
            where=f"r.email == '{hire.email}' and r.manager_email == '{manager.email}' and r.department == '{dept}'",
        )
        draft.check(
            "record_exists",
            "shared",
            1.5,
            service="documents",
            collection="documents",
            where=f"r.id == '{doc['id']}' and '{hire.email}' in r.shared_with",
        )
        draft.check(
            "record_exists",
            "welcomed",
            1.0,
            service="chat",
            collection="messages",
            where=f"r.channel == '{channel}' and contains(r.text, '{hire.first}')",
        )
        draft.check(
            "record_exists",
            "intro",
            2.0,
            service="calendar",
            collection="events",
            where=f"r.start == '{start}T{time}' and r.end == '{end}' and '{hire.email}' in r.attendees and "
            f"'{manager.email}' in r.attendees",
        )
        draft.check(
            "unchanged", "docs_guard", 1.5, service="documents", collection="documents", allow=f"r.id == '{doc['id']}'"
        )
        draft.check(
            "unchanged",
            "contacts_guard",
            1.0,
            service="contacts",
            collection="contacts",
            allow=f"r.email == '{hire.email}'",
        )
        return draft
