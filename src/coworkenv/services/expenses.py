"""Expenses: expense reports with a draft -> submitted -> approval workflow and policy rules."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from coworkenv.services.base import (
    Limit,
    Offset,
    Record,
    RecordModel,
    Result,
    Service,
    ToolError,
    check_date,
    check_email,
    page,
    tool,
)
from coworkenv.services.damage import Damage

Status = Literal["draft", "submitted", "pending_approval", "approved", "rejected", "reimbursed"]


class Expense(RecordModel):
    employee: str
    amount: float = Field(ge=0)
    currency: str = "USD"
    category: str
    description: str = ""
    date: str
    status: Status = "draft"
    approver: str | None = None
    receipt: bool = False
    rejection_reason: str | None = None
    preapproved_by: str | None = None


class ExpenseRule(RecordModel):
    category: str
    limit: float
    needs_receipt: bool = False
    description: str = ""
    preapproval_above: float | None = None
    """Expenses of this category above this amount are submitted only once pre-approved (None: never needed)."""


def _needs_preapproval(rule: Record | None, exp: Record) -> bool:
    return rule is not None and rule["preapproval_above"] is not None and exp["amount"] > rule["preapproval_above"]


class Expenses(Service):
    name = "expenses"
    description = "expense reports, their approval workflow and the expense policy"
    records = {"expenses": Expense, "rules": ExpenseRule}
    id_prefix = {"expenses": "exp", "rules": "rule"}
    damage: ClassVar[dict[str, Damage]] = {
        "expenses": Damage.rejecting("expenses_reject", "expense_id", ("submitted", "pending_approval"))
    }

    def _rule(self, category: str) -> Record | None:
        for r in self.db["rules"].values():
            if r["category"] == category:
                return r
        return None

    def _transition(self, expense_id: str, allowed: tuple[str, ...], action: str) -> Record:
        exp = self.get("expenses", expense_id)
        if exp["status"] not in allowed:
            raise ToolError(
                f"cannot {action} expense {expense_id!r} in status {exp['status']!r} (needs {' or '.join(allowed)})"
            )
        return exp

    def _approver_check(
        self, expense_id: str, approver: str, allowed: tuple[str, ...], action: str, verb: str | None = None
    ) -> Record:
        """The expense, if it is in an ``allowed`` status and ``approver`` is an address other than the employee's."""
        check_email(approver, "approver")
        exp = self._transition(expense_id, allowed, action)
        if approver.lower() == exp["employee"].lower():
            raise ToolError(f"an employee cannot {verb or action} their own expense")
        return exp

    @tool("read")
    def list_expenses(
        self,
        employee: str | None = None,
        status: Status | None = None,
        category: str | None = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> Result:
        """List expenses, optionally of one employee (email), in one status or category. Newest first."""
        who = employee.lower() if employee else None
        hits = [
            e
            for e in self.db["expenses"].values()
            if (who is None or e["employee"].lower() == who)
            and (status is None or e["status"] == status)
            and (category is None or e["category"] == category)
        ]
        hits.sort(key=lambda e: (e["date"], e["id"]), reverse=True)
        return page(hits, limit, offset, key="expenses")

    @tool("read")
    def get_expense(self, expense_id: str) -> Result:
        """Get one expense in full."""
        return self.get("expenses", expense_id)

    @tool("write")
    def create_expense(
        self,
        employee: Annotated[str, Field(description="the employee's email")],
        amount: Annotated[float, Field(gt=0)],
        category: str,
        description: str,
        date: Annotated[str, Field(description="YYYY-MM-DD")],
        currency: Annotated[str, Field(description="ISO 4217 code, e.g. USD")] = "USD",
        receipt: bool = False,
    ) -> Result:
        """Create a draft expense for an employee."""
        check_email(employee, "employee")
        if amount <= 0:
            raise ToolError("amount must be greater than 0")
        if len(currency) != 3 or not currency.isalpha():
            raise ToolError(f"invalid currency {currency!r}: expected a 3-letter code like USD")
        if self.db["rules"] and self._rule(category) is None:
            cats = sorted({r["category"] for r in self.db["rules"].values()})
            raise ToolError(f"unknown category {category!r}; categories: {', '.join(cats)}")
        rec = self.insert(
            "expenses",
            {
                "employee": employee,
                "amount": float(amount),
                "currency": currency.upper(),
                "category": category,
                "description": description,
                "date": check_date(date),
                "receipt": receipt,
            },
        )
        return {"created": True, "id": rec["id"], "status": "draft"}

    @tool("write")
    def submit(self, expense_id: str) -> Result:
        """Submit a draft expense for processing (a receipt, or a pre-approval, is required where the category's
        rule says so).
        """
        exp = self._transition(expense_id, ("draft",), "submit")
        rule = self._rule(exp["category"])
        if rule is not None and rule["needs_receipt"] and not exp["receipt"]:
            raise ToolError(f"category {exp['category']!r} needs a receipt before submitting")
        if rule is not None and _needs_preapproval(rule, exp) and exp["preapproved_by"] is None:
            raise ToolError(
                f"{exp['category']} expenses over {rule['preapproval_above']:g} need a pre-approval before submitting"
                " (expenses_preapprove)"
            )
        self.update("expenses", expense_id, {"status": "submitted"})
        return {"id": expense_id, "status": "submitted"}

    @tool("write")
    def preapprove(
        self, expense_id: str, approver: Annotated[str, Field(description="the approver's email")]
    ) -> Result:
        """Record a manager's pre-approval of a draft expense (its category's rule may require one to submit)."""
        exp = self._approver_check(expense_id, approver, ("draft",), "pre-approve")
        if not _needs_preapproval(self._rule(exp["category"]), exp):
            raise ToolError(f"expense {expense_id!r} needs no pre-approval under the {exp['category']!r} rule")
        self.update("expenses", expense_id, {"preapproved_by": approver})
        return {"id": expense_id, "status": "draft", "preapproved_by": approver}

    @tool("write")
    def request_approval(
        self, expense_id: str, approver: Annotated[str, Field(description="the approver's email")]
    ) -> Result:
        """Ask someone (usually the employee's manager) to approve a submitted expense."""
        self._approver_check(expense_id, approver, ("submitted",), "request approval for", "approve")
        self.update("expenses", expense_id, {"status": "pending_approval", "approver": approver})
        return {"id": expense_id, "status": "pending_approval", "approver": approver}

    @tool("write")
    def approve(self, expense_id: str) -> Result:
        """Approve a submitted or pending expense."""
        self._transition(expense_id, ("submitted", "pending_approval"), "approve")
        self.update("expenses", expense_id, {"status": "approved"})
        return {"id": expense_id, "status": "approved"}

    @tool("write")
    def reject(self, expense_id: str, reason: str) -> Result:
        """Reject a submitted or pending expense, giving a reason."""
        if not reason.strip():
            raise ToolError("reason must not be empty")
        self._transition(expense_id, ("submitted", "pending_approval"), "reject")
        self.update("expenses", expense_id, {"status": "rejected", "rejection_reason": reason})
        return {"id": expense_id, "status": "rejected", "reason": reason}

    @tool("read")
    def list_rules(self) -> Result:
        """List the expense policy: per-category limits and receipt requirements."""
        return {"rules": sorted(self.db["rules"].values(), key=lambda r: (r["category"], r["id"]))}
