"""HR: leave requests against per-person balances, and an on-call rota whose shifts change hands by swaps.

The rules are enforced by the tools, so no sequence of calls skips them: leave is approved
only by the employee's manager and only while the balance covers it; approving leave the
employee would spend on call is refused until the shift is swapped away; a swap hands a
shift only to someone who is neither on leave then nor already on call at an overlapping
time, so the rota stays covered.
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import lru_cache
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from coworkenv.services.base import (
    IsoDate,
    IsoDateTime,
    Limit,
    Offset,
    Record,
    RecordModel,
    Result,
    Service,
    ToolError,
    check_date,
    check_datetime,
    check_email,
    page,
    tool,
)
from coworkenv.services.damage import Damage

LeaveKind = Literal["vacation", "sick", "personal"]
LeaveStatus = Literal["pending", "approved", "denied", "cancelled"]
SwapStatus = Literal["pending", "accepted", "declined"]
HOLDING = ("pending", "approved")
MAX_LEAVE_DAYS = 366


class Employee(RecordModel):
    email: str
    name: str = ""
    manager: str | None = None
    team: str = ""


class Balance(RecordModel):
    employee: str
    kind: LeaveKind
    days: float = Field(ge=0, description="days left to take")


class LeaveRequest(RecordModel):
    employee: str
    kind: LeaveKind
    start: IsoDate
    end: IsoDate
    days: float
    status: LeaveStatus = "pending"
    note: str = ""
    approver: str | None = None
    reason: str | None = None


class Shift(RecordModel):
    rota: str
    person: str
    start: IsoDateTime
    end: IsoDateTime


class Swap(RecordModel):
    shift_id: str
    from_person: str
    to_person: str
    exchange_shift_id: str | None = None
    status: SwapStatus = "pending"


def workdays(start: str, end: str) -> int:
    """Weekdays from ``start`` to ``end`` inclusive."""
    day, last, n = date.fromisoformat(start), date.fromisoformat(end), 0
    while day <= last:
        n += day.weekday() < 5
        day += timedelta(days=1)
    return n


@lru_cache(maxsize=1024)
def _leave_days(first: str, last: str) -> int | None:
    """The workdays of a leave from ``first`` to ``last`` (ISO dates, in order), None when it spans more than
    :data:`MAX_LEAVE_DAYS`. Cached: every request counts its days, and an episode's requests repeat their dates."""
    if (date.fromisoformat(last) - date.fromisoformat(first)).days > MAX_LEAVE_DAYS:
        return None
    return workdays(first, last)


def _pending(requests: list[Record], kind: str) -> float:
    """Days of ``kind`` held by the pending requests among ``requests``."""
    days: float = sum(r["days"] for r in requests if r["kind"] == kind and r["status"] == "pending")
    return days


def _overlaps(a_start: str, a_end: str, b_start: str, b_end: str) -> bool:
    return a_start < b_end and b_start < a_end


def _leave_span(req: Record) -> tuple[str, str]:
    """A leave's dates as the half-open time span the rota's shifts use ("T24:00" sorts after the day's last
    minute and before the next day, and cannot overflow on 9999-12-31)."""
    return f"{req['start']}T00:00", f"{req['end']}T24:00"


class Hr(Service):
    name = "hr"
    description = "HR: employees, leave balances and requests, and the on-call rota with shift swaps"
    records = {"employees": Employee, "balances": Balance, "leave": LeaveRequest, "rota": Shift, "swaps": Swap}
    id_prefix = {"employees": "emp", "balances": "bal", "leave": "lv", "rota": "rot", "swaps": "swp"}
    damage: ClassVar[dict[str, Damage]] = {
        "leave": Damage("hr_cancel_leave", "request_id", "status", "cancelled", {}, ("pending", "approved")),
        "swaps": Damage("hr_decline_swap", "swap_id", "status", "declined", {}, ("pending",)),
    }

    def _employee(self, email: str) -> Record:
        found = self.lookup("employees", "email", email.lower(), lower=True)
        if not found:
            raise ToolError(f"no employee with email {email!r}")
        return found[0]

    def _balance(self, email: str, kind: str) -> Record | None:
        return next(
            (b for b in self.lookup("balances", "employee", email.lower(), lower=True) if b["kind"] == kind), None
        )

    def _pending_days(self, email: str, kind: str) -> float:
        return _pending(self.lookup("leave", "employee", email.lower(), lower=True), kind)

    def _shifts_of(self, email: str) -> list[Record]:
        return self.lookup("rota", "person", email.lower(), lower=True)

    # --- leave ---------------------------------------------------------------------------

    @tool("read")
    def get_balance(self, employee: Annotated[str, Field(description="the employee's email")]) -> Result:
        """An employee's leave balance per kind: days left, days in pending requests, days still available."""
        emp = self._employee(employee)
        rows = []
        for b in sorted(self.lookup("balances", "employee", emp["email"].lower(), lower=True), key=lambda b: b["kind"]):
            pending = self._pending_days(emp["email"], b["kind"])
            rows.append({"kind": b["kind"], "days": b["days"], "pending": pending, "available": b["days"] - pending})
        return {"employee": emp["email"], "balances": rows}

    @tool("read")
    def list_leave(
        self,
        employee: str | None = None,
        status: LeaveStatus | None = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> Result:
        """List leave requests, optionally of one employee (email) or in one status. Soonest first."""
        rows = self.lookup("leave", "employee", employee.lower(), lower=True) if employee else self.db["leave"].values()
        hits = sorted((r for r in rows if status is None or r["status"] == status), key=lambda r: (r["start"], r["id"]))
        return page(hits, limit, offset, key="requests")

    @tool("write")
    def submit_leave(
        self,
        employee: Annotated[str, Field(description="the employee's email")],
        kind: LeaveKind,
        start: Annotated[str, Field(description="first day off, YYYY-MM-DD")],
        end: Annotated[str, Field(description="last day off, YYYY-MM-DD")],
        note: str = "",
    ) -> Result:
        """Submit a leave request for an employee; it waits for their manager's approval."""
        emp = self._employee(check_email(employee, "employee"))
        first, last = check_date(start, "start"), check_date(end, "end")
        if last < first:
            raise ToolError("end must not be before start")
        days = _leave_days(first, last)
        if days is None:
            raise ToolError(f"a leave request spans at most {MAX_LEAVE_DAYS} days")
        if days == 0:
            raise ToolError(f"{first}..{last} has no working days")
        mine = self.lookup("leave", "employee", emp["email"].lower(), lower=True)  # for the overlaps and the pending
        for r in mine:
            if r["status"] in HOLDING and r["start"] <= last and first <= r["end"]:
                raise ToolError(f"overlaps leave request {r['id']!r} ({r['start']}..{r['end']}, {r['status']})")
        bal = self._balance(emp["email"], kind)
        available = 0.0 if bal is None else bal["days"] - _pending(mine, kind)
        if days > available:
            raise ToolError(f"{days} {kind} days requested but only {available:g} available")
        fields = {"employee": emp["email"], "kind": kind, "start": first, "end": last, "days": float(days)}
        rec = self.insert("leave", {**fields, "note": note})
        return {"submitted": True, "id": rec["id"], "days": days, "status": "pending", "manager": emp["manager"]}

    def _decide(self, request_id: str, approver: str) -> Record:
        req = self.get("leave", request_id)
        if req["status"] != "pending":
            raise ToolError(f"leave request {request_id!r} is {req['status']}, not pending")
        manager = self._employee(req["employee"])["manager"]
        if manager is None or manager.lower() != check_email(approver, "approver").lower():
            raise ToolError(f"only {req['employee']}'s manager ({manager or 'none on file'}) can decide this request")
        return req

    @tool("write")
    def approve_leave(
        self, request_id: str, approver: Annotated[str, Field(description="the manager's email")]
    ) -> Result:
        """Approve a pending leave request as the employee's manager; the days come off the balance.

        Refused while the employee holds an on-call shift during the leave (swap it away first).
        """
        req = self._decide(request_id, approver)
        span = _leave_span(req)
        for s in self._shifts_of(req["employee"]):
            if _overlaps(s["start"], s["end"], *span):
                raise ToolError(f"{req['employee']} is on call during the leave (shift {s['id']!r}); swap it first")
        bal = self._balance(req["employee"], req["kind"])
        if bal is None or bal["days"] < req["days"]:
            raise ToolError(f"the {req['kind']} balance no longer covers {req['days']:g} days")
        self.update("balances", bal["id"], {"days": bal["days"] - req["days"]})
        self.update("leave", request_id, {"status": "approved", "approver": approver})
        return {"id": request_id, "status": "approved", "balance_left": bal["days"] - req["days"]}

    @tool("write")
    def deny_leave(
        self, request_id: str, approver: Annotated[str, Field(description="the manager's email")], reason: str
    ) -> Result:
        """Deny a pending leave request as the employee's manager, giving a reason."""
        if not reason.strip():
            raise ToolError("reason must not be empty")
        self._decide(request_id, approver)
        self.update("leave", request_id, {"status": "denied", "approver": approver, "reason": reason})
        return {"id": request_id, "status": "denied", "reason": reason}

    @tool("write")
    def cancel_leave(self, request_id: str) -> Result:
        """Cancel a pending or approved leave request; approved days go back to the balance."""
        req = self.get("leave", request_id)
        if req["status"] not in HOLDING:
            raise ToolError(
                f"leave request {request_id!r} is {req['status']}; only pending or approved leave is cancelled"
            )
        bal = self._balance(req["employee"], req["kind"])
        if req["status"] == "approved" and bal is not None:
            self.update("balances", bal["id"], {"days": bal["days"] + req["days"]})
        self.update("leave", request_id, {"status": "cancelled"})
        return {"id": request_id, "status": "cancelled"}

    # --- the on-call rota ------------------------------------------------------------------

    @tool("read")
    def view_rota(
        self,
        rota: str,
        start: Annotated[str | None, Field(description="only shifts ending after, YYYY-MM-DDTHH:MM")] = None,
        end: Annotated[str | None, Field(description="only shifts starting before, YYYY-MM-DDTHH:MM")] = None,
    ) -> Result:
        """A rota's shifts in order, optionally within a time window, with pending swaps."""
        lo = check_datetime(start, "start") if start else ""
        hi = check_datetime(end, "end") if end else "9999"
        shifts = [s for s in self.lookup("rota", "rota", rota.lower(), lower=True) if s["end"] > lo and s["start"] < hi]
        if not shifts and start is None and end is None:
            rotas = sorted({s["rota"] for s in self.db["rota"].values()})
            raise ToolError(f"no rota {rota!r}; rotas: {', '.join(rotas) or 'none'}")
        shifts.sort(key=lambda s: (s["start"], s["id"]))
        swaps = [w for s in shifts for w in self.lookup("swaps", "shift_id", s["id"]) if w["status"] == "pending"]
        return {"rota": rota, "shifts": shifts, "pending_swaps": swaps}

    def _free(self, person: str, start: str, end: str, ignore: tuple[str, ...]) -> None:
        """Raise unless ``person`` can cover ``start``..``end``: not on call then, not on leave."""
        for s in self._shifts_of(person):
            if s["id"] not in ignore and _overlaps(s["start"], s["end"], start, end):
                raise ToolError(f"{person} is already on call then (shift {s['id']!r})")
        for r in self.lookup("leave", "employee", person.lower(), lower=True):
            if r["status"] in HOLDING and _overlaps(*_leave_span(r), start, end):
                raise ToolError(f"{person} is on leave then (request {r['id']!r}, {r['status']})")

    @tool("write")
    def request_swap(
        self,
        shift_id: str,
        to_person: Annotated[str, Field(description="who takes the shift (email)")],
        exchange_shift_id: Annotated[str | None, Field(description="their shift given back in exchange")] = None,
    ) -> Result:
        """Ask someone to take a shift over, optionally in exchange for one of theirs."""
        shift = self.get("rota", shift_id)
        check_email(to_person, "to_person")
        self._employee(to_person)
        if to_person.lower() == shift["person"].lower():
            raise ToolError(f"{to_person} already holds shift {shift_id!r}")
        if exchange_shift_id is not None:
            back = self.get("rota", exchange_shift_id)
            if back["person"].lower() != to_person.lower() or back["rota"] != shift["rota"]:
                raise ToolError(f"shift {exchange_shift_id!r} is not {to_person}'s in rota {shift['rota']!r}")
        if any(w["status"] == "pending" for w in self.lookup("swaps", "shift_id", shift_id)):
            raise ToolError(f"shift {shift_id!r} already has a pending swap")
        fields = {"shift_id": shift_id, "from_person": shift["person"], "to_person": to_person}
        rec = self.insert("swaps", {**fields, "exchange_shift_id": exchange_shift_id})
        return {"requested": True, "id": rec["id"], "status": "pending"}

    @tool("write")
    def accept_swap(self, swap_id: str) -> Result:
        """Accept a pending swap (as the person taking the shift): the shifts change hands at once."""
        swap = self.get("swaps", swap_id)
        if swap["status"] != "pending":
            raise ToolError(f"swap {swap_id!r} is {swap['status']}, not pending")
        shift = self.get("rota", swap["shift_id"])
        back = self.get("rota", swap["exchange_shift_id"]) if swap["exchange_shift_id"] else None
        if shift["person"].lower() != swap["from_person"].lower():
            raise ToolError(f"shift {shift['id']!r} changed hands since the swap was requested")
        mine = (shift["id"], back["id"]) if back else (shift["id"],)
        self._free(swap["to_person"], shift["start"], shift["end"], mine)
        if back is not None:
            self._free(swap["from_person"], back["start"], back["end"], mine)
            self.update("rota", back["id"], {"person": swap["from_person"]})
        self.update("rota", shift["id"], {"person": swap["to_person"]})
        self.update("swaps", swap_id, {"status": "accepted"})
        return {"id": swap_id, "status": "accepted", "shift_id": shift["id"], "person": swap["to_person"]}

    @tool("write")
    def decline_swap(self, swap_id: str) -> Result:
        """Decline a pending swap; the shift stays with its holder."""
        swap = self.get("swaps", swap_id)
        if swap["status"] != "pending":
            raise ToolError(f"swap {swap_id!r} is {swap['status']}, not pending")
        self.update("swaps", swap_id, {"status": "declined"})
        return {"id": swap_id, "status": "declined"}
