"""Expense steps: decide a report's expense claim under the policy, or file one of the user's own.

The family starts from a colleague (a report of the user's) with one claim waiting for the
user's approval, beside an approved claim of theirs and a namesake's pending claim. It
binds ``expense``; the acts approve it or reject it with a reason. ``start_file_expense``
begins a workflow of its own: file the user's expense, pre-approved by their manager where
the policy asks for it, submit it and send it to the manager for approval.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.draft import stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.steps.base import Chain, Record, Step
from coworkenv.synth.steps.people import colleague

CATEGORIES = {"travel": 800.0, "meals": 120.0, "software": 400.0, "training": 1500.0}
WHAT = {
    "travel": "a train ticket",
    "meals": "a team lunch",
    "software": "a design tool licence",
    "training": "a course",
}
REASONS = ("no receipt attached", "over the policy limit", "a personal purchase", "claimed twice")


def _rules(chain: Chain, preapproval: float | None = None) -> None:
    for category, limit in CATEGORIES.items():
        rule: Record = {"category": category, "limit": limit, "needs_receipt": category != "meals"}
        rule |= {"description": f"{category} up to {limit:.0f} USD", "preapproval_above": preapproval}
        chain.world.add("expenses", "rules", rule)


class Claim(Step):
    """A report's claim waiting for the user's approval: binds ``expense`` and the colleague (``person``)."""

    kind = "locate"
    name = "locate_expense"
    gives: ClassVar[tuple[str, ...]] = ("expense", "person")

    def apply(self, chain: Chain) -> None:
        world = chain.world
        rng = world.rng
        who = colleague(chain)
        _rules(chain)
        category = rng.choice(list(CATEGORIES))
        amount = rng.randrange(2000, int(CATEGORIES[category]) * 100) / 100  # cents: not a number the prompt has
        claim = {"employee": who.email, "category": category, "description": WHAT[category], "receipt": True}
        claim |= {"amount": amount, "date": world.day(-3), "status": "pending_approval", "approver": world.me.email}
        earlier = claim | {"amount": float(rng.randrange(20, 90)), "date": world.day(-30), "status": "approved"}
        world.add("expenses", "expenses", earlier)
        target = world.add("expenses", "expenses", claim)
        namesake = next(
            c
            for c in world.fixtures["contacts"]["contacts"]
            if c["name"].split()[0] == who.first and c["email"] != who.email
        )
        world.add("expenses", "expenses", claim | {"employee": namesake["email"], "amount": amount + 15})
        args = {"employee": "${who.contacts[0].email}"}  # their approved claim is in view beside the pending one
        chain.call("expenses_list_expenses", args, save_as="claims")
        chain.bind("expense", target, "${claims.expenses[0].id}", "expenses", "expenses")
        chain.report_found(f"{amount:.2f}", f"Their pending claim is {amount:.2f} USD for {WHAT[category]}.")
        chain.clause(
            "find the expense {person} is waiting on me to approve",
            "look up {person}'s pending expense claim",
            "check which expense of {person}'s needs my approval",
        )


class ClaimDetails(Step):
    """The claim in full (receipt, category)."""

    kind = "read"
    name = "read_expense"
    needs: ClassVar[tuple[str, ...]] = ("expense",)

    def apply(self, chain: Chain) -> None:
        chain.call("expenses_get_expense", {"expense_id": chain.need("expense").ref})
        chain.clause("open the claim", "look at the claim itself", "check the claim's details")


class Policy(Step):
    """The expense policy: the report states the category's limit."""

    kind = "read"
    name = "read_rules"
    needs: ClassVar[tuple[str, ...]] = ("expense",)

    def apply(self, chain: Chain) -> None:
        category = chain.need("expense").record["category"]
        chain.call("expenses_list_rules", {})
        chain.report.append(f"The {category} limit is {CATEGORIES[category]:.0f} USD.")
        chain.clause(
            "check the policy limit for that category",
            "see what the expense policy allows for it",
            "look up the policy rule for that kind of expense",
        )


class ApproveClaim(Step):
    """Approve the claim."""

    kind = "act"
    name = "act_approve_expense"
    needs: ClassVar[tuple[str, ...]] = ("expense",)
    gives: ClassVar[tuple[str, ...]] = ("decision",)

    def apply(self, chain: Chain) -> None:
        expense = chain.need("expense")
        chain.update("expenses_approve", {"expense_id": expense.ref}, expense, {"status": "approved"}, "approved")
        chain.bind("decision", {"status": "approved"}, expense.ref, "expenses")
        chain.clause("approve the claim", "sign the claim off", "approve their expense")


class RejectClaim(Step):
    """Reject the claim with the reason the request gives."""

    kind = "act"
    name = "act_reject_expense"
    needs: ClassVar[tuple[str, ...]] = ("expense",)
    gives: ClassVar[tuple[str, ...]] = ("decision",)

    def apply(self, chain: Chain) -> None:
        expense = chain.need("expense")
        reason = chain.world.rng.choice(REASONS)
        chain.facts["reason"] = stated("reason", reason)
        args = {"expense_id": expense.ref, "reason": "${facts.reason}"}
        changes = {"status": "rejected", "rejection_reason": reason}
        chain.update("expenses_reject", args, expense, changes, "rejected")
        chain.bind("decision", {"status": "rejected"}, expense.ref, "expenses")
        chain.clause(
            "reject the claim ({reason})", "turn their expense down as {reason}", "reject the claim, reason: {reason}"
        )


class FileExpense(Step):
    """File, submit and send for approval one of the user's expenses (pre-approved first above the policy's mark)."""

    kind = "act"
    name = "start_file_expense"

    def apply(self, chain: Chain) -> None:
        world = chain.world
        rng = world.rng
        category = rng.choice([c for c in CATEGORIES if c != "meals"])
        mark = CATEGORIES[category] / 2
        _rules(chain, preapproval=mark)
        amount = float(rng.randrange(30, int(CATEGORIES[category])))
        former = world.person(world.me.department)  # approved an earlier claim: their address is a look-alike
        world.contacts(former, extra=2)
        earlier = {"employee": world.me.email, "category": category, "description": WHAT[category], "receipt": True}
        earlier |= {"amount": amount + 10, "date": world.day(-40), "status": "approved", "approver": former.email}
        world.add("expenses", "expenses", earlier)
        chain.facts["amount"] = stated("amount", f"{amount:.2f}", given=f"{amount:.2f} USD")
        chain.facts["what"] = stated("what", WHAT[category])
        chain.facts["category"] = stated("category", category)
        chain.subject = WHAT[category]
        me, boss, day = world.me.email, world.boss.email, world.day(-1)
        args = {"employee": me, "amount": amount, "category": "${facts.category}", "description": "${facts.what}"}
        chain.call("expenses_list_expenses", {"employee": me})  # not filed already (the earlier claim in view)
        chain.call("expenses_create_expense", args | {"date": day, "receipt": True}, save_as="claim")
        chain.call("contacts_search", {"query": world.boss.name}, save_as="boss")
        if amount > mark:
            chain.call("expenses_preapprove", {"expense_id": "${claim.id}", "approver": "${boss.contacts[0].email}"})
        chain.call("expenses_submit", {"expense_id": "${claim.id}"})
        chain.call(
            "expenses_request_approval",
            {"expense_id": "${claim.id}", "approver": "${boss.contacts[0].email}"},
            main=True,
        )
        mine = field("employee").eq(me) & field("amount").eq(amount)
        sent = and_(
            mine, field("category").eq(category), field("status").eq("pending_approval"), field("approver").eq(boss)
        )
        chain.checks.record_exists("expense_filed", "expenses", "expenses", sent, 3.0)
        chain.checks.count("filed_once", "expenses", "expenses", mine, 1, 1.0)  # a claim filed twice is paid twice
        chain.allow("expenses", "expenses", mine)
        chain.report_found(boss, f"I filed it and sent it to {world.boss.name} ({boss}) for approval.")
        boss_name = world.boss.name
        chain.clause(
            f"file my {{category}} expense for {{what}}, {{amount}} on {day} (receipt attached) and send it to "
            f"{boss_name} for approval",
            f"claim {{amount}} of {{category}} for {{what}} from {day} for me, receipt included, and route it to "
            f"{boss_name}",
            f"put in my {{amount}} {{category}} expense for {{what}} ({day}, I have the receipt) and get {boss_name} "
            "to approve it",
        )


LOCATE: tuple[Step, ...] = (Claim(),)
START: tuple[Step, ...] = (FileExpense(),)
READ: tuple[Step, ...] = (ClaimDetails(), Policy())
ACT: tuple[Step, ...] = (ApproveClaim(), RejectClaim())
