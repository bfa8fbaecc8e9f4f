"""Support steps over a customer's mail and tickets: file the mail away, open the ticket, hand it to on-call.

The mail acts need the customer's mail (``locate_from_mail`` binds it): label it, archive
it, or mark it unread for later. The ticket steps need the ticket a chain picked: read it
in full, or assign it to whoever is on call for its team right now (the team's other
shifts, earlier and later, are look-alikes).
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.draft import stated
from coworkenv.synth.steps.base import Chain, Step
from coworkenv.synth.world import TEAMS

LABELS = ("follow-up", "customer", "escalated", "billing")


class Label(Step):
    """Label the customer's mail with the label the request names."""

    kind = "act"
    name = "act_label_mail"
    needs: ClassVar[tuple[str, ...]] = ("mail",)

    def apply(self, chain: Chain) -> None:
        mail = chain.need("mail")
        label = chain.world.rng.choice(LABELS)
        chain.facts["label"] = stated("label", label)
        args = {"message_id": mail.ref, "label": "${facts.label}"}
        chain.update("mail_label", args, mail, {"labels": [label]}, "mail_labelled")
        chain.clause("label their mail {label}", "tag the email as {label}", "put the {label} label on their mail")


class Archive(Step):
    """Move the customer's mail to the archive once dealt with."""

    kind = "act"
    name = "act_archive_mail"
    needs: ClassVar[tuple[str, ...]] = ("mail",)
    gives: ClassVar[tuple[str, ...]] = ("filed",)

    def apply(self, chain: Chain) -> None:
        mail = chain.need("mail")
        chain.update(
            "mail_move", {"message_id": mail.ref, "folder": "archive"}, mail, {"folder": "archive"}, "archived"
        )
        chain.bind("filed", {"folder": "archive"}, mail.ref, "mail")
        chain.clause("archive their email", "move their mail to the archive", "file their message in the archive")


class KeepUnread(Step):
    """Mark the customer's mail unread again, so it stays on the user's list."""

    kind = "act"
    name = "act_mark_unread"
    needs: ClassVar[tuple[str, ...]] = ("mail",)
    gives: ClassVar[tuple[str, ...]] = ("filed",)

    def apply(self, chain: Chain) -> None:
        mail = chain.need("mail")
        mail.record["unread"] = False  # the user had opened it already
        args = {"message_id": mail.ref, "unread": True}
        chain.update("mail_mark_read", args, mail, {"unread": True}, "kept_unread")
        chain.bind("filed", {"unread": True}, mail.ref, "mail")
        chain.clause(
            "mark their mail unread again so I see it later",
            "leave their email flagged as unread",
            "set their message back to unread",
        )


class TicketDetails(Step):
    """The ticket in full: the report states its title."""

    kind = "read"
    name = "read_ticket"
    needs: ClassVar[tuple[str, ...]] = ("ticket",)

    def apply(self, chain: Chain) -> None:
        ticket = chain.need("ticket")
        chain.call("tickets_get", {"ticket_id": ticket.ref})
        chain.report.append(f"The ticket is titled {ticket.record['title']!r}.")
        chain.clause("open that ticket", "read the ticket in full", "look at the ticket's details")


class OnCall(Step):
    """Assign the ticket to whoever is on call for its team right now (earlier and later shifts look alike)."""

    kind = "act"
    name = "act_assign_oncall"
    needs: ClassVar[tuple[str, ...]] = ("ticket",)
    gives: ClassVar[tuple[str, ...]] = ("assignee",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        ticket = chain.need("ticket")
        team = ticket.record["team"]
        now = f"{world.day(0)}T10:00"
        people = [world.person("Engineering") for _ in range(3)]
        spans = ((world.day(-1), world.day(0)), (world.day(0), world.day(1)), (world.day(1), world.day(2)))
        for who, (start, end) in zip(people, spans, strict=True):
            shift = {"team": team, "engineer": who.email, "start": f"{start}T09:00", "end": f"{end}T09:00"}
            world.add("tickets", "oncall", shift)
        other = world.rng.choice([t for t in TEAMS if t != team])
        world.add(
            "tickets",
            "oncall",
            {"team": other, "engineer": world.person().email}
            | {"start": f"{world.day(0)}T09:00", "end": f"{world.day(1)}T09:00"},
        )
        chain.facts["now"] = stated("now", now.replace("T", " "))
        chain.call("tickets_get_oncall", {"team": team, "at": now}, save_as="oncall")
        args = {"ticket_id": ticket.ref, "assignee": "${oncall.shifts[0].engineer}"}
        chain.update("tickets_assign", args, ticket, {"assignee": people[1].email}, "oncall_assigned")
        chain.bind("assignee", {"email": people[1].email}, "${oncall.shifts[0].engineer}", "tickets")
        chain.clause(
            f"assign that ticket to whoever is on call for {team} now ({{now}})",
            f"give the ticket to the {team} on-call engineer as of {{now}}",
            f"hand the ticket to {team}'s on-call person at {{now}}",
        )


ACT: tuple[Step, ...] = (Label(), Archive(), KeepUnread(), OnCall())
READ: tuple[Step, ...] = (TicketDetails(),)
LOCATE: tuple[Step, ...] = ()
START: tuple[Step, ...] = ()
