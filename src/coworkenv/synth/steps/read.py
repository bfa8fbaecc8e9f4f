"""read: inspect what belongs to the located account (its contacts, its deals, its open tickets).

Each variant plants the records it reads on the target and on the decoy accounts alike,
plus records of the target that the read must leave out (a closed ticket, a secondary
contact), so reading the wrong account or the wrong filter shows in what follows.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.draft import stated
from coworkenv.synth.steps.base import Chain, Record, Step
from coworkenv.synth.world import TEAMS

OPEN_STAGES = ("prospect", "qualified", "proposal", "negotiation")
PROBLEMS = (
    "Export fails on large reports",
    "SSO login loops",
    "Invoice PDF shows the wrong address",
    "Webhook retries pile up",
    "Search misses recent records",
    "Mobile app crashes on upload",
    "Password reset mail never arrives",
    "Usage report double-counts seats",
)


def _accounts(chain: Chain) -> list[Record]:
    return [chain.need("account").record, *chain.decoys]


class Contacts(Step):
    """The account's contact people: binds ``contact`` (the primary one, first in the CRM's order)."""

    kind = "read"
    name = "read_contacts"
    needs: ClassVar[tuple[str, ...]] = ("account",)
    gives: ClassVar[tuple[str, ...]] = ("contact",)

    def apply(self, chain: Chain) -> None:
        account = chain.need("account")
        primary = _primary(chain)
        chain.call("crm_find_contacts", {"account_id": account.ref}, save_as="people")
        chain.bind("contact", primary, "${people.contacts[0].email}", "crm")
        chain.clause(
            "see who their primary contact is", "find their main contact person", "check who our main contact there is"
        )


class AccountDetails(Step):
    """The account in full (deals, contacts, recent activity): binds ``contact`` (the primary one)."""

    kind = "read"
    name = "read_account"
    needs: ClassVar[tuple[str, ...]] = ("account",)
    gives: ClassVar[tuple[str, ...]] = ("contact",)

    def apply(self, chain: Chain) -> None:
        account = chain.need("account")
        primary = _primary(chain)
        chain.call("crm_get_account", {"account_id": account.ref}, save_as="info")
        chain.bind("contact", primary, "${info.contacts[0].email}", "crm")
        chain.clause("open their account record", "look at their full account page", "go through their account details")


def _primary(chain: Chain) -> Record:
    """The target's primary contact (returned), after a second contact of the same account who is not primary."""
    world = chain.world
    account = chain.need("account").record
    other = world.person(company=account["name"], title="Analyst")
    world.add("crm", "contacts", {"account_id": account["id"], "name": other.name, "email": other.email})
    primary: Record = next(c for c in world.fixtures["crm"]["contacts"] if c["account_id"] == account["id"])
    chain.summary.append(primary["name"])
    chain.report.append(f"Their primary contact is {primary['name']}.")
    return primary


class Deals(Step):
    """The account's deals in one stage: binds ``deals`` (the stage's deals of the target)."""

    kind = "read"
    name = "read_deals"
    needs: ClassVar[tuple[str, ...]] = ("account",)
    gives: ClassVar[tuple[str, ...]] = ("deals",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        rng = world.rng
        stage = rng.choice(OPEN_STAGES)
        target = chain.need("account")
        mine: list[Record] = []
        for account in _accounts(chain):
            stages = [stage] * rng.randrange(2, 4) if account is target.record else []
            stages += rng.sample([s for s in OPEN_STAGES if s != stage], 2)
            amounts = rng.sample(range(5, 90), len(stages))  # distinct: "the largest" is one deal
            for s, thousands in zip(stages, amounts, strict=True):
                deal = {"account_id": account["id"], "name": f"{account['name']} {world.fake.bs()}", "stage": s}
                deal |= {"amount": float(thousands * 1000), "owner": account["owner"]}
                record = world.add("crm", "deals", deal | {"close_date": world.day(rng.randrange(5, 60))})
                if account is target.record and s == stage:
                    mine.append(record)
        chain.facts["stage"] = stated("stage", stage)
        chain.call("crm_list_deals", {"account_id": target.ref, "stage": "${facts.stage}"}, save_as="deals")
        chain.bind("deals", {"deals": mine}, "deals.deals", "crm")
        chain.clause(
            "go through their deals in {stage}",
            "list the deals of theirs that are at the {stage} stage",
            "look at their {stage} deals",
        )


class OpenTickets(Step):
    """The customer's open tickets: binds ``tickets`` (closed ones of theirs and others' open ones are decoys)."""

    kind = "read"
    name = "read_tickets"
    needs: ClassVar[tuple[str, ...]] = ("account",)
    gives: ClassVar[tuple[str, ...]] = ("tickets",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        rng = world.rng
        target = chain.need("account")
        mine: list[Record] = []
        problems = rng.sample(PROBLEMS, len(PROBLEMS))
        for account in _accounts(chain):
            states = ["open"] * rng.randrange(2, 5) if account is target.record else ["open"]
            states += ["resolved", "closed"][: rng.randrange(1, 3)]
            for status in states:
                record = {"title": problems.pop() if problems else world.fake.catch_phrase(), "status": status}
                record |= {"team": rng.choice(TEAMS), "priority": "medium", "customer": account["name"]}
                ticket = world.add("tickets", "tickets", record | {"created": world.day(-rng.randrange(1, 20))})
                if account is target.record and status == "open":
                    mine.append(ticket)
        if "ticket" in chain.bound:  # the ticket that located the customer is open too
            mine.append(chain.bound["ticket"].record)
        for t in mine:
            t["priority"] = "medium"
        rng.choice(mine)["priority"] = "high"  # exactly one: what "the urgent one" picks
        chain.call("tickets_search", {"customer": target.record["name"], "status": "open"}, save_as="open")
        chain.bind("tickets", {"tickets": mine}, "open.tickets", "tickets")
        chain.clause(
            "check their open tickets",
            "see what support tickets they still have open",
            "go through the tickets of theirs that are still open",
        )


READ: tuple[Step, ...] = (Contacts(), AccountDetails(), Deals(), OpenTickets())
