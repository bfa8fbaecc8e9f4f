"""Expense report under an approval rule: file a receipt, submit it, get approval when over the limit."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact, stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.rules import require_prior
from coworkenv.synth.world import World, manager_change

CATEGORIES = {"meals": (60, 150), "travel": (300, 800), "lodging": (150, 400), "office": (80, 200)}
WHAT = {
    "meals": "client dinner at {vendor}",
    "travel": "train tickets from {vendor}",
    "lodging": "hotel stay at {vendor}",
    "office": "desk equipment from {vendor}",
}
OPENINGS = [
    "Please file my expense for the {what} {category}: the receipt is in my inbox. Submit it, and if "
    "it's over the category limit, request approval from my manager.",
    "Can you expense the {what}? Receipt's in my mail. File it {category}, submit it and get my "
    "manager's approval if the policy limit requires it.",
    "I need the {what} reimbursed. Use the receipt from my inbox, file it {category}, submit, and ask my "
    "manager to approve if it's above the limit.",
]
POLICY = require_prior(
    "check-expense-policy",
    "expenses_create_expense",
    "expenses_list_rules",
    "Look up the expense policy (the category limits) before filing an expense.",
)


class ExpenseReport(Blueprint):
    name = "expense_report"
    summary = "file an expense from a mailed receipt and request approval when it exceeds the category limit"
    capabilities = ("tool_coordination", "workflow_compliance")
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng, me, boss = world.rng, world.me, world.boss
        limits = _rules(world)
        category = rng.choice(list(CATEGORIES))
        vendor, _ = world.customer()
        over = "dynamic" in options or rng.random() < 0.6
        amount = round(limits[category] * (rng.uniform(1.1, 1.6) if over else rng.uniform(0.5, 0.9)), 2)
        day = world.day(-rng.randrange(1, 8))
        receipt = _receipts(world, vendor, amount, day)
        mine = _past_claims(world)
        what = WHAT[category].format(vendor=vendor)
        _colleague_claim(world, amount, category, what, day)
        draft = _draft(self, world, what, category, receipt)
        _file(draft, world, vendor, amount, what, day)
        if "dynamic" in options:  # the user's manager changes while the agent works: approval goes to the new one
            boss = world.person(boss.department, title=boss.title)
            draft.events.append(manager_change(world, me, boss))
            say = "The directory just changed, so I'm looking up your manager again."
            step = {"call": "contacts_search", "args": {"query": me.name}, "save_as": "me", "say": say}
            draft.reference.insert_before("file", step)
        if over:
            approval = {"expense_id": "${exp.id}", "approver": "${me.contacts[0].manager_email}"}
            draft.reference.call("expenses_request_approval", approval, role="main")
            answer = (
                f"Filed and submitted ${{exp.id}} for {amount:.2f} USD; it is over the {category} limit, so I "
                f"asked {boss.name} to approve it."
            )
        else:
            draft.reference.alias("file", "main")
            answer = (
                f"Filed and submitted ${{exp.id}} for {amount:.2f} USD; it is within the {category} limit, so "
                "no approval was needed."
            )
        if "aggregate" in options:
            answer += _total_claims(draft, world, round(sum(mine) + amount, 2))
        draft.reference.answer(answer)
        _checks(draft, world, amount, category, boss.email if over else None)
        return draft


def _rules(world: World) -> dict[str, float]:
    """The expense policy: a limit per category; returns the limits."""
    limits = {c: float(world.rng.randrange(lo, hi, 10)) for c, (lo, hi) in CATEGORIES.items()}
    for cat, limit in limits.items():
        rule = {"category": cat, "limit": limit, "needs_receipt": cat != "office"}
        world.add("expenses", "rules", {**rule, "description": f"{cat} up to {limit:.0f} USD without approval"})
    return limits


def _receipts(world: World, vendor: str, amount: float, day: str) -> dict[str, Any]:
    """The receipt to file (returned) among other shops' receipts and noise."""
    world.noise_mail(world.rng.randrange(1, 3))
    for _ in range(2):
        other, _ = world.customer()
        body = f"Thank you for your purchase. Total charged: ${world.money(20, 400):.2f}."
        world.mail(f"receipts@{other.split()[0].lower()}.shop", f"Your receipt from {other}", body, world.day(-3))
    body = f"Thank you for your purchase at {vendor} on {day}. Total charged: ${amount:.2f}."
    receipt = world.mail(f"receipts@{vendor.split()[0].lower()}.shop", f"Your receipt from {vendor}", body, day)
    world.noise_mail(world.rng.randrange(0, 2))
    return receipt


def _past_claims(world: World) -> list[float]:
    """The user's approved meal claims from earlier; returns their amounts."""
    mine = [world.money(15, 120) for _ in range(world.rng.randrange(1, 4))]
    for value in mine:
        claim = {"employee": world.me.email, "amount": value, "category": "meals", "description": world.fake.bs()}
        world.add("expenses", "expenses", {**claim, "date": world.day(-12), "status": "approved", "receipt": True})
    return mine


def _colleague_claim(world: World, amount: float, category: str, what: str, day: str) -> None:
    """A colleague's claim for the same amount: a record to leave alone, not a duplicate."""
    colleague = world.person()
    claim = {"employee": colleague.email, "amount": amount, "category": category, "description": what}
    world.add("expenses", "expenses", {**claim, "date": day, "status": "submitted", "receipt": True})
    world.contacts(colleague, extra=2)


def _draft(bp: Blueprint, world: World, what: str, category: str, receipt: dict[str, Any]) -> Draft:
    facts = {
        "what": stated("what", what),
        "category": Fact(
            "category",
            category,
            f"under {category}",
            ["category"],
            "Which expense category do you want it filed under?",
            f"File it under {category}.",
        ),
    }
    readable = [("mail", "messages", receipt["id"], "body")]
    draft = Draft.start(bp.name, f"Expense the {what}", world, OPENINGS, facts, set(bp.capabilities), readable)
    draft.rules.append(POLICY)
    return draft


def _file(draft: Draft, world: World, vendor: str, amount: float, what: str, day: str) -> None:
    """Read the policy and the receipt, look up the user's manager, file and submit the claim."""
    ref = draft.reference
    ref.call("expenses_list_rules", save_as="rules")
    ref.call("mail_search", {"query": vendor.split()[0]}, save_as="found")
    ref.call("mail_read", {"message_id": "${found.messages[0].id}"})
    ref.call("contacts_search", {"query": world.me.name}, save_as="me")
    claim = {"employee": world.me.email, "amount": amount, "category": "${facts.category}", "description": what}
    ref.call("expenses_create_expense", {**claim, "date": day, "receipt": True}, save_as="exp", role="file")
    ref.call("expenses_submit", {"expense_id": "${exp.id}"})
    draft.summary = [f"{amount:.2f}"]


def _total_claims(draft: Draft, world: World, total: float) -> str:
    """The ``aggregate`` option: the total of the user's claims on file, the new one included."""
    draft.reference.call("expenses_list_expenses", {"employee": world.me.email}, save_as="all")
    draft.ask_figure("Also tell me the total of all my expense claims on file.", "total_told", total, 0.01)
    return " Your claims on file now total ${sum(all.expenses[*].amount)} USD."


def _checks(draft: Draft, world: World, amount: float, category: str, approver: str | None) -> None:
    mine = and_(field("employee").eq(world.me.email), field("amount").eq(amount), field("category").eq(category))
    status = field("status").eq("pending_approval" if approver else "submitted")
    filed = and_(mine, status, field("approver").eq(approver)) if approver else and_(mine, status)
    draft.checks.record_exists("filed", "expenses", "expenses", filed, 3.0)
    draft.checks.count("filed_once", "expenses", "expenses", mine, 1)
    draft.checks.unchanged("expenses_guard", "expenses", "expenses", mine, 2.0)
    draft.checks.answer_contains("told_amount", [f"{amount:.2f}"])
