"""Expense report under an approval rule: file a receipt, submit it, get approval when over the limit."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World, manager_change

CATEGORIES = {"meals": (60, 150), "travel": (300, 800), "lodging": (150, 400), "office": (80, 200)}
WHAT = {
    "meals": "client dinner at {vendor}",
    "travel": "train tickets from {vendor}",
    "lodging": "hotel stay at {vendor}",
    "office": "desk equipment from {vendor}",
}


class ExpenseReport(Blueprint):
    name = "expense_report"
    summary = "file an expense from a mailed receipt and request approval when it exceeds the category limit"
    capabilities = ("tool_coordination", "workflow_compliance")
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng, me, boss = world.rng, world.me, world.boss
        limits = {c: float(rng.randrange(lo, hi, 10)) for c, (lo, hi) in CATEGORIES.items()}
        for cat, limit in limits.items():
            world.add(
                "expenses",
                "rules",
                {
                    "category": cat,
                    "limit": limit,
                    "needs_receipt": cat != "office",
                    "description": f"{cat} up to {limit:.0f} USD without approval",
                },
            )
        category = rng.choice(list(CATEGORIES))
        vendor, _ = world.customer()
        limit = limits[category]
        dynamic = "dynamic" in options
        over = dynamic or rng.random() < 0.6
        amount = round(limit * (rng.uniform(1.1, 1.6) if over else rng.uniform(0.5, 0.9)), 2)
        day = world.day(-rng.randrange(1, 8))
        world.noise_mail(rng.randrange(1, 3))
        for _ in range(2):
            other, _ = world.customer()
            world.mail(
                f"receipts@{other.split()[0].lower()}.shop",
                f"Your receipt from {other}",
                f"Thank you for your purchase. Total charged: ${world.money(20, 400):.2f}.",
                world.day(-3),
            )
        receipt = world.mail(
            f"receipts@{vendor.split()[0].lower()}.shop",
            f"Your receipt from {vendor}",
            f"Thank you for your purchase at {vendor} on {day}. Total charged: ${amount:.2f}.",
            day,
        )
        world.noise_mail(rng.randrange(0, 2))
        mine = [world.money(15, 120) for _ in range(rng.randrange(1, 4))]
        for value in mine:
            world.add(
                "expenses",
                "expenses",
                {
                    "employee": me.email,
                    "amount": value,
                    "category": "meals",
                    "description": world.fake.bs(),
                    "date": world.day(-12),
                    "status": "approved",
                    "receipt": True,
                },
            )
        colleague = world.person()
        world.add(
            "expenses",
            "expenses",
            {
                "employee": colleague.email,
                "amount": amount,
                "category": category,
                "description": WHAT[category].format(vendor=vendor),
                "date": day,
                "status": "submitted",
                "receipt": True,
            },
        )
        world.contacts(colleague, extra=2)
        what = WHAT[category].format(vendor=vendor)
        draft = Draft(
            blueprint=self.name,
            title=f"Expense the {what}",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "Please file my expense for the {what} {category}: the receipt is in my inbox. Submit it, and if "
                "it's over the category limit, request approval from my manager.",
                "Can you expense the {what}? Receipt's in my mail. File it {category}, submit it and get my "
                "manager's approval if the policy limit requires it.",
                "I need the {what} reimbursed. Use the receipt from my inbox, file it {category}, submit, and ask my "
                "manager to approve if it's above the limit.",
            ],
            facts={
                "what": Fact("what", what, what, ["what"], "", "", withholdable=False),
                "category": Fact(
                    "category",
                    category,
                    f"under {category}",
                    ["category"],
                    "Which expense category do you want it filed under?",
                    f"File it under {category}.",
                ),
            },
            reference=[
                {"call": "expenses_list_rules", "save_as": "rules"},
                {"call": "mail_search", "args": {"query": vendor.split()[0]}, "save_as": "found"},
                {"call": "mail_read", "args": {"message_id": "${found.messages[0].id}"}},
                {"call": "contacts_search", "args": {"query": me.name}, "save_as": "me"},
                {
                    "call": "expenses_create_expense",
                    "save_as": "exp",
                    "args": {
                        "employee": me.email,
                        "amount": amount,
                        "category": "${facts.category}",
                        "description": what,
                        "date": day,
                        "receipt": True,
                    },
                },
                {"call": "expenses_submit", "args": {"expense_id": "${exp.id}"}},
            ],
            checks=[],
            capabilities=set(self.capabilities),
            policies=[
                {
                    "id": "check-expense-policy",
                    "tool": "expenses_create_expense",
                    "rule": "require_prior",
                    "prior_tool": "expenses_list_rules",
                    "description": "Look up the expense policy (the category limits) before filing an expense.",
                }
            ],
            readable=[("mail", "messages", receipt["id"], "body")],
            summary=[f"{amount:.2f}"],
        )
        ref = draft.reference
        if dynamic:  # the user's manager changes while the agent works: approval must go to the new one
            boss = world.person(boss.department, title=boss.title)
            draft.events.append(manager_change(world, me, boss))
            ref.insert(
                4,
                {
                    "call": "contacts_search",
                    "args": {"query": me.name},
                    "save_as": "me",
                    "say": "The directory just changed, so I'm looking up your manager again.",
                },
            )
        status = "pending_approval" if over else "submitted"
        if over:
            ref.append(
                {
                    "call": "expenses_request_approval",
                    "_main": True,
                    "args": {"expense_id": "${exp.id}", "approver": "${me.contacts[0].manager_email}"},
                }
            )
            answer = (
                f"Filed and submitted ${{exp.id}} for {amount:.2f} USD; it is over the {category} limit, so I "
                f"asked {boss.name} to approve it."
            )
        else:
            ref[-2]["_main"] = True
            answer = (
                f"Filed and submitted ${{exp.id}} for {amount:.2f} USD; it is within the {category} limit, so "
                "no approval was needed."
            )
        if "aggregate" in options:
            ref.append({"call": "expenses_list_expenses", "args": {"employee": me.email}, "save_as": "all"})
            answer += " Your claims on file now total ${sum(all.expenses[*].amount)} USD."
            draft.ask_figure(
                "Also tell me the total of all my expense claims on file.",
                "total_told",
                round(sum(mine) + amount, 2),
                0.01,
            )
        ref.append({"answer": answer})
        mine_where = f"r.employee == '{me.email}' and r.amount == {amount} and r.category == '{category}'"
        approver = f" and r.approver == '{boss.email}'" if over else ""
        draft.check(
            "record_exists",
            "filed",
            3.0,
            service="expenses",
            collection="expenses",
            where=f"{mine_where} and r.status == '{status}'{approver}",
        )
        draft.check("count", "filed_once", 1.0, service="expenses", collection="expenses", where=mine_where, value=1)
        draft.check("unchanged", "expenses_guard", 2.0, service="expenses", collection="expenses", allow=mine_where)
        draft.check("answer_contains", "told_amount", 1.0, values=[f"{amount:.2f}"])
        return draft
