"""CRM: customer accounts, their deals in a sales pipeline, and logged activities."""

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
    check_choice,
    check_date,
    joined,
    page,
    query_words,
    tool,
)
from coworkenv.services.damage import Damage

Stage = Literal["prospect", "qualified", "proposal", "negotiation", "won", "lost"]
Kind = Literal["call", "email", "meeting", "note"]
STAGES = ("prospect", "qualified", "proposal", "negotiation", "won", "lost")
KINDS = ("call", "email", "meeting", "note")


class Account(RecordModel):
    name: str
    industry: str = ""
    tier: str = ""
    owner: str = ""
    renewal_date: str = ""
    arr: float = 0.0


class Deal(RecordModel):
    account_id: str
    name: str
    stage: Stage = "prospect"
    amount: float = 0.0
    close_date: str = ""
    owner: str = ""


class AccountContact(RecordModel):
    """A person at a customer account (unlike the company directory, the people the account team talks to)."""

    account_id: str
    name: str
    email: str = ""
    role: str = ""
    phone: str = ""
    primary: bool = False


class Activity(RecordModel):
    account_id: str
    kind: Kind
    summary: str
    date: str


def _search_text(a: Record) -> str:
    return joined(a["name"], a["industry"])


def _role_text(c: Record) -> str:
    role: str = c["role"]
    return role


def _contact_order(c: Record) -> tuple[str, bool, str, str]:
    return (c["account_id"], not c["primary"], c["name"], c["id"])


class Crm(Service):
    name = "crm"
    description = "the customer relationship manager: accounts, deals and activities"
    records = {"accounts": Account, "deals": Deal, "activities": Activity, "contacts": AccountContact}
    id_prefix = {"accounts": "acc", "deals": "deal", "activities": "act", "contacts": "ctc"}
    damage: ClassVar[dict[str, Damage]] = {"deals": Damage.setting("crm_update_deal", "deal_id", "stage", "lost")}

    @tool("read")
    def search_accounts(
        self,
        query: str = "",
        tier: str | None = None,
        owner: str | None = None,
        industry: str | None = None,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> Result:
        """Search accounts by words in name or industry; filter by tier, owner (email), industry."""
        own = owner.lower() if owner else None
        words = query_words(query)
        hits = [
            a
            for a in self.text_search("accounts", words, _search_text)
            if (tier is None or a["tier"].lower() == tier.lower())
            and (own is None or a["owner"].lower() == own)
            and (industry is None or a["industry"].lower() == industry.lower())
        ]
        hits.sort(key=lambda a: (a["name"], a["id"]))
        return page(hits, limit, offset, key="accounts")

    @tool("read")
    def get_account(self, account_id: str) -> Result:
        """Get one account with its deals, its contact people and its five most recent activities."""
        acc = self.get("accounts", account_id)
        deals = sorted(
            self.lookup("deals", "account_id", account_id),
            key=lambda d: (d["close_date"], d["id"]),
        )
        acts = sorted(
            self.lookup("activities", "account_id", account_id),
            key=lambda a: (a["date"], a["id"]),
            reverse=True,
        )
        people = sorted(self.lookup("contacts", "account_id", account_id), key=_contact_order)
        return {**acc, "deals": deals, "contacts": people, "recent_activities": acts[:5]}

    @tool("read")
    def find_contacts(
        self,
        account_id: str | None = None,
        email: str | None = None,
        role: Annotated[str | None, Field(description="words of the role, e.g. 'procurement'")] = None,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> Result:
        """Find the contact people of customer accounts: of one account, by email, or by words of their role."""
        words = query_words(role or "")
        if account_id is not None:
            self.get("accounts", account_id)
            rows = self.matching(self.lookup("contacts", "account_id", account_id), words, _role_text)
        elif email is not None:
            by_email = self.lookup("contacts", "email", email.strip().lower(), lower=True)
            rows = self.matching(by_email, words, _role_text)
        else:
            rows = list(self.text_search("contacts", words, _role_text))
        hits = [c for c in rows if email is None or c["email"].lower() == email.strip().lower()]
        hits.sort(key=_contact_order)
        return page(hits, limit, offset, key="contacts")

    @tool("read")
    def list_deals(
        self,
        account_id: str | None = None,
        stage: Stage | None = None,
        owner: str | None = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> Result:
        """List deals, optionally of one account, in one stage or owned by someone. Soonest close date first."""
        if account_id is not None:
            self.get("accounts", account_id)
        if stage is not None:
            check_choice(stage, STAGES, "stage")
        own = owner.lower() if owner else None
        hits = [
            d
            for d in self.db["deals"].values()
            if (account_id is None or d["account_id"] == account_id)
            and (stage is None or d["stage"] == stage)
            and (own is None or d["owner"].lower() == own)
        ]
        hits.sort(key=lambda d: (d["close_date"], d["id"]))
        return page(hits, limit, offset, key="deals")

    @tool("write")
    def update_deal(
        self,
        deal_id: str,
        stage: Stage | None = None,
        amount: Annotated[float | None, Field(ge=0)] = None,
        close_date: Annotated[str | None, Field(description="YYYY-MM-DD")] = None,
    ) -> Result:
        """Move a deal to another stage and/or change its amount or close date."""
        self.get("deals", deal_id)
        changes: dict[str, object] = {}
        if stage is not None:
            changes["stage"] = check_choice(stage, STAGES, "stage")
        if amount is not None:
            if amount < 0:
                raise ToolError("amount must not be negative")
            changes["amount"] = float(amount)
        if close_date is not None:
            changes["close_date"] = check_date(close_date, "close_date")
        if not changes:
            raise ToolError("nothing to update: give stage, amount and/or close_date")
        rec = self.update("deals", deal_id, changes)
        return {"updated": True, "deal": rec}

    @tool("write")
    def log_activity(
        self,
        account_id: str,
        kind: Kind,
        summary: str,
        date: Annotated[str, Field(description="YYYY-MM-DD")],
    ) -> Result:
        """Log a call, email, meeting or note on an account."""
        self.get("accounts", account_id)
        check_choice(kind, KINDS, "kind")
        if not summary.strip():
            raise ToolError("summary must not be empty")
        rec = self.insert(
            "activities", {"account_id": account_id, "kind": kind, "summary": summary, "date": check_date(date)}
        )
        return {"logged": True, "id": rec["id"]}
