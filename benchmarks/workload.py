"""The benchmark workspace: a spec over every service with N records per main collection.

Text comes from small seeded pools (Faker), so every run builds the same workspace and a
10,000-record one builds in seconds. Checks cover every state kind, so grading and check
tracking do their real work.
"""

from __future__ import annotations

import random
from typing import Any

from faker import Faker

from coworkenv.spec import TaskSpec
from coworkenv.spec.models import MAX_TOOL_CALLS, MAX_TURNS

TEAMS = ["payments", "search", "billing", "it", "checkout"]


class Text:
    """Seeded picks from pools of fake people, sentences, paragraphs, names and companies."""

    def __init__(self, seed: int) -> None:
        fake = Faker("en_US")
        fake.seed_instance(seed)
        self.rng = random.Random(seed)
        self.people = [f"{fake.unique.user_name()}@corp.io" for _ in range(40)]
        self.sentences = [fake.sentence(8) for _ in range(300)]
        self.paragraphs = [fake.paragraph(4) for _ in range(300)]
        self.names = [fake.name() for _ in range(300)]
        self.companies = [fake.company() for _ in range(300)]

    def pick(self, pool: list[str]) -> str:
        return self.rng.choice(pool)

    def day(self) -> str:
        return f"2025-03-{self.rng.randint(1, 28):02d}"

    def when(self, hour: int) -> str:
        return f"{self.day()}T{hour:02d}:{self.rng.choice(['00', '30'])}"


# fmt: off
def fixtures(n: int, t: Text) -> dict[str, Any]:
    """``n`` records in every main collection; lookup tables (channels, rules, on-call) stay small."""
    r, p = t.rng, t.people
    return {
        "mail": {"messages": [
            {"id": f"msg-{i}", "sender": t.pick(p), "to": [t.pick(p)], "subject": t.pick(t.sentences),
             "body": t.pick(t.paragraphs), "date": t.when(r.randint(7, 19)), "unread": r.random() < 0.3,
             "folder": r.choice(["inbox"] * 4 + ["archive", "sent"])} for i in range(n)]},
        "calendar": {"events": [
            {"id": f"evt-{i}", "title": t.pick(t.sentences), "start": (s := t.when(r.randint(8, 16))),
             "end": s[:11] + f"{int(s[11:13]) + 1:02d}" + s[13:], "organizer": t.pick(p),
             "attendees": r.sample(p, 3)} for i in range(n)]},
        "contacts": {"contacts": [
            {"id": f"con-{i}", "name": t.pick(t.names), "email": p[i] if i < len(p) else f"p{i}@ext.com",
             "title": t.pick(t.sentences)[:30], "company": t.pick(t.companies), "department": r.choice(TEAMS)}
            for i in range(n)]},
        "documents": {"documents": [
            {"id": f"doc-{i}", "path": f"/{r.choice(['Finance', 'Sales', 'Eng', 'People'])}/file {i}",
             "content": t.pick(t.paragraphs), "owner": t.pick(p)} for i in range(n)]},
        "tickets": {
            "tickets": [{"id": f"tkt-{i}", "title": t.pick(t.sentences), "description": t.pick(t.paragraphs),
                         "team": r.choice(TEAMS), "status": r.choice(["open", "in_progress", "resolved"]),
                         "priority": r.choice(["low", "medium", "high"]), "created": t.when(10)} for i in range(n)],
            "oncall": [{"id": f"shift-{i}", "team": TEAMS[i % 5], "engineer": t.pick(p),
                        "start": f"2025-03-{1 + 7 * (i // 5):02d}T09:00",
                        "end": f"2025-03-{8 + 7 * (i // 5):02d}T09:00"}
                       for i in range(10)]},
        "crm": {
            "accounts": [{"id": f"acc-{i}", "name": t.pick(t.companies), "industry": r.choice(TEAMS),
                          "tier": r.choice(["smb", "mid-market", "enterprise"]), "owner": t.pick(p),
                          "arr": float(r.randint(10, 500) * 1000)} for i in range(n)],
            "deals": [{"id": f"deal-{i}", "account_id": f"acc-{r.randrange(n)}", "name": t.pick(t.sentences),
                       "stage": r.choice(["prospect", "proposal", "negotiation", "won"]),
                       "amount": float(r.randint(5, 300) * 1000), "close_date": t.day()} for i in range(n)],
            "activities": [{"id": f"act-{i}", "account_id": f"acc-{r.randrange(n)}", "kind": "note",
                            "summary": t.pick(t.sentences), "date": t.day()} for i in range(n)]},
        "chat": {
            "channels": [{"id": f"ch-{i}", "name": name} for i, name in enumerate(["general", "incidents", *TEAMS])],
            "messages": [{"id": f"cm-{i}", "channel": r.choice(["general", "incidents", *TEAMS]),
                          "author": t.pick(p).split("@")[0], "text": t.pick(t.sentences),
                          "ts": t.when(r.randint(8, 18))}
                         for i in range(n)]},
        "expenses": {
            "rules": [{"id": f"rule-{c}", "category": c, "limit": 500.0} for c in ("meals", "travel", "software")],
            "expenses": [{"id": f"exp-{i}", "employee": t.pick(p), "amount": round(r.uniform(5, 900), 2),
                          "category": r.choice(["meals", "travel", "software"]), "description": t.pick(t.sentences),
                          "date": t.day(), "status": r.choice(["draft", "submitted", "approved"])} for i in range(n)]},
        "payments": payments(n, t),
        "hr": hr(n, t),
        "drive": drive(n, t),
    }


def payments(n: int, t: Text) -> dict[str, Any]:
    """Vendors, one purchase order per vendor and one invoice per order (within its amount), small approver table."""
    r = t.rng
    amounts = [float(r.randint(1, 90) * 100) for _ in range(n)]
    return {
        "vendors": [{"id": f"ven-{i}", "name": t.pick(t.companies), "category": r.choice(TEAMS)} for i in range(n)],
        "purchase_orders": [{"id": f"po-{i}", "vendor_id": f"ven-{i}", "description": t.pick(t.sentences),
                             "amount": amounts[i], "requester": t.pick(t.people), "created": t.day()}
                            for i in range(n)],
        "invoices": [{"id": f"inv-{i}", "vendor_id": f"ven-{i}", "number": f"N-{i}", "amount": amounts[i],
                      "po_id": f"po-{i}", "due_date": t.day(), "status": "received" if i % 3 else "approved"}
                     for i in range(n)],
        "approvers": [{"id": "apr-0", "email": "boss@corp.io", "limit": 1e9},
                      *({"id": f"apr-{i}", "email": p, "limit": 500.0} for i, p in enumerate(t.people[:9], 1))],
    }


def hr(n: int, t: Text) -> dict[str, Any]:
    """Employees managed by boss@corp.io, a balance each, leave in April, weekly shifts over five rotas."""
    r = t.rng
    emails = [f"e{i}@corp.io" for i in range(n)]
    return {
        "employees": [{"id": f"emp-{i}", "email": e, "name": t.pick(t.names), "manager": "boss@corp.io"}
                      for i, e in enumerate(emails)],
        "balances": [{"id": f"bal-{i}", "employee": e, "kind": "vacation", "days": 20.0} for i, e in enumerate(emails)],
        "leave": [{"id": f"lv-{i}", "employee": r.choice(emails), "kind": "vacation",
                   "start": (d := f"2025-04-{r.randint(1, 28):02d}"), "end": d, "days": 1.0,
                   "status": r.choice(["pending", "approved"])} for i in range(n)],
        "rota": [{"id": f"rot-{i}", "rota": TEAMS[i % 5], "person": emails[i],
                  "start": f"2025-{1 + (i // 5) % 12:02d}-{1 + (i // 60) % 28:02d}T09:00",
                  "end": f"2025-{1 + (i // 5) % 12:02d}-{1 + (i // 60) % 28:02d}T21:00"} for i in range(n)],
    }


def drive(n: int, t: Text) -> dict[str, Any]:
    """Folders under earlier folders, files in them, and grants on either."""
    r = t.rng
    return {
        "folders": [{"id": f"fld-{i}", "name": f"folder {i}", "parent_id": f"fld-{r.randrange(i)}" if i else None}
                    for i in range(n)],
        "files": [{"id": f"file-{i}", "name": t.pick(t.sentences), "folder_id": f"fld-{r.randrange(n)}",
                   "content": t.pick(t.paragraphs)} for i in range(n)],
        "permissions": [{"id": f"perm-{i}", "item_id": r.choice([f"fld-{r.randrange(n)}", f"file-{r.randrange(n)}"]),
                         "person": t.pick(t.people), "role": r.choice(["viewer", "commenter", "editor"])}
                        for i in range(n)],
    }


CHECKS = [
    {"id": "sent", "kind": "record_exists", "service": "mail", "collection": "messages",
     "where": "r.folder == 'sent' and contains(r.subject, 'Quarterly')"},
    {"id": "urgent", "kind": "count", "service": "tickets", "collection": "tickets",
     "where": "r.priority == 'urgent'", "op": ">=", "value": 1},
    {"id": "no_spam", "kind": "record_absent", "service": "mail", "collection": "messages",
     "where": "r.folder == 'spam'"},
    {"id": "resolved", "kind": "field_equals", "service": "tickets", "collection": "tickets",
     "record_id": "tkt-1", "field": "status", "value": "resolved"},
    *({"id": f"keep_{s}_{c}", "kind": "unchanged", "service": s, "collection": c, "allow": "r.id == 'x'"}
      for s, c in (("mail", "messages"), ("calendar", "events"), ("contacts", "contacts"),
                   ("documents", "documents"), ("expenses", "expenses"), ("crm", "activities"),
                   ("payments", "invoices"), ("hr", "leave"), ("drive", "permissions"))),
    {"id": "searched", "kind": "tool_called", "tool": "mail_search", "where": "contains(args.query, 'q')"},
    {"id": "total", "kind": "answer_number", "value": 1234.5},
]

READS: list[tuple[str, dict[str, Any]]] = [
    ("mail_read", {"message_id": "msg-7"}),
    ("contacts_get", {"contact_id": "con-3"}),
    ("documents_read", {"document_id": "doc-5"}),
    ("tickets_get", {"ticket_id": "tkt-2"}),
    ("crm_get_account", {"account_id": "acc-3"}),
    ("calendar_get_event", {"event_id": "evt-4"}),
    ("expenses_get_expense", {"expense_id": "exp-6"}),
    ("payments_get_invoice", {"invoice_id": "inv-4"}),
    ("hr_get_balance", {"employee": "e3@corp.io"}),
    ("drive_list_access", {"item_id": "file-5"}),
]
SEARCHES: list[tuple[str, dict[str, Any]]] = [
    ("mail_search", {"query": "quarterly report"}),
    ("contacts_search", {"query": "manager"}),
    ("documents_search", {"query": "growth", "folder": "/Finance"}),
    ("tickets_search", {"query": "payment"}),
    ("chat_search_messages", {"query": "team"}),
    ("payments_search_vendors", {"query": "group"}),
    ("drive_search_files", {"query": "growth"}),
]
WRITES: list[tuple[str, dict[str, Any]]] = [
    ("mail_send", {"to": ["a@corp.io"], "subject": "Quarterly numbers", "body": "Attached."}),
    ("mail_move", {"message_id": "msg-3", "folder": "archive"}),
    ("calendar_create_event", {"title": "Sync", "start": "2025-03-12T10:00", "end": "2025-03-12T10:30"}),
    ("contacts_update", {"contact_id": "con-4", "title": "Director"}),
    ("documents_append", {"document_id": "doc-5", "text": "New line."}),
    ("tickets_comment", {"ticket_id": "tkt-2", "text": "Looking into it."}),
    ("crm_log_activity", {"account_id": "acc-1", "kind": "call", "summary": "Renewal call.", "date": "2025-03-11"}),
    ("chat_post_message", {"channel": "general", "text": "Deploy done."}),
    ("expenses_create_expense", {"employee": "a@corp.io", "amount": 42.0, "category": "meals",
                                 "description": "Lunch", "date": "2025-03-11"}),
    ("payments_approve_invoice", {"invoice_id": "inv-1", "approver": "boss@corp.io"}),
    ("hr_submit_leave", {"employee": "e1@corp.io", "kind": "vacation", "start": "2026-01-05", "end": "2026-01-06"}),
    ("drive_share", {"item_id": "file-2", "person": "new@corp.io", "role": "viewer"}),
]
# fmt: on


def workload_spec(n: int, seed: int = 0) -> TaskSpec:
    """A spec over every service with ``n`` records per main collection."""
    data = {
        "id": f"workload-{n}",
        "title": "benchmark workload",
        "services": fixtures(n, Text(seed)),
        "user": {"opening": "Please help."},
        "checks": CHECKS,
        "reference": [{"answer": "ok"}],
        "max_turns": MAX_TURNS,
        "max_tool_calls": MAX_TOOL_CALLS,
    }
    # validated as a TaskSpec directly: at 10,000 records per collection the workspace is past the size limit
    # spec_from_data puts on untrusted documents (MAX_NODES), which a benchmark built here does not need
    return TaskSpec.model_validate(data)
