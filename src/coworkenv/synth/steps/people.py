"""People steps: find a colleague in the directory among namesakes, update their entry, add a new one, message them.

A colleague the request names by full name shares a first name with another person in
the directory, so a search by the first name alone picks the wrong one. ``colleague``
plants them for the other families too (an expense or a leave request of a report of the
user's); it binds ``person`` (the directory entry, by the search result).
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.draft import stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.steps.base import Chain, Step
from coworkenv.synth.world import Person

PHONES = ("+1 415 555 0134", "+1 212 555 0187", "+44 20 7946 0321", "+49 30 5550 1942")


def colleague(chain: Chain) -> Person:
    """A report of the user's, in the directory beside a namesake; binds ``person`` and names them as the subject."""
    world = chain.world
    who = world.person(world.me.department, manager=world.me)
    namesake = world.person(first=who.first)
    world.contacts(who, namesake, extra=2)
    record = next(c for c in world.fixtures["contacts"]["contacts"] if c["email"] == who.email)
    chain.facts["person"] = stated("person", who.name)
    chain.subject = who.name
    chain.summary.append(who.name)
    chain.call("contacts_search", {"query": who.name}, save_as="who")
    chain.bind("person", record, "${who.contacts[0].id}", "contacts", "contacts")
    return who


def named_colleague(chain: Chain) -> Person:
    """A :func:`colleague` the request names for a step about something else (a file, a document): the chain's
    subject stays what it was."""
    subject = chain.subject
    who = colleague(chain)
    chain.subject = subject
    return who


def email_ref(chain: Chain) -> str:
    """The reference expression of the bound person's address."""
    return chain.need("person").field_ref("email")


class Directory(Step):
    """A colleague's directory entry, read in full: the report states their address."""

    kind = "locate"
    name = "locate_person"
    gives: ClassVar[tuple[str, ...]] = ("person",)

    def apply(self, chain: Chain) -> None:
        colleague(chain)
        person = chain.need("person")
        chain.call("contacts_get", {"contact_id": person.ref})
        chain.report_found(
            person.record["email"],
            f"{person.record['name']} ({person.record['email']}) is our {person.record['title']}.",
        )
        chain.clause(
            "look up {person} in the directory and tell me their email and job title",
            "find {person}'s directory entry and send me their address and title",
            "pull up {person} in contacts and tell me their email address and role",
        )


class UpdateEntry(Step):
    """Change the colleague's phone number in the directory."""

    kind = "act"
    name = "act_update_contact"
    needs: ClassVar[tuple[str, ...]] = ("person",)

    def apply(self, chain: Chain) -> None:
        person = chain.need("person")
        phone = chain.world.rng.choice([p for p in PHONES if p != person.record.get("phone")])
        chain.facts["phone"] = stated("phone", phone)
        args = {"contact_id": person.ref, "phone": "${facts.phone}"}
        chain.update("contacts_update", args, person, {"phone": phone}, "phone_updated")
        chain.clause(
            "change {person}'s phone number in the directory to {phone}",
            "update {person}'s number to {phone}",
            "set {person}'s directory phone to {phone}",
        )


class AddContact(Step):
    """Add an outside person who wrote to the user to the directory, with the address of their mail (a first step)."""

    kind = "act"
    name = "start_add_contact"

    def apply(self, chain: Chain) -> None:
        world = chain.world
        company, domain = world.customer()
        new = world.person(company=company, domain=domain)
        world.contacts(extra=3)
        body = f"Hello {world.me.first}, {world.fake.sentence()} Best regards, {new.name}, {company}"
        world.mail(new.email, f"Introduction from {company}", body, world.day(-1))
        world.noise_mail(world.rng.randrange(2, 4))
        for key, value in (("new_name", new.name), ("new_company", company)):
            chain.facts[key] = stated(key, value)
        chain.subject = company
        chain.call("mail_search", {"folder": "inbox"})  # the inbox: the other senders' addresses in view
        chain.call("mail_search", {"query": "${facts.new_company}"}, save_as="intro")
        args = {"name": "${facts.new_name}", "email": "${intro.messages[0].sender}", "company": "${facts.new_company}"}
        made = and_(field("email").eq(new.email), field("name").eq(new.name), field("company").eq(company))
        chain.write(
            "contacts_create",
            args,
            "contacts",
            ("contact_added", made),
            field("email").eq(new.email),
            weight=3.0,
            main=True,
        )
        chain.report_found(new.email, f"I added {new.name} ({new.email}) of {company} to the directory.")
        chain.clause(
            "{new_name} of {new_company} emailed me: add them to the directory with the address they wrote from",
            "create a contact for {new_name} of {new_company}, using the address of their mail to me",
            "put {new_name} from {new_company} in contacts (their email is on the intro they sent me)",
        )


class DmPerson(Step):
    """A direct message to the colleague, with the chain's key result or the news the request gives."""

    kind = "notify"
    name = "notify_dm_person"
    needs: ClassVar[tuple[str, ...]] = ("person",)

    def apply(self, chain: Chain) -> None:
        chain.world.ensure("chat", "channels", "messages")
        person = chain.need("person")
        text = f"Hi {person.record['name'].split()[0]}, a quick update: {chain.subject} is sorted."
        told = field("channel").eq(f"dm:{person.record['email']}") & field("text").contains("update")
        chain.write(
            "chat_send_dm",
            {"user": email_ref(chain), "text": text},
            "messages",
            ("told_person", told),
            field("ts").eq("now"),
        )
        chain.clause("let them know on chat", "send them a DM about it", "ping them on chat once it's done")


class MailPerson(Step):
    """A mail to the colleague."""

    kind = "notify"
    name = "notify_mail_person"
    needs: ClassVar[tuple[str, ...]] = ("person",)

    def apply(self, chain: Chain) -> None:
        chain.world.ensure("mail", "messages")
        person = chain.need("person")
        sent = field("folder").eq("sent")
        mailed = sent & field("to").has(person.record["email"])
        args = {"to": [email_ref(chain)], "subject": f"Update: {chain.subject}", "body": "It is done. Thanks!"}
        chain.write("mail_send", args, "messages", ("mailed_person", mailed), sent)
        chain.clause("email them that it's done", "drop them a mail about it", "send them a short email")


LOCATE: tuple[Step, ...] = (Directory(),)
START: tuple[Step, ...] = (AddContact(),)
READ: tuple[Step, ...] = ()
ACT: tuple[Step, ...] = (UpdateEntry(),)
NOTIFY: tuple[Step, ...] = (DmPerson(), MailPerson())
