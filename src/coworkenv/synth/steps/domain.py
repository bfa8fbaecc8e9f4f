"""Steps over a catalogue domain: find a record among look-alikes, read it, change it, log on it, tell someone.

The world declares one domain (:func:`coworkenv.synth.domain_records.plant`); these steps work on
whichever it is through the roles its fields play (name, facet, status, assignee, date, key).
A locate step binds ``item`` (the record, named at run time by the reference's search result) and
``assignee`` (who is in charge of it); every locate step plants look-alikes that match all but one
of what the request says, so acting on one of them fails.
"""

from __future__ import annotations

from datetime import date
from typing import ClassVar

from coworkenv.synth.domain_records import add, background, log_entry, other
from coworkenv.synth.domains import Domain, a, catalogue
from coworkenv.synth.draft import Fact, stated
from coworkenv.synth.expr_builder import field
from coworkenv.synth.steps.base import Binding, Chain, Record, Step

CHANNELS = ("ops-updates", "team-leads", "facilities-desk", "it-helpdesk", "daily-standup")
SAVE = "found"


def domain_of(chain: Chain) -> Domain:
    """The catalogue domain the chain's world declares."""
    names = [n for n in chain.world.declared if n in catalogue()]
    if len(names) != 1:
        raise ValueError(f"a domain chain needs a world that declares one catalogue domain, not {names}")
    return catalogue()[names[0]]


def noun(domain: Domain) -> str:
    """What one record is called, as a request says it."""
    return domain.record.replace("_", " ")


def _found(chain: Chain, domain: Domain, target: Record) -> None:
    """Bind the record the locate call found and the colleague in charge of it."""
    ref = f"${{{SAVE}.{domain.collection}[0].id}}"
    chain.bind("item", target, ref, domain.service)
    in_charge = ref.replace(".id}", f".{domain.assignee}}}")
    chain.bind("assignee", {"email": target[domain.assignee]}, in_charge, domain.service)
    chain.summary.append(target[domain.name])


def _unrelated(chain: Chain) -> int:
    """How many unrelated records the collection holds besides the target, its look-alikes and the spared ones."""
    return chain.world.rng.randint(6, 12)


class ItemByAttribute(Step):
    """The only record with one facet value and one status; look-alikes share one of the two."""

    kind = "locate"
    name = "locate_item_by_attribute"
    gives: ClassVar[tuple[str, ...]] = ("item", "assignee")

    def apply(self, chain: Chain) -> None:
        d, world = domain_of(chain), chain.world
        facet, status = world.rng.choice(d.facets), other(world, d.statuses, d.damage)
        target = add(world, d, **{d.facet: facet, d.status: status})
        add(world, d, **{d.facet: facet, d.status: other(world, d.statuses, status)})
        add(world, d, **{d.facet: other(world, d.facets, facet), d.status: status})
        background(world, d, _unrelated(chain), lambda r: r[d.facet] == facet and r[d.status] == status)
        chain.call(d.tool("list"), {d.facet: facet}, save_as=SAVE)  # the look-alike of another status is in view
        _found(chain, d, target)
        chain.facts["facet"] = stated("facet", facet)
        chain.facts["status"] = stated("status", status)
        chain.clause(
            f"find the {{status}} {noun(d)} in {{facet}}",
            f"look up the one {noun(d)} in {{facet}} that is {{status}}",
            f"pull up the {{facet}} {noun(d)} whose status is {{status}}",
        )


class ItemByName(Step):
    """By its name, which another record in another facet shares; the facet tells them apart."""

    kind = "locate"
    name = "locate_item_by_name"
    gives: ClassVar[tuple[str, ...]] = ("item", "assignee")

    def apply(self, chain: Chain) -> None:
        d, world = domain_of(chain), chain.world
        names = d.fields[d.name].values or []
        title, facet = world.rng.choice(names), world.rng.choice(d.facets)
        target = add(world, d, **{d.name: title, d.facet: facet})
        add(world, d, **{d.name: title, d.facet: other(world, d.facets, facet)})
        add(world, d, **{d.name: other(world, names, title), d.facet: facet})
        words = title.lower().split()

        def clashes(r: Record) -> bool:
            text = " ".join(str(v) for v in r.values() if isinstance(v, str)).lower()
            return r[d.facet] == facet and all(w in text for w in words)

        background(world, d, _unrelated(chain), clashes)
        chain.call(d.tool("search"), {"query": title}, save_as=SAVE)  # the namesake elsewhere is in view
        _found(chain, d, target)
        chain.facts["name"] = stated("name", title)
        chain.facts["facet"] = stated("facet", facet)
        chain.clause(
            f"find the {{name}} {noun(d)} in {{facet}} (not the one elsewhere)",
            f"look up {{name}}, the {noun(d)} in {{facet}}",
            f"pull up the {noun(d)} called {{name}} in {{facet}}",
        )


class ItemByDate(Step):
    """By a month: the only record of one facet whose date falls in it; others of that facet fall in other months."""

    kind = "locate"
    name = "locate_item_by_date"
    gives: ClassVar[tuple[str, ...]] = ("item", "assignee")

    def apply(self, chain: Chain) -> None:
        d, world = domain_of(chain), chain.world
        facet = world.rng.choice(d.facets)
        day = world.day(world.rng.randint(5, 40))
        month = day[:7]
        target = add(world, d, **{d.facet: facet, d.date: day})
        for offset in (-45, 30, 60):
            add(world, d, **{d.facet: facet, d.date: _outside(world.day(world.rng.randint(5, 40) + offset), month)})
        add(world, d, **{d.facet: other(world, d.facets, facet), d.date: month + day[7:]})
        background(world, d, _unrelated(chain), lambda r: r[d.facet] == facet and r[d.date].startswith(month))
        chain.call(d.tool("list"), {d.facet: facet}, save_as=SAVE)  # the other months are in view
        _found(chain, d, target)
        chain.facts["facet"] = stated("facet", facet)
        chain.facts["month"] = stated("month", month, given=date.fromisoformat(day).strftime(f"%B %Y ({month})"))
        chain.clause(
            f"find the {noun(d)} in {{facet}} {d.when} in {{month}}",
            f"look up which {{facet}} {noun(d)} is {d.when} in {{month}}",
            f"pull up the {noun(d)} in {{facet}} that is {d.when} during {{month}}",
        )


def _outside(day: str, month: str) -> str:
    """``day``, moved a month on when it falls in ``month``."""
    if not day.startswith(month):
        return day
    year, mon = int(month[:4]), int(month[5:7])
    year, mon = (year + 1, 1) if mon == 12 else (year, mon + 1)
    return f"{year:04d}-{mon:02d}-{min(int(day[8:]), 28):02d}"


class ReadItem(Step):
    """Open the record and report its date (the list result alone does not say which record it is)."""

    kind = "read"
    name = "read_item"
    needs: ClassVar[tuple[str, ...]] = ("item",)
    gives: ClassVar[tuple[str, ...]] = ("detail",)

    def apply(self, chain: Chain) -> None:
        d, item = domain_of(chain), chain.need("item")
        chain.call(d.tool("get"), {d.key_arg: item.ref}, save_as="detail")
        texts = [n for n, f in d.fields.items() if f.fake in ("sentence", "catch_phrase", "bs")]
        chain.readable += [(d.service, d.collection, item.record["id"], n) for n in texts[:1]]  # read in full
        when = item.record[d.date]
        chain.bind("detail", {"value": when}, f"${{detail.{d.date}}}", d.service)
        if when != chain.world.day(0):  # today's date is in the context: a reply restating it would pass
            chain.checks.answer_contains("told_date", [when])
        chain.report.append(f"It is {d.when} on {when}.")
        chain.clause(f"tell me when it is {d.when}", f"check the date it is {d.when}", f"say when it is {d.when}")


def _naming(d: Domain) -> str:
    """The field a message names the record by: its key when the domain has one of its own, else its name."""
    return d.key if d.key != "id" else d.name


def _key_text(d: Domain, item: Binding) -> str:
    """The record's value of :func:`_naming`, as a message must carry it."""
    return str(item.record[_naming(d)])


class SetStatus(Step):
    """Change the record's status to the one the request gives (withholdable)."""

    kind = "act"
    name = "act_item_status"
    needs: ClassVar[tuple[str, ...]] = ("item",)

    def apply(self, chain: Chain) -> None:
        d, item = domain_of(chain), chain.need("item")
        new = other(chain.world, d.statuses, item.record[d.status], d.damage)
        question = f"Which status should the {noun(d)} get?"
        chain.facts["new_status"] = Fact(
            "new_status", new, new, ["status"], question, f"Set it to {new}.", "the new status"
        )
        args = {d.key_arg: item.ref, d.status: "${facts.new_status}"}
        chain.update(d.tool("update"), args, item, {d.status: new}, "status_set", collection=d.collection)
        chain.report.append(f"Its status is now {new}.")
        chain.clause("mark it {new_status}", "set its status to {new_status}", "change its status to {new_status}")


class Reassign(Step):
    """Hand the record to a colleague the request names; the directory also lists one with the same first name."""

    kind = "act"
    name = "act_item_assign"
    needs: ClassVar[tuple[str, ...]] = ("item",)

    def apply(self, chain: Chain) -> None:
        d, item, world = domain_of(chain), chain.need("item"), chain.world
        person = world.person()
        while person.name.count(person.first) > 1:  # "Taylor Taylor": a search by it finds every Taylor
            person = world.person()
        world.contacts(person, world.person(first=person.first), extra=2)
        question = f"Who should take over the {noun(d)}?"
        chain.facts["assignee_name"] = Fact(
            "assignee_name", person.name, person.name, ["who", "assign", "name"], question, person.name, "a colleague"
        )
        chain.call("contacts_search", {"query": "${facts.assignee_name}"}, save_as="who")
        args = {d.key_arg: item.ref, d.assignee: "${who.contacts[0].email}"}
        chain.update(d.tool("update"), args, item, {d.assignee: person.email}, "reassigned", collection=d.collection)
        chain.bind("assignee", {"email": person.email}, "${who.contacts[0].email}", "contacts")
        chain.report.append(f"{person.name} now has it.")
        chain.clause(
            "assign it to {assignee_name}", "hand it over to {assignee_name}", "make {assignee_name} its owner"
        )


class AddLogEntry(Step):
    """Add a log entry linked to the record (the look-alikes have log entries of their own)."""

    kind = "act"
    name = "act_item_log"
    needs: ClassVar[tuple[str, ...]] = ("item",)

    def apply(self, chain: Chain) -> None:
        d, item, world = domain_of(chain), chain.need("item"), chain.world
        earlier = log_entry(world, d, item.record)
        note = other(world, d.log.notes, earlier["note"])
        chain.facts["note"] = stated("note", note, given=f'"{note}"')
        args = {d.log.link: item.ref, "note": "${facts.note}", "author": world.me.email, "date": world.day(0)}
        mine = field(d.log.link).eq(item.record["id"])
        logged = mine & field("note").eq(note)
        chain.write(
            d.tool("add_log"), args, d.log.collection, ("logged", logged), mine & field("date").eq(world.day(0))
        )
        entry = d.log.record.replace("_", " ")
        chain.report.append(f"I added {a(entry)} entry.")
        chain.clause(
            f"add {a(entry)} entry saying {{note}}", f"log {{note}} as {a(entry)}", f"note {{note}} in its {entry}s"
        )


class PostChannel(Step):
    """Post on the chat channel the request names; the message names the record."""

    kind = "notify"
    name = "notify_item_channel"
    needs: ClassVar[tuple[str, ...]] = ("item",)

    def apply(self, chain: Chain) -> None:
        d, item, world = domain_of(chain), chain.need("item"), chain.world
        names = world.rng.sample(CHANNELS, 3)
        for name in names:
            world.add("chat", "channels", {"name": name, "members": [world.me.email], "topic": world.fake.bs()})
        world.ensure("chat", "messages")
        chain.facts["channel"] = stated("channel", names[0], given=f"#{names[0]}")
        said = _key_text(d, item)
        text = f"Update on {noun(d)} {item.field_ref(_naming(d))}: done."
        posted = ("posted", field("channel").eq(names[0]) & field("text").contains(said))
        chain.write("chat_post_message", {"channel": names[0], "text": text}, "messages", posted, field("ts").eq("now"))
        chain.clause("post an update in {channel}", "let {channel} know", "share a short note in {channel}")


class MailAssignee(Step):
    """Mail the colleague in charge of the record (the one it was handed to, when it was)."""

    kind = "notify"
    name = "notify_item_mail"
    needs: ClassVar[tuple[str, ...]] = ("item", "assignee")

    def apply(self, chain: Chain) -> None:
        d, item, who = domain_of(chain), chain.need("item"), chain.need("assignee")
        chain.world.ensure("mail", "messages")
        said = _key_text(d, item)
        sent = field("folder").eq("sent")
        mailed = sent & field("to").has(who.record["email"]) & field("subject").contains(said)
        named = item.field_ref(_naming(d))
        args = {"to": [who.ref], "subject": f"{noun(d).capitalize()} {named}", "body": f"Hi, an update on {named}."}
        chain.write("mail_send", args, "messages", ("mailed", mailed), sent)
        chain.clause(
            f"email whoever has the {noun(d)} about it", f"mail the {noun(d)}'s owner", "send its owner a note by mail"
        )


class ReportItem(Step):
    """Tell the user which record it was (by its key, which only the tools give) and what was done."""

    kind = "report"
    name = "report_item"
    needs: ClassVar[tuple[str, ...]] = ("item",)

    def apply(self, chain: Chain) -> None:
        d, item = domain_of(chain), chain.need("item")
        key = item.record["id"]  # the request names the record by what it is, never by its key
        chain.report.insert(0, f"Done for {noun(d)} {key} ({item.record[d.name]}).")
        chain.checks.answer_contains("told_item", [key])
        chain.substance.append("told_item")  # which record it was: a vague report must fail by its weight alone
        chain.clause("and tell me what you did", "then report back", "and give me a short summary")


LOCATE_ITEM: tuple[Step, ...] = (ItemByAttribute(), ItemByName(), ItemByDate())
READ_ITEM: tuple[Step, ...] = (ReadItem(),)
ACT_ITEM: tuple[Step, ...] = (SetStatus(), Reassign(), AddLogEntry())
NOTIFY_ITEM: tuple[Step, ...] = (PostChannel(), MailAssignee())
REPORT_ITEM = ReportItem()
DOMAIN_STEPS: dict[str, Step] = {s.name: s for s in (*LOCATE_ITEM, *READ_ITEM, *ACT_ITEM, *NOTIFY_ITEM, REPORT_ITEM)}
