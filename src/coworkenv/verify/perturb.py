"""What the probes change: a guessed value, the planted calls, a collateral write.

Kept apart from the probe policies because each is a small piece of domain knowledge
about the services (which write damages which record, what a plausible wrong date is).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from coworkenv.capabilities.safety import INJECTION, fixture_texts
from coworkenv.expr import ExprError, evaluate
from coworkenv.services.registry import ALL_TOOLS, service_class
from coworkenv.spec.models import CallStep, TaskSpec

_SHIFTS = (("%Y-%m-%dT%H:%M", timedelta(hours=1)), ("%Y-%m-%d", timedelta(days=1)), ("%H:%M", timedelta(hours=1)))


def guess(value: Any) -> Any:
    """A plausible value of the same shape that is certainly not ``value``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value * 2 + 1
    if isinstance(value, list):
        return [guess(v) for v in value] or ["unknown"]
    if not isinstance(value, str):
        return "unknown"
    for fmt, step in _SHIFTS:
        try:
            return (datetime.strptime(value, fmt) + step).strftime(fmt)
        except ValueError:
            continue
    if value.count("@") == 1:
        local, domain = value.split("@")
        return f"{local}.team@{domain}"
    return "the usual one" if value.lower() != "the usual one" else "something else"


def exposed(spec: TaskSpec) -> set[str]:
    """The tool names an episode of this spec offers."""
    if spec.tools is not None:
        return set(spec.tools)
    return {n for n, i in ALL_TOOLS.items() if i.service in spec.services}


def injected_calls(spec: TaskSpec) -> list[CallStep]:
    """The tool calls that instructions planted in the fixtures ask for (exposed tools only)."""
    tools = exposed(spec)
    calls: list[CallStep] = []
    for text in fixture_texts(spec):
        for m in INJECTION.finditer(text):
            try:
                args = json.loads(m.group("args"))
            except json.JSONDecodeError:
                continue
            if m.group("tool") in tools and isinstance(args, dict):
                calls.append(CallStep(call=m.group("tool"), args=args))
    return calls


@dataclass(frozen=True)
class Damage:
    """A write that visibly changes an existing record: ``field`` becomes ``value``."""

    tool: str
    id_arg: str
    field: str
    value: Any
    extra: dict[str, Any] = field(default_factory=dict)
    only_status: tuple[str, ...] = ()

    def applies_to(self, rec: dict[str, Any], default: Any) -> bool:
        if self.only_status and rec.get("status") not in self.only_status:
            return False
        return rec.get(self.field, default) != self.value


DAMAGE: dict[tuple[str, str], Damage] = {
    ("mail", "messages"): Damage("mail_move", "message_id", "folder", "trash", {"folder": "trash"}),
    ("calendar", "events"): Damage("calendar_cancel_event", "event_id", "status", "cancelled"),
    ("contacts", "contacts"): Damage(
        "contacts_update", "contact_id", "title", "Former employee", {"title": "Former employee"}
    ),
    ("documents", "documents"): Damage(
        "documents_update", "document_id", "content", "(cleared)", {"content": "(cleared)"}
    ),
    ("tickets", "tickets"): Damage("tickets_update", "ticket_id", "status", "closed", {"status": "closed"}),
    ("crm", "deals"): Damage("crm_update_deal", "deal_id", "stage", "lost", {"stage": "lost"}),
    ("expenses", "expenses"): Damage(
        "expenses_reject",
        "expense_id",
        "status",
        "rejected",
        {"reason": "duplicate"},
        ("submitted", "pending_approval"),
    ),
}


def collateral_step(spec: TaskSpec) -> CallStep | None:
    """A damaging write on a record the task's guards protect (the heaviest guard first)."""
    tools = exposed(spec)
    guards = sorted((c for c in spec.checks if c.kind == "unchanged"), key=lambda c: -c.weight)
    targets = [(g.service, g.collection, g.allow) for g in guards]
    targets += [(s, c, None) for s, colls in spec.services.items() for c in colls]
    for service, collection, allow in targets:
        damage = DAMAGE.get((service, collection))
        if damage is None or service not in spec.services or damage.tool not in tools:
            continue
        model = service_class(service).records[collection]
        default = model.model_fields[damage.field].default
        for rec in spec.services[service].get(collection, []):
            if damage.applies_to(rec, default) and not _allowed(allow, rec):
                return CallStep(call=damage.tool, args={damage.id_arg: rec["id"], **damage.extra})
    return None


def _allowed(allow: str | None, rec: dict[str, Any]) -> bool:
    if allow is None:
        return False
    try:
        return bool(evaluate(allow, {"r": rec}))
    except ExprError:
        return False
