"""The background records of each built-in service: mail in threads and folders, weeks of calendar, accounts, queues.

One maker per service, each drawing from a :class:`~coworkenv.synth.background.Backdrop` (its
reserved pools, people, days and record adder), so every value here is one the task cannot select.
"""

from __future__ import annotations

from collections.abc import Callable

from coworkenv.services.crm import KINDS, STAGES
from coworkenv.services.tickets import PRIORITIES, STATUSES
from coworkenv.synth.backdrop import Backdrop
from coworkenv.synth.world import DEPARTMENTS, TEAMS, TITLES

TEAM_POOL = (*TEAMS, "facilities", "analytics", "growth", "security", "design", "devtools", "billing-ops")
INDUSTRIES = ("Manufacturing", "Insurance", "Hospitality", "Telecom", "Agriculture", "Construction", "Pharma")
TIERS = ("standard", "growth", "strategic", "enterprise", "starter")
FOLDER_DRAW = ("inbox", "inbox", "inbox", "inbox", "archive", "archive", "sent", "spam")
LABELS = ("newsletter", "fyi", "team", "later", "receipts")
ROLES = ("Buyer", "Champion", "Finance contact", "Technical lead", "Executive sponsor")
DOC_FOLDERS = ("Projects", "Team", "Meetings", "Archive", "Research", "Planning", "Vendors", "Programs")
CHANNEL_KINDS = ("team", "project", "updates", "chat", "standup", "general", "random", "social", "alerts", "reviews")
CATEGORIES = ("meals", "travel", "software", "office", "training", "supplies", "hardware")
EXPENSE_STATUSES = ("draft", "submitted", "pending_approval", "approved", "rejected", "reimbursed")
SLOTS = ("09:00", "09:30", "10:00", "10:30", "11:00", "13:00", "13:30", "14:00", "15:00", "16:00")


def mail(b: Backdrop) -> None:
    """Weeks of mail across folders, about a third of it replies in threads."""
    sent: list[dict[str, object]] = []
    unread = b.reserved.flag("unread")  # the states of 'unread' no reference call filters on
    for _ in range(b.count(90, 160)):
        folder, day = b.pick(FOLDER_DRAW), b.day(-45, -1)
        if folder is None or day is None or not unread:
            continue
        who = b.person(outside=b.rng.random() < 0.3)
        me = b.world.me.email
        parent = b.rng.choice(sent) if sent and b.rng.random() < 0.35 else None
        subject = f"Re: {parent['subject']}" if parent else b.phrase(3, 6)
        sender, to = (me, [who["email"]]) if folder == "sent" else (who["email"], [me])
        rec = b.add(
            "mail",
            "messages",
            {
                "sender": sender,
                "to": to,
                "subject": subject,
                "body": f"{b.prose(b.rng.randint(1, 3))} {who['name'].split()[0]}",
                "date": day,
                "folder": folder,
                "unread": unread[0] if len(unread) == 1 else folder == "inbox" and b.rng.random() < 0.4,
                "labels": [label] if (label := b.pick(LABELS)) and b.rng.random() < 0.3 else [],
                "in_reply_to": str(parent["id"]) if parent else None,
            },
        )
        if not parent:
            sent.append(rec)


def calendar(b: Backdrop) -> None:
    """Several weeks of meetings among colleagues, on days the task never names."""
    for offset in range(-12, 18):
        day = b.day(offset, offset)
        for _ in range(b.count(1, 4) if day else 0):
            start = b.rng.choice(SLOTS)
            hour, minute = (int(p) for p in start.split(":"))
            end_minutes = hour * 60 + minute + b.rng.choice((30, 60))
            people = [b.person()["email"] for _ in range(b.rng.randint(1, 3))]
            b.add(
                "calendar",
                "events",
                {
                    "title": b.phrase(2, 4),
                    "start": f"{day}T{start}",
                    "end": f"{day}T{end_minutes // 60:02d}:{end_minutes % 60:02d}",
                    "attendees": sorted(set(people)),
                    "organizer": people[0],
                    "location": f"{b.phrase(1, 1)} room",
                },
            )


def contacts(b: Backdrop) -> None:
    """The directory's other colleagues."""
    company = "" if b.own_searched else b.world.company
    listed: set[str] = set()
    for _ in range(b.count(35, 60)):
        who, boss = b.person(), b.person()
        dept = b.pick(DEPARTMENTS)
        title = b.pick(TITLES[dept]) if dept else None
        if dept is None or title is None or who["email"] in listed:
            continue
        listed.add(who["email"])
        record = {"name": who["name"], "email": who["email"], "title": title, "department": dept}
        b.add("contacts", "contacts", {**record, "company": company, "manager_email": boss["email"]})


def crm(b: Backdrop) -> None:
    """Accounts of other customers, with their deals, contacts and logged activities."""
    for _ in range(b.count(8, 16)):
        tier, industry, renewal = b.pick(TIERS), b.pick(INDUSTRIES), b.day(20, 240)
        if tier is None or industry is None or renewal is None:
            continue
        owner = b.person()["email"]
        account = b.add(
            "crm",
            "accounts",
            {
                "name": b.company(),
                "industry": industry,
                "tier": tier,
                "owner": owner,
                "renewal_date": renewal,
                "arr": b.money(5_000, 400_000),
            },
        )
        _account_records(b, str(account["id"]), str(account["name"]), owner)


def _account_records(b: Backdrop, account_id: str, name: str, owner: str) -> None:
    for _ in range(b.rng.randint(0, 2)):
        stage, close = b.pick(STAGES), b.day(10, 120)
        if stage and close:
            deal = {"account_id": account_id, "name": f"{name} {b.phrase(1, 2)}", "stage": stage, "owner": owner}
            b.add("crm", "deals", {**deal, "amount": b.money(2_000, 150_000), "close_date": close})
    for _ in range(b.rng.randint(1, 2)):
        who, role = b.person(outside=True), b.pick(ROLES)
        contact = {"account_id": account_id, "name": who["name"], "email": who["email"], "role": role or ""}
        b.add("crm", "contacts", contact)
    for _ in range(b.rng.randint(0, 3)):
        kind, day = b.pick(KINDS), b.day(-60, -1)
        if kind and day:
            b.add("crm", "activities", {"account_id": account_id, "kind": kind, "summary": b.phrase(3, 6), "date": day})


def tickets(b: Backdrop) -> None:
    """Queues of other teams' and other customers' tickets, in every state."""
    for _ in range(b.count(25, 50)):
        team, status, priority, created = b.pick(TEAM_POOL), b.pick(STATUSES), b.pick(PRIORITIES), b.day(-40, -1)
        if team is None or status is None or priority is None or created is None:
            continue
        tag = b.rng.choice(b.words).lower()
        b.add(
            "tickets",
            "tickets",
            {
                "title": b.phrase(3, 6),
                "description": b.prose(1),
                "team": team,
                "status": status,
                "priority": priority,
                "assignee": b.person()["email"],
                "reporter": b.person()["email"],
                "created": created,
                "tags": [tag] if b.rng.random() < 0.4 else [],
            },
        )


def documents(b: Backdrop) -> None:
    """Other people's documents in folders of their own."""
    for _ in range(b.count(30, 60)):
        folder, updated = b.pick(DOC_FOLDERS), b.day(-90, -1)
        if folder is None or updated is None:
            continue
        title = b.phrase(2, 5)
        b.add(
            "documents",
            "documents",
            {
                "path": f"/{folder}/{title}",
                "title": title,
                "content": b.prose(b.rng.randint(2, 5)),
                "owner": b.person()["email"],
                "updated": updated,
            },
        )


def chat(b: Backdrop) -> None:
    """A few channels of the task's strangers, with weeks of their messages."""
    names: list[str] = []
    for _ in range(b.count(3, 6)):
        kind = b.pick(CHANNEL_KINDS)
        name = f"{b.company_word()}-{kind}"
        members = sorted({b.person()["email"] for _ in range(b.rng.randint(3, 8))})
        if kind and name not in names:
            b.add("chat", "channels", {"name": name, "members": members})
            names.append(name)
    for _ in range(b.count(30, 70) if names else 0):
        day = b.day(-30, 0)
        if day:
            stamp = f"{day}T{b.rng.choice(SLOTS)}"
            text = b.prose(1)
            b.add(
                "chat",
                "messages",
                {"channel": b.rng.choice(names), "author": b.person()["email"], "text": text, "ts": stamp},
            )


def expenses(b: Backdrop) -> None:
    """Colleagues' expense claims in every state."""
    for _ in range(b.count(40, 80)):
        category, status, day = b.pick(CATEGORIES), b.pick(EXPENSE_STATUSES), b.day(-60, -1)
        if category is None or status is None or day is None:
            continue
        approver = b.person()["email"] if status not in ("draft", "submitted") else None
        b.add(
            "expenses",
            "expenses",
            {
                "employee": b.person()["email"],
                "amount": b.money(12, 900),
                "category": category,
                "description": b.phrase(2, 4),
                "date": day,
                "status": status,
                "approver": approver,
                "receipt": b.rng.random() < 0.7,
            },
        )


MAKERS: dict[str, Callable[[Backdrop], None]] = {
    "mail": mail,
    "calendar": calendar,
    "contacts": contacts,
    "crm": crm,
    "tickets": tickets,
    "documents": documents,
    "chat": chat,
    "expenses": expenses,
}
