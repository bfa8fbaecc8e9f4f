"""act: the writes of a workflow (reply, send, book, log, create, update, assign, comment), across services.

Each act checks its write (a record that must exist, or a field that must end with a
value), and declares what it may change so the chain guards everything else in the
collection. What a message must say is the chain's key result (``Chain.key``): the ticket
picked, the count derived, or else the message the request gives.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.draft import Fact, stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.steps.base import Chain, Step
from coworkenv.synth.world import TEAMS

MESSAGES = ("we are on it", "a fix is being tested", "an engineer is assigned", "we will call you tomorrow")


def _an(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def hint(chain: Chain) -> str:
    """How the request names what a message must say."""
    if "ticket" in chain.bound:
        return "the ticket number"
    if chain.key() is not None:
        return "the count"
    return "the news that {message}"


def _message(chain: Chain) -> tuple[str, str]:
    """What a written message must contain: (the text to check, the text the reference writes)."""
    key = chain.key()
    if key is not None:
        return key
    return _news(chain), "${facts.message}"


def _news(chain: Chain) -> str:
    """The news the request gives for a message to carry (the ``message`` fact, drawn by the first step needing it)."""
    if "message" not in chain.facts:
        chain.facts["message"] = stated("message", chain.world.rng.choice(MESSAGES))
    news: str = chain.facts["message"].value
    return news


class Reply(Step):
    """Reply to the customer's mail."""

    kind = "act"
    name = "act_reply"
    needs: ClassVar[tuple[str, ...]] = ("mail",)

    def apply(self, chain: Chain) -> None:
        mail = chain.need("mail")
        what = hint(chain)
        text, ref = _message(chain)
        body = f"Hi, thanks for writing. An update from our side: {ref}. Best, {chain.world.me.first}"
        replied = field("in_reply_to").eq(mail.record["id"]) & field("body").contains(text)
        allow = field("folder").eq("sent")  # the reply is a new message: the one it answers stays as it was
        args = {"message_id": mail.ref, "body": body}
        chain.write("mail_reply", args, "messages", ("replied", replied), allow, weight=3.0, main=True)
        chain.clause(
            f"reply to their mail with {what}",
            f"answer their email with {what}",
            f"write back to them with {what}",
        )


class EmailContact(Step):
    """A new mail to the account's primary contact."""

    kind = "act"
    name = "act_email_contact"
    needs: ClassVar[tuple[str, ...]] = ("contact", "account")

    def apply(self, chain: Chain) -> None:
        chain.world.ensure("mail", "messages")
        contact = chain.need("contact")
        what = hint(chain)
        text, ref = _message(chain)
        subject = f"Update for {chain.need('account').record['name']}"
        sent = field("folder").eq("sent") & field("to").has(contact.record["email"]) & field("body").contains(text)
        args = {"to": [contact.ref], "subject": subject, "body": f"Hello, {ref}."}
        check = ("emailed_contact", sent)
        chain.write("mail_send", args, "messages", check, field("folder").eq("sent"), weight=3.0, main=True)
        chain.clause(
            f"email them {what}",
            f"send them a mail with {what}",
            f"drop them an email with {what}",
        )


class ScheduleCall(Step):
    """A half-hour call with the account's primary contact on a day the request names (withholdable)."""

    kind = "act"
    name = "act_schedule_call"
    needs: ClassVar[tuple[str, ...]] = ("contact", "account")

    def apply(self, chain: Chain) -> None:
        world = chain.world
        world.ensure("calendar", "events")
        contact, company = chain.need("contact"), chain.need("account").record["name"]
        day = world.day(world.rng.randrange(1, 4))
        hour = world.rng.choice(("10:00", "11:30", "14:00", "15:30"))
        chain.facts["call_day"] = Fact(
            "call_day", day, f"on {day}", ["day", "date", "when"], "Which day should the call be?", f"On {day}.", "soon"
        )
        title = f"Call with {company}"
        start = "${facts.call_day}T" + hour
        end = world.at(day, hour, 30).replace(day, "${facts.call_day}")
        args: dict[str, object] = {"title": title, "start": start, "end": end, "attendees": [contact.ref]}
        made = and_(
            field("title").eq(title),
            field("start").eq(f"{day}T{hour}"),
            field("attendees").has(contact.record["email"]),
        )
        allow = field("title").eq(title)
        chain.write("calendar_create_event", args, "events", ("call_booked", made), allow, weight=3.0, main=True)
        chain.clause(
            f"book a 30-minute call with them {{call_day}} at {hour}",
            f"set up a half-hour call with that contact {{call_day}} at {hour}",
            f"put a 30-minute call with them in the calendar {{call_day}} at {hour}",
        )


class LogActivity(Step):
    """Log a note or call on the CRM account."""

    kind = "act"
    name = "act_log"
    needs: ClassVar[tuple[str, ...]] = ("account",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        account = chain.need("account")
        kind = world.rng.choice(("note", "call", "email"))
        args = {"account_id": account.ref, "kind": kind, "summary": "Followed up on open issues", "date": world.day(0)}
        mine = field("account_id").eq(account.record["id"])
        logged = mine & field("kind").eq(kind) & field("date").eq(world.day(0))
        chain.write("crm_log_activity", args, "activities", ("logged", logged), mine, main=not chain.reference.roles)
        chain.clause(
            f"log {_an(kind)} on their account",
            f"record {_an(kind)} activity in the CRM",
            f"add {_an(kind)} entry to their CRM account",
        )


class CreateTicket(Step):
    """Open a ticket for the customer, for a team the request names (withholdable), due on a derived date."""

    kind = "act"
    name = "act_create_ticket"
    needs: ClassVar[tuple[str, ...]] = ("account",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        world.ensure("tickets", "tickets")
        team = world.rng.choice(TEAMS)
        chain.facts["team"] = Fact(
            "team",
            team,
            f"the {team} team",
            ["team"],
            "Which team should own the ticket?",
            f"The {team} team.",
            "the right team",
        )
        account = chain.need("account")
        company = account.record["name"]
        title = f"Follow-up for {company}"
        args = {
            "title": title,
            "description": "Opened from the account review.",
            "team": "${facts.team}",
            "customer": account.field_ref("name"),
        }
        made = and_(field("title").eq(title), field("team").eq(team), field("customer").eq(company))
        due = ""
        if "date" in chain.bound:
            date = chain.need("date")
            due = date.record["value"]
            args["due"] = date.ref
            made = made & field("due").eq(due)
        new = field("created").eq("now")
        chain.write("tickets_create", args, "tickets", ("ticket_opened", made), new, weight=3.0, main=True)
        when = " due on their renewal date" if due else ""
        chain.clause(
            f"open a ticket for {{team}}{when}",
            f"file a follow-up ticket with {{team}}{when}",
            f"create a ticket for them assigned to {{team}}{when}",
        )


class Escalate(Step):
    """Raise the ticket's priority (or start work on it, when it is already high), with a new due date if derived."""

    kind = "act"
    name = "act_update_ticket"
    needs: ClassVar[tuple[str, ...]] = ("ticket",)

    def apply(self, chain: Chain) -> None:
        ticket = chain.need("ticket")
        high = ticket.record["priority"] == "high"
        name, value = ("status", "in_progress") if high else ("priority", "high")
        args, changes = {"ticket_id": ticket.ref, name: value}, {name: value}
        phrase = "mark that ticket in progress" if high else "raise that ticket to high priority"
        if "date" in chain.bound:
            date = chain.need("date")
            args["due"], changes["due"] = date.ref, date.record["value"]
            phrase += ", due on their renewal date"
        chain.update("tickets_update", args, ticket, changes, f"ticket_{name}")
        chain.clause(f"{phrase}", f"then {phrase}", f"and {phrase}")


class Assign(Step):
    """Assign the ticket to the account's owner."""

    kind = "act"
    name = "act_assign"
    needs: ClassVar[tuple[str, ...]] = ("ticket", "owner")
    gives: ClassVar[tuple[str, ...]] = ("assignee",)

    def apply(self, chain: Chain) -> None:
        ticket, owner = chain.need("ticket"), chain.need("owner")
        args = {"ticket_id": ticket.ref, "assignee": owner.ref}
        chain.update("tickets_assign", args, ticket, {"assignee": owner.record["email"]}, "ticket_assigned")
        chain.bind("assignee", owner.record, owner.ref, "crm")
        chain.clause(
            "assign that ticket to the account owner",
            "hand the ticket to whoever owns the account",
            "give that ticket to their account manager",
        )


class Comment(Step):
    """Comment on the ticket."""

    kind = "act"
    name = "act_comment"
    needs: ClassVar[tuple[str, ...]] = ("ticket",)

    def apply(self, chain: Chain) -> None:
        ticket = chain.need("ticket")
        text = _news(chain)
        once = field("comments").len().eq(len(ticket.record.get("comments", [])) + 1)  # a second comment is noise
        mine = field("id").eq(ticket.record["id"])
        said = mine & field("comments").join().contains(text) & once
        args = {"ticket_id": ticket.ref, "text": "Customer update: ${facts.message}"}
        chain.write("tickets_comment", args, "tickets", ("ticket_commented", said), mine, main=True)
        chain.clause(
            "comment on that ticket that {message}",
            "add a comment to the ticket saying {message}",
            "note on the ticket that {message}",
        )


class AdvanceDeal(Step):
    """Move the deal to the next stage."""

    kind = "act"
    name = "act_update_deal"
    needs: ClassVar[tuple[str, ...]] = ("deal",)

    def apply(self, chain: Chain) -> None:
        deal = chain.need("deal")
        stages = ("prospect", "qualified", "proposal", "negotiation", "won")
        nxt = stages[stages.index(deal.record["stage"]) + 1]
        chain.update("crm_update_deal", {"deal_id": deal.ref, "stage": nxt}, deal, {"stage": nxt}, "deal_stage")
        chain.report.append(f"I moved it to {nxt}.")
        chain.clause(
            f"move that deal to {nxt}", f"advance the deal to the {nxt} stage", f"set the deal's stage to {nxt}"
        )


ACT: tuple[Step, ...] = (
    ScheduleCall(),
    Reply(),
    EmailContact(),
    LogActivity(),
    CreateTicket(),
    Escalate(),
    Assign(),
    Comment(),
    AdvanceDeal(),
)
