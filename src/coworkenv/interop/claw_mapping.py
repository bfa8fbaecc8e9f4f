"""How Claw-Eval's mock services and tools correspond to coworkenv's services and tools.

Data only, shared by the importer and the exporter. A record mapping names the coworkenv
service and collection, the field renames, and per-field value conversions; fields with no
counterpart are dropped and reported. A tool maps to a coworkenv tool, optionally with a
condition on its arguments (``helpdesk_close_ticket`` is ``tickets_update`` that closes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def _as_list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)] if value else []


def _lower_list(value: object) -> list[str]:
    return [v.lower() for v in _as_list(value)]


def _text(value: object) -> str:
    return "" if value is None else str(value)


@dataclass(frozen=True)
class RecordMap:
    service: str
    collection: str
    id_field: str
    fields: dict[str, str]
    convert: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    allowed: dict[str, frozenset[str]] = field(default_factory=dict)
    defaults: dict[str, object] = field(default_factory=dict)

    def record(self, row: dict[str, object]) -> tuple[dict[str, object], list[str]]:
        """The coworkenv record and the Claw-Eval fields that had no place in it (or whose value had none)."""
        out: dict[str, object] = {"id": str(row[self.id_field]), **self.defaults}
        dropped = []
        for key, value in row.items():
            if key == self.id_field:
                continue
            target = self.fields.get(key)
            if target is None:
                dropped.append(key)
                continue
            value = self.convert.get(key, lambda v: v)(value)
            if target in self.allowed and value not in self.allowed[target]:
                dropped.append(f"{key}={value!r}")  # e.g. an empty priority: the service default would apply
                continue
            out[target] = value
        return out, dropped


RECORDS: dict[str, RecordMap] = {
    "gmail": RecordMap(
        "mail",
        "messages",
        "message_id",
        {
            "from": "sender",
            "to": "to",
            "cc": "cc",
            "subject": "subject",
            "body": "body",
            "date": "date",
            "labels": "labels",
            "is_read": "unread",
        },
        {"to": _as_list, "cc": _as_list, "labels": _lower_list, "is_read": lambda v: not v, "body": _text},
    ),
    "calendar": RecordMap(
        "calendar",
        "events",
        "event_id",
        {
            "title": "title",
            "start_time": "start",
            "end_time": "end",
            "attendees": "attendees",
            "location": "location",
            "organizer": "organizer",
            "status": "status",
            "description": "description",
        },
        {"attendees": _as_list},
        {"status": frozenset({"confirmed", "cancelled"})},
    ),
    "contacts": RecordMap(
        "contacts",
        "contacts",
        "contact_id",
        {
            "name": "name",
            "email": "email",
            "phone": "phone",
            "title": "title",
            "department": "department",
            "company": "company",
        },
    ),
    "helpdesk": RecordMap(
        "tickets",
        "tickets",
        "ticket_id",
        {
            "title": "title",
            "description": "description",
            "status": "status",
            "priority": "priority",
            "reporter": "reporter",
            "department": "team",
            "created_at": "created",
            "tags": "tags",
            "assignee": "assignee",
        },
        {"tags": _as_list},
        {
            "status": frozenset({"open", "in_progress", "resolved", "closed"}),
            "priority": frozenset({"low", "medium", "high", "urgent"}),
        },
        {"team": "general"},
    ),
    "crm": RecordMap(
        "crm",
        "accounts",
        "customer_id",
        {"name": "name", "industry": "industry", "tier": "tier", "contact_person": "owner", "annual_revenue": "arr"},
        {"tier": lambda v: str(v).lower(), "annual_revenue": float},
    ),
}

# Claw-Eval tool -> (coworkenv tool, condition on its args or None)
TOOLS: dict[str, tuple[str, str | None]] = {
    "gmail_list_messages": ("mail_search", None),
    "gmail_get_message": ("mail_read", None),
    "gmail_send_message": ("mail_send", None),
    "calendar_list_events": ("calendar_list_events", None),
    "calendar_get_user_events": ("calendar_list_events", None),
    "calendar_get_event": ("calendar_get_event", None),
    "calendar_create_event": ("calendar_create_event", None),
    "calendar_delete_event": ("calendar_cancel_event", None),
    "contacts_search": ("contacts_search", None),
    "contacts_get": ("contacts_get", None),
    "contacts_send_message": ("chat_send_dm", None),
    "helpdesk_list_tickets": ("tickets_search", None),
    "helpdesk_get_ticket": ("tickets_get", None),
    "helpdesk_update_ticket": ("tickets_update", None),
    "helpdesk_close_ticket": ("tickets_update", "args.status == 'closed'"),
    "crm_list_customers": ("crm_search_accounts", None),
    "crm_get_customer": ("crm_get_account", None),
}

# Claw-Eval service -> (the collection its fixtures fill, the field naming a record) in a declared service
COLLECTIONS: dict[str, tuple[str, str]] = {
    "gmail": ("messages", "message_id"),
    "calendar": ("events", "event_id"),
    "contacts": ("contacts", "contact_id"),
    "helpdesk": ("tickets", "ticket_id"),
    "crm": ("customers", "customer_id"),
    "finance": ("transactions", "transaction_id"),
    "inventory": ("products", "product_id"),
    "kb": ("articles", "article_id"),
    "rss": ("articles", "article_id"),
    "notes": ("notes", "note_id"),
    "todo": ("tasks", "task_id"),
    "config": ("integrations", "integration_id"),
    "scheduler": ("jobs", "job_id"),
}

# Claw-Eval tool -> (operation, collection, roles of its arguments, fields it always sets) in a declared
# service. A role is a role name ("text_any": free text matched as Claw-Eval's kb search matches it, any word
# or pair of characters) or (role, record field[, wildcard value]); arguments left out get the
# operation's default role (see claw_declared). Tools not listed are inferred from their verb.
Role = str | tuple[str, ...]
OPS: dict[str, tuple[str, str, dict[str, Role], dict[str, object]]] = {
    "gmail_list_messages": ("list", "messages", {"max_results": "limit", "days_back": "ignored"}, {}),
    "gmail_get_message": ("get", "messages", {"message_id": "key"}, {}),
    "gmail_send_message": ("create", "sent", {}, {}),
    "gmail_save_draft": ("create", "drafts", {}, {}),
    "calendar_list_events": ("list", "events", {"date": ("prefix", "start_time"), "days": "ignored"}, {}),
    "calendar_get_user_events": (
        "list",
        "events",
        {"user": ("contains", "attendees"), "date": ("prefix", "start_time")},
        {},
    ),
    "calendar_get_event": ("get", "events", {"event_id": "key"}, {}),
    "calendar_create_event": ("create", "events", {}, {}),
    "calendar_delete_event": ("delete", "events", {"event_id": "key"}, {}),
    "contacts_search": ("search", "contacts", {"query": "text", "max_results": "limit"}, {}),
    "contacts_get": ("get", "contacts", {"contact_id": "key"}, {}),
    "contacts_send_message": ("create", "messages", {}, {}),
    "helpdesk_list_tickets": ("list", "tickets", {"status": ("equals", "status", "all")}, {}),
    "helpdesk_get_ticket": ("get", "tickets", {"ticket_id": "key"}, {}),
    "helpdesk_update_ticket": ("update", "tickets", {"ticket_id": "key"}, {}),
    "helpdesk_close_ticket": ("update", "tickets", {"ticket_id": "key"}, {"status": "closed"}),
    "crm_list_customers": ("list", "customers", {}, {}),
    "crm_get_customer": ("get", "customers", {"customer_id": "key"}, {}),
    "crm_export_report": ("create", "reports", {}, {}),
    "kb_search": ("search", "articles", {"query": "text_any", "max_results": "limit"}, {}),
    "rss_list_articles": ("list", "articles", {"max_results": "limit"}, {}),
    "rss_list_feeds": ("list", "articles", {}, {}),
    "rss_publish": ("create", "published", {}, {}),
    "notes_list": ("list", "notes", {"tag": ("equals", "tags"), "max_results": "limit"}, {}),
    "notes_share": ("create", "shares", {}, {}),
    "todo_create_task": ("create", "tasks", {}, {"status": "pending"}),
    "todo_list_tasks": ("list", "tasks", {"status": ("equals", "status", "all")}, {}),
    "scheduler_list_jobs": ("list", "jobs", {"status": ("equals", "last_status"), "tag": ("equals", "tags")}, {}),
    "scheduler_job_history": ("get", "jobs", {"job_id": "key", "limit": "ignored"}, {}),
    "finance_submit_report": ("create", "reports", {}, {}),
    "finance_report_submit": ("create", "reports", {}, {}),
    "inventory_create_order": ("create", "orders", {}, {}),
    "config_send_notification": ("create", "notifications", {}, {}),
}

# coworkenv service -> the Claw-Eval service name used when exporting
EXPORT_SERVICE = {m.service: name for name, m in RECORDS.items()}
