"""Leave and rota steps: decide a report's leave request, swap on-call shifts, book the user's own leave.

``locate_leave`` starts from a colleague (a report of the user's) with one pending request
beside an approved earlier one and a namesake's pending one; the acts approve, deny with a
reason or cancel it. ``locate_swap`` starts from a colleague's pending request that the
user take over their on-call shift (the rota has other shifts that day); the acts accept or
decline it. ``locate_shift`` finds the user's own shift on a day and asks a colleague to
take it. ``start_book_leave`` books the user's leave after checking the balance.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.services.hr import workdays
from coworkenv.synth.draft import stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.steps.base import Chain, Step
from coworkenv.synth.steps.people import colleague
from coworkenv.synth.world import Person

KINDS = ("vacation", "personal")
REASONS = ("the release week needs everyone", "two others are already out", "it overlaps the quarter close")
ROTA = "support-oncall"


def _staff(chain: Chain, *people: Person) -> None:
    """HR records (employee and balances) of the user, their manager and ``people``."""
    world = chain.world
    listed = {e["email"] for e in world.fixtures.get("hr", {}).get("employees", [])}
    for p in (world.me, world.boss, *people):
        if p.email in listed:
            continue
        listed.add(p.email)
        world.add("hr", "employees", {"email": p.email, "name": p.name, "manager": p.manager_email, "team": "ops"})
        for kind in KINDS:
            world.add("hr", "balances", {"employee": p.email, "kind": kind, "days": float(world.rng.randrange(6, 20))})


def _shift(chain: Chain, person: str, day: str) -> dict[str, object]:
    """An eight-hour on-call shift of ``person`` on ``day``, starting at a drawn hour."""
    hour = chain.world.rng.choice((6, 7, 8, 9, 10, 12))
    span = {"start": f"{day}T{hour:02d}:00", "end": f"{day}T{hour + 8:02d}:00"}
    return chain.world.add("hr", "rota", {"rota": ROTA, "person": person, **span})


def _handover(chain: Chain, mine: bool) -> tuple[Person, int, dict[str, object]]:
    """A colleague on staff, a day 3 to 14 working days out, and the shift that day of the user (``mine``) or the
    colleague: the shift a swap hands over."""
    world = chain.world
    who = colleague(chain)
    _staff(chain, who)
    offset = world.rng.randrange(3, 15)
    shift = _shift(chain, world.me.email if mine else who.email, world.day(offset))
    return who, offset, shift


def _rota(chain: Chain, day: str) -> None:
    """The reference's look at the rota on ``day`` (the request names the rota and the day)."""
    chain.facts["day"] = stated("day", day)
    chain.facts["rota"] = stated("rota", ROTA, given=f"the {ROTA} rota")
    window = {"rota": "${facts.rota}", "start": f"{day}T00:00", "end": f"{day}T23:59"}
    chain.call("hr_view_rota", window, save_as="rota")


def _hours(shift: dict[str, object]) -> str:
    return str(shift["start"]).split("T")[1]


class Request(Step):
    """A report's pending leave request: binds ``leave``; the report states its first day."""

    kind = "locate"
    name = "locate_leave"
    gives: ClassVar[tuple[str, ...]] = ("leave", "person")

    def apply(self, chain: Chain) -> None:
        world = chain.world
        who = colleague(chain)
        namesake = next(
            c
            for c in world.fixtures["contacts"]["contacts"]
            if c["name"].split()[0] == who.first and c["email"] != who.email
        )
        _staff(chain, who)
        kind = world.rng.choice(KINDS)
        start = world.rng.randrange(5, 25)
        first, last = world.day(start), world.day(start + world.rng.randrange(1, 4))
        days = float(workdays(first, last))
        earlier = {"employee": who.email, "kind": kind, "start": world.day(-30), "end": world.day(-29), "days": 2.0}
        world.add("hr", "leave", earlier | {"status": "approved", "approver": world.me.email})
        ask = {"employee": who.email, "kind": kind, "start": first, "end": last, "days": days, "status": "pending"}
        target = world.add("hr", "leave", ask)
        other = world.day(start + 5)
        world.add("hr", "leave", ask | {"employee": namesake["email"], "start": other, "end": other, "days": 1.0})
        world.ensure("hr", "rota", "swaps")
        chain.call("hr_list_leave", {"employee": "${who.contacts[0].email}", "status": "pending"}, save_as="asks")
        chain.bind("leave", target, "${asks.requests[0].id}", "hr", "leave")
        chain.report_found(first, f"{who.name} asked for {days:g} {kind} days from {first} to {last}.")
        chain.clause(
            "find {person}'s pending leave request",
            "look up the time off {person} is waiting on me to approve",
            "check the leave request {person} sent me",
        )


class Balance(Step):
    """The colleague's leave balance: the report states the days left of the request's kind."""

    kind = "read"
    name = "read_balance"
    needs: ClassVar[tuple[str, ...]] = ("leave",)

    def apply(self, chain: Chain) -> None:
        leave = chain.need("leave").record
        chain.call("hr_get_balance", {"employee": "${who.contacts[0].email}"})
        chain.report.append(f"They have enough {leave['kind']} days left for it.")
        chain.clause(
            "check they have the days left", "look at their leave balance", "make sure their balance covers it"
        )


class Decide(Step):
    """Approve, deny (with the reason the request gives) or cancel the leave request."""

    kind = "act"
    gives: ClassVar[tuple[str, ...]] = ("decision",)
    needs: ClassVar[tuple[str, ...]] = ("leave",)

    def __init__(self, name: str, tool: str, status: str, clauses: tuple[str, str, str]) -> None:
        self.name = name  # type: ignore[misc]
        self.tool, self.status, self.clauses = tool, status, clauses

    def apply(self, chain: Chain) -> None:
        leave, me = chain.need("leave"), chain.world.me.email
        args: dict[str, object] = {"request_id": leave.ref}
        changes: dict[str, object] = {"status": self.status}
        if self.tool != "hr_cancel_leave":
            args["approver"] = me
        if self.tool == "hr_deny_leave":
            reason = chain.world.rng.choice(REASONS)
            chain.facts["reason"] = stated("reason", reason)
            args["reason"], changes["reason"] = "${facts.reason}", reason
        chain.update(self.tool, args, leave, changes, f"leave_{self.status}")
        chain.bind("decision", {"status": self.status}, leave.ref, "hr")
        chain.clause(*self.clauses)


class Swap(Step):
    """A colleague's pending request that the user take over their on-call shift on a day: binds ``swap``."""

    kind = "locate"
    name = "locate_swap"
    gives: ClassVar[tuple[str, ...]] = ("swap", "person")

    def apply(self, chain: Chain) -> None:
        world = chain.world
        who, offset, theirs = _handover(chain, mine=False)
        day = world.day(offset)
        _shift(chain, world.me.email, world.day(offset + 2))
        other = world.person()
        _staff(chain, other)
        _shift(chain, other.email, world.day(offset + 1))
        older = _shift(chain, who.email, world.day(offset + 4))
        swap = world.add(
            "hr", "swaps", {"shift_id": theirs["id"], "from_person": who.email, "to_person": world.me.email}
        )
        world.add("hr", "swaps", {"shift_id": older["id"], "from_person": who.email, "to_person": other.email})
        world.ensure("hr", "leave")
        _rota(chain, day)
        chain.bind("swap", swap, "${rota.pending_swaps[0].id}", "hr", "swaps")
        chain.report_found(_hours(theirs), f"The shift runs {theirs['start']} to {theirs['end']}.")
        chain.clause(
            "find the shift on {rota} that {person} asked me to cover on {day} and tell me when it starts",
            "check the {day} swap {person} sent me on {rota} and when that shift starts",
            "look at {person}'s swap request for their {day} shift on {rota} and tell me the start time",
        )


class Answer(Step):
    """Accept or decline the swap."""

    kind = "act"
    gives: ClassVar[tuple[str, ...]] = ("decision",)
    needs: ClassVar[tuple[str, ...]] = ("swap",)

    def __init__(self, name: str, tool: str, status: str, clauses: tuple[str, str, str]) -> None:
        self.name = name  # type: ignore[misc]
        self.tool, self.status, self.clauses = tool, status, clauses

    def apply(self, chain: Chain) -> None:
        swap = chain.need("swap")
        chain.update(self.tool, {"swap_id": swap.ref}, swap, {"status": self.status}, f"swap_{self.status}")
        if self.status == "accepted":  # the shift changes hands
            shift = swap.record["shift_id"]
            chain.checks.field_equals("shift_taken", "hr", "rota", shift, "person", chain.world.me.email, 2.0)
            chain.allow("hr", "rota", field("id").eq(shift))
        chain.bind("decision", {"status": self.status}, swap.ref, "hr")
        chain.clause(*self.clauses)


class MyShift(Step):
    """The user's own on-call shift on a day, handed to a colleague the request names."""

    kind = "locate"
    name = "locate_shift"
    gives: ClassVar[tuple[str, ...]] = ("shift", "person")

    def apply(self, chain: Chain) -> None:
        world = chain.world
        who, offset, mine = _handover(chain, mine=True)
        day = world.day(offset)
        _shift(chain, world.me.email, world.day(offset + 3))
        _shift(chain, who.email, world.day(offset + 1))
        world.ensure("hr", "swaps", "leave")
        _rota(chain, day)
        args = {"shift_id": "${rota.shifts[0].id}", "to_person": "${who.contacts[0].email}"}
        chain.call("hr_request_swap", args, main=True)
        asked = and_(field("shift_id").eq(mine["id"]), field("to_person").eq(who.email), field("status").eq("pending"))
        chain.checks.record_exists("swap_requested", "hr", "swaps", asked, 3.0)
        chain.allow("hr", "swaps", field("shift_id").eq(mine["id"]))
        chain.report_found(
            _hours(mine), f"I asked {who.name} to take my {day} shift ({mine['start']} to {mine['end']})."
        )
        chain.clause(
            "ask {person} to take my {day} shift on {rota} and tell me when it starts",
            "hand my {day} shift on {rota} to {person} with a swap request (and remind me of the start time)",
            "request a swap so {person} covers my {day} shift on {rota}, then tell me when it starts",
        )


class BookLeave(Step):
    """The user's own leave on the days the request gives, after checking the balance covers it."""

    kind = "act"
    name = "start_book_leave"

    def apply(self, chain: Chain) -> None:
        world = chain.world
        _staff(chain)
        world.ensure("hr", "leave", "rota", "swaps")
        kind = world.rng.choice(KINDS)
        start = world.rng.randrange(5, 30)
        first, last = world.day(start), world.day(start + world.rng.randrange(0, 4))
        chain.facts["first"], chain.facts["last"] = stated("first", first), stated("last", last)
        chain.facts["kind"] = stated("kind", kind)
        chain.subject = f"{kind} from {first} to {last}"
        me, cover = world.me.email, world.person(world.me.department)
        world.contacts(cover, world.person(first=cover.first), extra=2)
        chain.facts["cover"] = stated("cover", cover.name)
        chain.call("hr_get_balance", {"employee": me}, save_as="balance")
        chain.call("contacts_search", {"query": "${facts.cover}"}, save_as="cover")
        args = {"employee": me, "kind": "${facts.kind}", "start": "${facts.first}", "end": "${facts.last}"}
        args["note"] = "${cover.contacts[0].email}"
        chain.call("hr_submit_leave", args, save_as="booked", main=True)
        booked = and_(field("employee").eq(me), field("start").eq(first), field("end").eq(last), field("kind").eq(kind))
        booked = booked & field("note").contains(cover.email)
        chain.checks.record_exists("leave_booked", "hr", "leave", booked & field("status").eq("pending"), 3.0)
        chain.allow("hr", "leave", field("employee").eq(me))
        days = workdays(first, last)
        balances = world.fixtures["hr"]["balances"]
        left = next(b["days"] for b in balances if b["employee"] == me and b["kind"] == kind) - days
        chain.checks.answer_number("told_left", left, 0.01)
        chain.report.append(f"I requested {days} {kind} days; that leaves {left:g}.")
        span = "on {first}" if first == last else "from {first} to {last}"
        chain.clause(
            f"book {{kind}} leave for me {span}, noting {{cover}}'s email as my cover, and tell me how many days I "
            "will have left",
            f"put in a {{kind}} request for me {span}, with {{cover}}'s address in the note as cover, and let me know "
            "how many {kind} days remain after it",
            f"request {{kind}} time off for me {span} (note {{cover}}'s email as cover) and tell me what balance that "
            "leaves",
        )


LOCATE: tuple[Step, ...] = (Request(), Swap(), MyShift())
START: tuple[Step, ...] = (BookLeave(),)
READ: tuple[Step, ...] = (Balance(),)
ACT: tuple[Step, ...] = (
    Decide(
        "act_approve_leave",
        "hr_approve_leave",
        "approved",
        ("approve the request", "approve their leave", "sign off their time off"),
    ),
    Decide(
        "act_deny_leave",
        "hr_deny_leave",
        "denied",
        ("deny their request: {reason}", "turn their leave down ({reason})", "deny the request, reason: {reason}"),
    ),
    Decide(
        "act_cancel_leave",
        "hr_cancel_leave",
        "cancelled",
        ("withdraw the request, they asked me to", "cancel their request, as they asked", "cancel the request"),
    ),
    Answer(
        "act_accept_swap",
        "hr_accept_swap",
        "accepted",
        ("accept the swap", "take the shift over", "say yes to the swap"),
    ),
    Answer(
        "act_decline_swap",
        "hr_decline_swap",
        "declined",
        ("decline the swap", "turn the swap down", "say no to the swap"),
    ),
)
