"""The background records of the business services: a drive of other teams' files, an HR directory with its
leave and rotas, and the vendors, orders, invoices and payments of accounts payable.

Like :mod:`coworkenv.synth.background_records`, every value comes through a
:class:`~coworkenv.synth.backdrop.Backdrop`, so none is one the task can select; records link only to
background records (a background invoice's vendor, a background file's folder), never to the task's.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

from coworkenv.synth.backdrop import Backdrop
from coworkenv.synth.background_records import TEAM_POOL

EXTENSIONS = ("docx", "xlsx", "pdf", "md", "pptx")
ROLES = ("viewer", "commenter", "editor")
LEAVE_KINDS = ("vacation", "sick", "personal")
LEAVE_STATUSES = ("pending", "approved", "denied", "cancelled")
ROTA_KINDS = ("oncall", "support", "night", "weekend")
VENDOR_CATEGORIES = ("software", "hardware", "logistics", "consulting", "catering", "cleaning", "marketing")
INVOICE_STATUSES = ("received", "approved", "rejected", "paid")
PO_STATUSES = ("open", "closed", "cancelled")
CURRENCIES = ("USD", "EUR", "GBP")
SHIFT_HOURS = (6, 7, 8, 9, 10, 12)


def drive(b: Backdrop) -> None:
    """Other teams' folders and files, a few shared. They sit inside the task's top-level folders when it has
    some (so a listing of the top level reads as the task planted it), else at the top."""
    tops = [str(f["id"]) for f in b.world.fixtures.get("drive", {}).get("folders", []) if f.get("parent_id") is None]
    folders: list[str] = []
    for _ in range(b.count(4, 8)):
        parent = b.rng.choice(tops) if tops else None
        folder = b.add("drive", "folders", {"name": b.phrase(1, 3), "parent_id": parent, "owner": b.person()["email"]})
        folders.append(str(folder["id"]))
    for _ in range(b.count(25, 50) if folders else 0):
        ext, updated = b.pick(EXTENSIONS), b.day(-90, -1)
        if ext is None or updated is None:
            continue
        record = {"name": f"{b.phrase(1, 3)}.{ext}", "folder_id": b.rng.choice(folders), "content": b.prose(2)}
        file = b.add("drive", "files", {**record, "owner": b.person()["email"], "updated": updated})
        if b.rng.random() < 0.3 and (role := b.pick(ROLES)):
            b.add("drive", "permissions", {"item_id": file["id"], "person": b.person()["email"], "role": role})


def hr(b: Backdrop) -> None:
    """Other colleagues' HR records: their balances, leave in every state, and the rotas of other teams."""
    listed: set[str] = set()
    for _ in range(b.count(12, 24)):
        team, manager, who = b.pick(TEAM_POOL), b.person(), b.person()
        if team is None or who["email"] in listed or who is manager:
            continue
        listed.add(who["email"])
        b.add(
            "hr", "employees", {"email": who["email"], "name": who["name"], "manager": manager["email"], "team": team}
        )
        for kind in LEAVE_KINDS:
            b.add("hr", "balances", {"employee": who["email"], "kind": kind, "days": float(b.rng.randrange(4, 25))})
        for _ in range(b.rng.randint(0, 2)):
            _leave(b, who["email"], manager["email"])
    _rotas(b)


def _leave(b: Backdrop, employee: str, approver: str) -> None:
    kind, status, start = b.pick(LEAVE_KINDS), b.pick(LEAVE_STATUSES), b.day(-30, 60)
    if kind is None or status is None or start is None:
        return
    days = b.rng.randint(1, 3)
    end = (date.fromisoformat(start) + timedelta(days=days - 1)).isoformat()
    if end in b.reserved.days:
        end, days = start, 1
    record = {"employee": employee, "kind": kind, "start": start, "end": end, "days": float(days), "status": status}
    b.add("hr", "leave", {**record, "approver": approver if status in ("approved", "denied") else None})


def _rotas(b: Backdrop) -> None:
    """A rota or two of other teams, a shift a working day each."""
    for _ in range(b.count(1, 2)):
        kind = b.pick(ROTA_KINDS)
        rota = f"{b.company_word()}-{kind}"
        people = [b.person()["email"] for _ in range(b.rng.randint(2, 4))]
        for offset in range(-3, 10) if kind else ():
            day = b.day(offset, offset)
            if day:
                hour = b.rng.choice(SHIFT_HOURS)
                span = {"start": f"{day}T{hour:02d}:00", "end": f"{day}T{hour + 8:02d}:00"}
                b.add("hr", "rota", {"rota": rota, "person": b.rng.choice(people), **span})


def payments(b: Backdrop) -> None:
    """Other vendors, with their purchase orders, invoices in every state and the payments of those paid."""
    blocked = b.reserved.flag("blocked")
    for _ in range(b.count(6, 12) if blocked else 0):
        category, currency = b.pick(VENDOR_CATEGORIES), b.pick(CURRENCIES)
        if category is None or currency is None:
            continue
        name = b.company()
        email = f"billing@{b.company_word()}-{b.company_word()}.net"
        stop = blocked[0] if len(blocked) == 1 else b.rng.random() < 0.1
        vendor = b.add("payments", "vendors", {"name": name, "email": email, "category": category, "blocked": stop})
        _orders(b, str(vendor["id"]), currency)


def _orders(b: Backdrop, vendor_id: str, currency: str) -> None:
    for _ in range(b.rng.randint(0, 2)):
        status, created = b.pick(PO_STATUSES), b.day(-90, -5)
        if status and created:
            order = {"vendor_id": vendor_id, "description": b.phrase(2, 4), "amount": b.money(500, 40_000)}
            b.add("payments", "purchase_orders", {**order, "currency": currency, "status": status, "created": created})
    for _ in range(b.rng.randint(1, 4)):
        status, due, number = b.pick(INVOICE_STATUSES), b.day(-20, 45), _invoice_number(b)
        if status is None or due is None or number is None:
            continue
        amount = b.money(80, 25_000)
        record = {"vendor_id": vendor_id, "number": number, "amount": amount, "currency": currency, "due_date": due}
        record["approver"] = b.person()["email"] if status in ("approved", "paid") else None
        record["rejection_reason"] = b.phrase(3, 5) if status == "rejected" else None
        invoice = b.add("payments", "invoices", {**record, "status": status})
        if status == "paid" and (day := b.day(-20, -1)):
            paid = {"invoice_id": invoice["id"], "vendor_id": vendor_id, "amount": amount, "currency": currency}
            invoice["payment_id"] = b.add("payments", "payments", {**paid, "date": day})["id"]


def _invoice_number(b: Backdrop) -> str | None:
    """A vendor's own invoice number, none the task names."""
    for _ in range(4):
        number = f"{b.company_word()[:3].upper()}-{b.rng.randint(10_000, 99_999)}"
        if b.reserved.allows(number):
            return number
    return None


MAKERS: dict[str, Callable[[Backdrop], None]] = {"drive": drive, "hr": hr, "payments": payments}
