"""derive: compute what the report must state or a later step acts on (a count, a sum, a pick by a rule, a date).

A figure becomes an ``answer_number`` check (the report's substance); a pick binds the
chosen record for a later act step, and the look-alikes it passes over are already in
the World (the read step planted them); a date is computed from today in working days.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.steps.base import Chain, Step


class CountTickets(Step):
    """How many tickets the customer has open: the report must state the count."""

    kind = "derive"
    name = "derive_count"
    needs: ClassVar[tuple[str, ...]] = ("tickets",)
    gives: ClassVar[tuple[str, ...]] = ("figure",)

    def apply(self, chain: Chain) -> None:
        count = len(chain.need("tickets").record["tickets"])
        chain.checks.answer_counts("told_count", {"open ticket": count})
        chain.substance.append("told_count")
        chain.capabilities.add("information_synthesis")
        chain.bind("figure", {"value": count}, "${len(open.tickets)}", "tickets")
        chain.report.append("They have ${len(open.tickets)} open tickets.")
        chain.clause(
            "tell me how many tickets are open", "count those tickets", "let me know how many open tickets there are"
        )


class SumDeals(Step):
    """The total value of the deals read: the report must state the sum."""

    kind = "derive"
    name = "derive_sum"
    needs: ClassVar[tuple[str, ...]] = ("deals",)
    gives: ClassVar[tuple[str, ...]] = ("figure",)

    def apply(self, chain: Chain) -> None:
        total = sum(d["amount"] for d in chain.need("deals").record["deals"])
        chain.checks.answer_number("told_total", total, 0.01)
        chain.capabilities.add("information_synthesis")
        chain.bind("figure", {"value": total}, "${sum(deals.deals[*].amount)}", "crm")
        chain.report.append("Those deals total ${sum(deals.deals[*].amount)} USD.")
        chain.clause("add up what those deals are worth", "work out the deals' total value", "total the deal amounts")


class PickUrgent(Step):
    """The one high-priority ticket among the open ones (a rule picks it): binds ``ticket``."""

    kind = "derive"
    name = "derive_pick_ticket"
    needs: ClassVar[tuple[str, ...]] = ("tickets", "account")
    gives: ClassVar[tuple[str, ...]] = ("ticket",)

    def apply(self, chain: Chain) -> None:
        urgent = next(t for t in chain.need("tickets").record["tickets"] if t["priority"] == "high")
        args = {"customer": chain.need("account").record["name"], "status": "open", "priority": "high"}
        chain.call("tickets_search", args, save_as="urgent")
        chain.bind("ticket", urgent, "${urgent.tickets[0].id}", "tickets")
        chain.summary.append(urgent["id"])
        chain.report.append(f"The urgent one is {urgent['id']} ({urgent['title']}).")
        chain.checks.answer_contains("told_ticket", [urgent["id"]])
        chain.clause(
            "pick out the high-priority ticket",
            "find the ticket marked high priority",
            "single out the most urgent ticket (the high-priority one)",
        )


class PickLargestDeal(Step):
    """The largest of the deals read: binds ``deal``."""

    kind = "derive"
    name = "derive_pick_deal"
    needs: ClassVar[tuple[str, ...]] = ("deals",)
    gives: ClassVar[tuple[str, ...]] = ("deal",)

    def apply(self, chain: Chain) -> None:
        deals = chain.need("deals").record["deals"]
        top = max(deals, key=lambda d: d["amount"])
        chain.bind("deal", top, top["id"], "crm")
        chain.summary.append(top["name"])
        chain.report.append(f"The largest is {top['name']}.")
        chain.checks.answer_contains("told_deal", [top["name"]])
        chain.clause(
            "find the largest of those deals", "pick the biggest deal", "take the deal with the highest amount"
        )


class Deadline(Step):
    """A due date read off the account (its renewal date), for a later write: binds ``date``."""

    kind = "derive"
    name = "derive_deadline"
    needs: ClassVar[tuple[str, ...]] = ("account",)
    gives: ClassVar[tuple[str, ...]] = ("date",)

    def apply(self, chain: Chain) -> None:
        account = chain.need("account")
        chain.bind("date", {"value": account.record["renewal_date"]}, account.field_ref("renewal_date"), "crm")


DERIVE: tuple[Step, ...] = (CountTickets(), SumDeals(), PickUrgent(), PickLargestDeal(), Deadline())
