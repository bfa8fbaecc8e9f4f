"""Tickets: an issue tracker with teams, priorities, assignment, comments and on-call shifts."""

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
    check_datetime,
    check_email,
    joined,
    page,
    query_words,
    tool,
)
from coworkenv.services.damage import Damage

Status = Literal["open", "in_progress", "resolved", "closed"]
Priority = Literal["low", "medium", "high", "urgent"]
STATUSES = ("open", "in_progress", "resolved", "closed")
PRIORITIES = ("low", "medium", "high", "urgent")


class Ticket(RecordModel):
    title: str
    description: str = ""
    status: Status = "open"
    priority: Priority = "medium"
    assignee: str | None = None
    team: str
    reporter: str = "me"
    created: str = ""
    tags: list[str] = []
    comments: list[str] = []
    due: str = ""
    """YYYY-MM-DD, or "" for no due date."""
    customer: str = ""
    """The customer account the ticket is for (a name, or a CRM account id), "" for internal work."""


class OncallShift(RecordModel):
    team: str
    engineer: str
    start: str
    end: str


def _summary(t: Record) -> Result:
    keys = ("id", "title", "status", "priority", "assignee", "team", "created", "tags", "due", "customer")
    out = {k: t[k] for k in keys}
    out["comments"] = len(t["comments"])
    return out


def _search_text(t: Record) -> str:
    return joined(t["title"], t["description"], *t["comments"])


class Tickets(Service):
    name = "tickets"
    description = "the issue tracker and on-call schedule"
    records = {"tickets": Ticket, "oncall": OncallShift}
    id_prefix = {"tickets": "tkt", "oncall": "shift"}
    damage: ClassVar[dict[str, Damage]] = {"tickets": Damage.setting("tickets_update", "ticket_id", "status", "closed")}

    @tool("read")
    def search(
        self,
        query: str = "",
        status: Status | None = None,
        priority: Priority | None = None,
        assignee: str | None = None,
        team: str | None = None,
        tag: str | None = None,
        customer: str | None = None,
        due_before: Annotated[str | None, Field(description="only tickets due on or before, YYYY-MM-DD")] = None,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> Result:
        """Search tickets by words in title, description or comments; filter by status, priority, assignee, team, tag,
        customer or due date. Newest first.
        """
        who = assignee.lower() if assignee else None
        words = query_words(query)
        cust = customer.lower() if customer else None
        due = check_date(due_before, "due_before") if due_before else None
        hits = [
            t
            for t in self.text_search("tickets", words, _search_text)
            if (status is None or t["status"] == status)
            and (priority is None or t["priority"] == priority)
            and (who is None or (t["assignee"] or "").lower() == who)
            and (team is None or t["team"].lower() == team.lower())
            and (tag is None or tag in t["tags"])
            and (cust is None or t["customer"].lower() == cust)
            and (due is None or "" < t["due"] <= due)
        ]
        hits.sort(key=lambda t: (t["created"], t["id"]), reverse=True)
        return page(hits, limit, offset, key="tickets", shown=_summary)

    @tool("read", name="get")
    def get_ticket(self, ticket_id: str) -> Result:
        """Get one ticket in full, with its comments."""
        return self.get("tickets", ticket_id)

    @tool("write")
    def create(
        self,
        title: str,
        description: str,
        team: str,
        priority: Priority = "medium",
        assignee: str | None = None,
        tags: list[str] | None = None,
        due: Annotated[str | None, Field(description="due date, YYYY-MM-DD")] = None,
        customer: Annotated[str | None, Field(description="the customer it is for")] = None,
    ) -> Result:
        """Open a new ticket for a team, optionally assigned to someone (email), due on a date, for a customer."""
        if not title.strip():
            raise ToolError("title must not be empty")
        if not team.strip():
            raise ToolError("team must not be empty")
        check_choice(priority, PRIORITIES, "priority", "allowed")
        if assignee is not None:
            check_email(assignee, "assignee")
        rec = self.insert(
            "tickets",
            {
                "title": title,
                "description": description,
                "team": team,
                "priority": priority,
                "assignee": assignee,
                "created": "now",
                "tags": tags or [],
                "due": check_date(due, "due") if due else "",
                "customer": (customer or "").strip(),
            },
        )
        return {"created": True, "id": rec["id"], "ticket": _summary(rec)}

    @tool("write", name="update")
    def update_ticket(
        self,
        ticket_id: str,
        status: Status | None = None,
        priority: Priority | None = None,
        due: Annotated[str | None, Field(description="new due date, YYYY-MM-DD")] = None,
    ) -> Result:
        """Change a ticket's status, priority and/or due date."""
        self.get("tickets", ticket_id)
        changes: dict[str, object] = {}
        if due is not None:
            changes["due"] = check_date(due, "due")
        if status is not None:
            changes["status"] = check_choice(status, STATUSES, "status", "allowed")
        if priority is not None:
            changes["priority"] = check_choice(priority, PRIORITIES, "priority", "allowed")
        if not changes:
            raise ToolError("nothing to update: give status, priority and/or due")
        rec = self.update("tickets", ticket_id, changes)
        return {"updated": True, "ticket": _summary(rec)}

    @tool("write")
    def assign(self, ticket_id: str, assignee: str) -> Result:
        """Assign a ticket to a person (email)."""
        check_email(assignee, "assignee")
        self.update("tickets", ticket_id, {"assignee": assignee})
        return {"id": ticket_id, "assignee": assignee}

    @tool("write")
    def comment(self, ticket_id: str, text: str) -> Result:
        """Add a comment to a ticket."""
        if not text.strip():
            raise ToolError("text must not be empty")
        t = self.get("tickets", ticket_id)
        rec = self.update("tickets", ticket_id, {"comments": [*t["comments"], f"me: {text}"]})
        return {"id": ticket_id, "comments": len(rec["comments"])}

    @tool("read")
    def get_oncall(
        self,
        team: str,
        at: Annotated[str | None, Field(description="only the shift covering this time, YYYY-MM-DDTHH:MM")] = None,
    ) -> Result:
        """Get a team's on-call shifts (or only the one covering a given time)."""
        when = check_datetime(at, "at") if at else None
        low = team.lower()
        shifts = [
            s
            for s in self.db["oncall"].values()
            if s["team"].lower() == low and (when is None or s["start"] <= when < s["end"])
        ]
        if not shifts and when is None:
            teams = sorted({s["team"] for s in self.db["oncall"].values()})
            raise ToolError(f"no on-call schedule for team {team!r}; teams: {', '.join(teams) or 'none'}")
        shifts.sort(key=lambda s: (s["start"], s["id"]))
        return {"team": team, "shifts": shifts}
