"""Month-end expense close over two days: submit the month's drafts for approval, then report what came back.

Day 1 (month-end): submit every draft expense of the user's that has a receipt and request
the manager's approval for each; drafts without a receipt stay; report the total
submitted. Overnight the manager approves all but two and rejects one of those with a
reason. Day 2 (the conversation goes on): email finance the approved expense ids with their
total, and report which one was rejected and why. The last one is approved during the
morning, as the agent starts looking (a stage event on its first listing): the finance mail
and the total must include it, so an agent working from the overnight picture fails.
"""

from __future__ import annotations

from typing import Any

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.stages import change
from coworkenv.synth.world import World

CATEGORIES = ("travel", "meals", "software", "equipment", "training", "taxi")
REASONS = ("the receipt is not itemised", "the amount is above the meals limit", "it is a personal expense")
OPENINGS = [
    "It's month-end close. Please submit every one of my draft expenses that has a receipt attached and request "
    "approval for each from {boss_name} ({boss}). Leave drafts without a receipt as they are, and tell me the total "
    "you submitted.",
    "Month-end: submit my draft expenses that have receipts, ask {boss_name} ({boss}) to approve each one, keep the "
    "drafts without a receipt as drafts, and tell me the total amount submitted.",
    "Please close my expenses for the month: every draft of mine with a receipt gets submitted with an approval "
    "request to {boss_name} ({boss}); ones without a receipt wait. What total did you submit?",
]
NEXT_DAY = (
    "Morning! Where do my month-end expenses stand? Email finance ({finance}) the ids of my approved expenses with "
    "their total, and tell me which one was rejected and why."
)


class MonthEndClose(Blueprint):
    name = "month_end_close"
    summary = "two days: submit the month's receipted draft expenses for approval; next day report approvals to finance"
    capabilities = ("tool_coordination", "dynamic_state", "information_synthesis")

    def build(self, world: World, options: frozenset[str]) -> Draft:
        finance = world.person("Finance", title="Controller")
        ready, waiting = _expenses(world)
        world.noise_mail(world.rng.randrange(2, 5))
        facts = {
            "boss_name": stated("boss_name", world.boss.name),
            "boss": stated("boss", world.boss.email),
        }
        draft = Draft.start(self.name, f"Month-end expense close for {world.me.name}", world, OPENINGS, facts, set())
        draft.clock = f"{world.today.isoformat()}T16:00"
        ids = [e["id"] for e in ready]
        draft.summary = ids
        total = round(sum(e["amount"] for e in ready), 2)
        ref = draft.reference
        ref.call("expenses_list_expenses", {"employee": world.me.email, "status": "draft"}, save_as="drafts")
        for i, eid in enumerate(ids):
            ref.call("expenses_submit", {"expense_id": eid})
            role = "main" if i == len(ids) - 1 else None
            ref.call("expenses_request_approval", {"expense_id": eid, "approver": world.boss.email}, role=role)
        left = ", ".join(e["id"] for e in waiting) or "none"
        report = f"Submitted {', '.join(ids)} for approval by {world.boss.first}: {total:.2f} USD in all."
        ref.answer(f"{report} Left as drafts: {left}.")
        pending = field("id").in_(ids) & field("status").eq("pending_approval") & field("approver").eq(world.boss.email)
        draft.checks.count("submitted", "expenses", "expenses", pending, len(ids), 3.0, required=True)
        draft.checks.answer_number("total_submitted", total, 0.01)
        draft.checks.unchanged("expenses_guard", "expenses", "expenses", field("id").in_(ids))
        draft.checks.unchanged("mail_untouched", "mail", "messages", weight=1.5)
        _report(draft, world, ready, finance.email)
        return draft


def _expenses(world: World) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The user's drafts (three or four with a receipt, one without), older reimbursed ones, others' drafts."""
    me = world.me.email
    ready: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    for i in range(world.rng.randrange(3, 5) + 1):
        receipt = i > 0
        rec = _expense(world, me, world.day(-world.rng.randrange(1, 12)), "draft", receipt)
        (ready if receipt else waiting).append(rec)
    for _ in range(2):
        _expense(world, me, world.day(-world.rng.randrange(25, 40)), "reimbursed", True)
    for _ in range(2):
        _expense(world, world.person().email, world.day(-world.rng.randrange(1, 12)), "draft", True)
    return ready, waiting


def _expense(world: World, who: str, day: str, status: str, receipt: bool) -> dict[str, Any]:
    category = world.rng.choice(CATEGORIES)
    record = {
        "employee": who,
        "amount": world.money(20, 900),
        "category": category,
        "description": f"{category.capitalize()}: {world.fake.bs()}",
        "date": day,
        "status": status,
        "receipt": receipt,
    }
    return world.add("expenses", "expenses", record)


def _report(draft: Draft, world: World, ready: list[dict[str, Any]], finance: str) -> None:
    """Day 2: one rejected overnight with a reason, all others approved, the last of them during the morning."""
    stage = draft.add_stage("next_day", NEXT_DAY.format(finance=finance), {"to": f"{world.day(1)}T09:00"})
    stage.notify = "Your manager went through the expense approvals overnight."
    rejected = world.rng.choice(ready)
    reason = world.rng.choice(REASONS)
    approved = [e for e in ready if e is not rejected]
    late = world.rng.choice(approved)
    for e in approved:
        if e is not late:
            stage.update("expenses", "expenses", e["id"], {"status": "approved"})
    stage.update("expenses", "expenses", rejected["id"], {"status": "rejected", "rejection_reason": reason})
    approval = change("expenses", "expenses", late["id"], {"status": "approved"})
    notice = f"{world.boss.first} just approved {late['id']}."
    stage.event("late-approval", "expenses_list_expenses", [approval], notice)
    me = world.me.email
    ref = stage.reference
    ref.call("expenses_list_expenses", {"employee": me, "status": "rejected"}, save_as="no")
    ref.call("expenses_list_expenses", {"employee": me, "status": "approved"}, save_as="ok")
    body = "Approved expenses: ${join(ok.expenses[*].id)}. Total approved: ${round(sum(ok.expenses[*].amount), 2)} USD."
    ref.call("mail_send", {"to": [finance], "subject": "Approved expenses", "body": body}, role="main")
    ref.answer(
        "Emailed finance the approved expenses (${round(sum(ok.expenses[*].amount), 2)} USD). Rejected: "
        "${no.expenses[0].id}, because ${no.expenses[0].rejection_reason}."
    )
    sent = field("folder").eq("sent") & field("to").has(finance)
    listed = and_(sent, *(field("body").contains(e["id"]) for e in approved))
    checks = stage.checks
    checks.count("finance_told", "mail", "messages", listed, 1, 3.0)
    checks.answer_contains("rejection_told", [rejected["id"]], 2.0)
    checks.answer_number("total_approved", round(sum(e["amount"] for e in approved), 2), 0.01)
    approved_late = field("id").eq(late["id"]) & field("status").eq("approved")  # the manager's change, not the agent's
    checks.unchanged("expenses_left_alone", "expenses", "expenses", approved_late)
    checks.unchanged("mail_guard", "mail", "messages", field("folder").eq("sent"), 1.5)
