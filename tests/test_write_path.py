"""The write path's shortcuts tried against the slow, certain way.

A write builds its record without the model when the values are certain (now also for calendar
events and documents, whose checks moved from model validators to field types), keeps indexes
and check tracking current from the one changed record, and never mutates a record in place, so
environments built from the same fixtures share the initial records. These tests try to break
each: a write refused halfway must leave no trace; writes in one environment, or in a fork, must
not reach another; the running state hash must equal one computed from scratch.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from coworkenv.grading.tracking import CheckTracker
from coworkenv.runtime import AssistantTurn, Environment, ToolCall, Workspace
from coworkenv.runtime.digest import full_digest
from coworkenv.runtime.fork import Snapshot
from coworkenv.services.arguments import _record_plan, changed_record, inserted_record
from coworkenv.services.base import Record, ToolError, check_email
from coworkenv.services.calendar import CalendarEvent
from coworkenv.services.declared import DeclaredService
from coworkenv.services.documents import Document
from coworkenv.services.hr import Hr
from coworkenv.spec import Check, TaskSpec, load_spec, spec_from_data
from test_incremental import OPS, apply_op, derived_checks

EXAMPLES = Path(__file__).parent.parent / "examples"
CHECK: TypeAdapter[Any] = TypeAdapter(Check)

PEOPLE = ["ana@corp.io", "bob@corp.io"]
SPEC: dict[str, Any] = {
    "id": "writes",
    "title": "Writes across services",
    "services": {
        "calendar": {
            "events": [
                {"id": f"evt-{i}", "title": f"Sync {i}", "start": f"2025-03-1{i}T10:00", "end": f"2025-03-1{i}T11:00"}
                for i in range(3)
            ]
        },
        "documents": {"documents": [{"id": f"doc-{i}", "path": f"/Eng/file {i}", "content": "x"} for i in range(3)]},
        "tickets": {
            "tickets": [
                {"id": f"tkt-{i}", "title": "Printer", "description": "jam", "team": "it", "created": "2025-03-01"}
                for i in range(3)
            ]
        },
        "mail": {
            "messages": [
                {"id": "msg-1", "sender": PEOPLE[0], "to": [PEOPLE[1]], "subject": "Hi", "body": "b", "date": "d"}
            ]
        },
        "hr": {
            "employees": [{"id": f"emp-{i}", "email": p, "manager": "boss@corp.io"} for i, p in enumerate(PEOPLE)],
            "balances": [
                {"id": f"bal-{i}", "employee": p, "kind": "vacation", "days": 10.0} for i, p in enumerate(PEOPLE)
            ],
        },
    },
    "user": {"opening": "Please tidy up."},
    "checks": [
        {"id": "moved", "kind": "record_exists", "service": "calendar", "collection": "events",
         "where": "r.title == 'Moved'"},
        {"id": "keep_docs", "kind": "unchanged", "service": "documents", "collection": "documents"},
        {"id": "urgent", "kind": "count", "service": "tickets", "collection": "tickets",
         "where": "r.priority == 'urgent'", "op": ">=", "value": 1},
        {"id": "sent", "kind": "record_exists", "service": "mail", "collection": "messages",
         "where": "r.folder == 'sent'"},
    ],
    "reference": [{"answer": "Done."}],
}  # fmt: skip
WRITES: list[tuple[str, dict[str, Any]]] = [
    ("calendar_create_event", {"title": "Moved", "start": "2025-03-20T10:00", "end": "2025-03-20T10:30"}),
    ("documents_append", {"document_id": "doc-1", "text": "more"}),
    ("tickets_comment", {"ticket_id": "tkt-2", "text": "Looking."}),
    ("tickets_update", {"ticket_id": "tkt-1", "priority": "urgent"}),
    ("mail_label", {"message_id": "msg-1", "label": "later"}),
    ("mail_send", {"to": [PEOPLE[1]], "subject": "Re", "body": "ok"}),
    ("hr_submit_leave", {"employee": PEOPLE[0], "kind": "vacation", "start": "2026-01-05", "end": "2026-01-06"}),
]


def spec() -> TaskSpec:
    return spec_from_data(copy.deepcopy(SPEC))


def turn(tool: str, args: dict[str, Any]) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(id="c1", name=tool, arguments=json.dumps(args))])


def content(env: Environment, tool: str, args: dict[str, Any]) -> str:
    return str(env.step(turn(tool, args)).messages[0]["content"])


INDEXED = [("hr", "employees", "email"), ("hr", "balances", "employee"), ("hr", "leave", "employee")]


def trace(env: Environment) -> Any:
    """Everything a write may leave behind: records, change log, hash, check results, and what the lookups the hr
    tools make give (an index is a cache, built on first use and dropped by a restore: compared by what it says)."""
    ws = env.workspace
    lookups = {
        (collection, value): ws.services[service].lookup(collection, field, value.lower(), lower=True)
        for service, collection, field in INDEXED
        for value in [*PEOPLE, "nobody@corp.io"]
    }
    return copy.deepcopy(ws.state), list(ws.changes), lookups, ws.state_hash(), env.tracker.results()


def test_calendar_events_and_documents_are_built_without_the_model() -> None:
    assert _record_plan(CalendarEvent) is not None and _record_plan(Document) is not None


def model_dump(model: type[BaseModel], row: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return dict(model.model_validate(row).model_dump(mode="json"))
    except ValidationError:
        return None


TIMES = ["2025-03-10T10:00", "2025-03-10", "2025-13-01T10:00", "x", "", " 2025-03-10T10:00", "2025-03-10T10:00+02:00"]
PATHS = ["/Eng/a", "Eng/a", "/Eng/", "/Eng//a", "/", "", "/a b/c"]
ODD = [None, 5, 1.5, True, ["a"], {"a": 1}]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.sampled_from(TIMES + ODD), end=st.sampled_from(TIMES + ODD), path=st.sampled_from(PATHS + ODD)
)  # fmt: skip
def test_the_built_record_is_the_models(start: Any, end: Any, path: Any) -> None:
    """Inserted or changed, with a value the field's check passes, refuses or would change: the shortcut gives
    what validating and dumping gives, or leaves the record to the model."""
    event = {"id": "e", "title": "t", "start": start, "end": end}
    document = {"id": "d", "path": path}
    for model, row, old in (
        (CalendarEvent, event, {"id": "e", "title": "t", "start": TIMES[0], "end": TIMES[0]}),
        (Document, document, model_dump(Document, {"id": "d", "path": "/Eng/a"})),
    ):
        expected = model_dump(model, row)
        built = inserted_record(model, row)
        assert built is None or (built == expected and list(built) == list(expected or {}))
        assert old is not None
        changes = {k: v for k, v in row.items() if k != "id"}
        changed = changed_record(model, model_dump(model, old) or {}, changes)
        assert changed is None or changed == model_dump(model, {**old, **changes})
    if start == end == TIMES[0]:
        assert inserted_record(CalendarEvent, event) is not None  # the usual event takes the shortcut


@pytest.mark.parametrize(
    ("service", "collection", "rid", "fields"),
    [
        ("calendar", "events", None, {"title": "t", "start": "2025-13-01T10:00", "end": "2025-03-10T10:00"}),
        ("calendar", "events", "evt-1", {"start": "not a time"}),
        ("documents", "documents", None, {"path": "no/leading/slash"}),
        ("documents", "documents", "doc-2", {"path": "/Eng//double"}),
        ("hr", "balances", "bal-0", {"days": -1.0}),  # an indexed collection: its index must not move
        ("tickets", "tickets", "tkt-0", {"priority": "urgent", "status": 7}),  # one change fine, one refused
    ],
)
def test_a_refused_write_leaves_no_trace(service: str, collection: str, rid: str | None, fields: Record) -> None:
    env = Environment(spec())
    content(env, "hr_get_balance", {"employee": PEOPLE[0]})  # builds the balances index the write could disturb
    content(env, "calendar_create_event", WRITES[0][1])
    before = trace(env)
    svc = env.workspace.services[service]
    with pytest.raises(ToolError):
        svc.insert(collection, fields) if rid is None else svc.update(collection, rid, fields)
    env.tracker.record(len(env.steps))
    assert trace(env) == before


def test_a_refused_call_leaves_no_trace() -> None:
    env = Environment(spec())
    content(env, "hr_get_balance", {"employee": PEOPLE[0]})  # the lookup indexes the refused leave reads
    content(env, "hr_list_leave", {"employee": PEOPLE[0]})
    before = trace(env)
    for tool, args in [
        ("calendar_create_event", {"title": "t", "start": "2025-03-10T10:00", "end": "2025-02-10T10:00"}),
        ("hr_submit_leave", {"employee": PEOPLE[0], "kind": "vacation", "start": "2026-01-10", "end": "2026-01-11"}),
        ("hr_submit_leave", {"employee": PEOPLE[0], "kind": "vacation", "start": "2026-01-05", "end": "2027-03-01"}),
        ("mail_send", {"to": ["not an address"], "subject": "s", "body": "b"}),
        ("documents_append", {"document_id": "doc-9", "text": "x"}),
    ]:
        assert content(env, tool, args).startswith('{"error"'), tool
    assert trace(env) == before and env.tracker.first_true == {"keep_docs": 0}


def test_leave_is_refused_as_before() -> None:
    """The leave's span, its workdays and the pending days now come from one lookup and a cached count."""
    env = Environment(spec())

    def leave(start: str, end: str) -> str:
        return content(env, "hr_submit_leave", {"employee": PEOPLE[0], "kind": "vacation", "start": start, "end": end})

    assert "spans at most 366 days" in leave("2026-01-05", "2027-01-07")
    assert "no working days" in leave("2026-01-10", "2026-01-11")
    assert json.loads(leave("2026-01-05", "2026-01-09"))["days"] == 5
    assert "overlaps leave request" in leave("2026-01-09", "2026-01-12")
    assert "6 vacation days requested but only 5 available" in leave("2026-02-02", "2026-02-09")  # 5 days pending


def test_environments_of_one_spec_share_nothing_a_write_changes() -> None:
    """Workspaces of the same fixtures share the initial records: a write (lists included) must copy, never mutate."""
    shared = spec()
    a, b = Environment(shared), Environment(shared)
    initial = copy.deepcopy(a.workspace.initial)
    untouched = trace(b)
    for tool, args in WRITES * 2:
        content(a, tool, args)
    assert a.workspace.state != initial
    assert a.workspace.initial == initial and trace(b) == untouched
    a.reset()
    assert a.workspace.state == initial and a.workspace.state_hash() == b.workspace.state_hash()


def test_a_fork_and_its_trunk_do_not_reach_each_other() -> None:
    env = Environment(spec())
    content(env, "hr_get_balance", {"employee": PEOPLE[0]})  # indexes built before the fork (a cache, not state)
    content(env, "hr_list_leave", {"employee": PEOPLE[0]})
    for tool, args in WRITES[:3]:
        content(env, tool, args)
    at = Snapshot.of(env)
    mid = trace(env)
    for tool, args in WRITES[3:]:
        content(env, tool, args)
    later = trace(env)
    at.put(env)
    assert trace(env) == mid
    for tool, args in WRITES[3:]:  # the same writes again give the same state as the first time
        content(env, tool, args)
    assert trace(env) == later


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(picks=st.lists(st.integers(0, len(WRITES)), max_size=12))
def test_the_running_hash_equals_a_hash_from_scratch(picks: list[int]) -> None:
    """After every write (a pick past the list resets), hashed or not in between."""
    env = Environment(spec())
    for i, pick in enumerate(picks):
        if pick == len(WRITES):
            env.reset()
        else:
            content(env, *WRITES[pick])
        if i % 2:
            assert env.workspace.state_hash() == full_digest(env.workspace.state)
    assert env.workspace.state_hash() == full_digest(env.workspace.state)


def test_an_address_once_accepted_does_not_let_others_through() -> None:
    assert check_email("ana@corp.io") == check_email("ana@corp.io") == "ana@corp.io"
    for bad in ["ana corp.io", "ana@corp.io ", "a@b@c", "@corp.io", "", None, 5, ["ana@corp.io"]]:
        with pytest.raises(ToolError):
            check_email(bad)  # type: ignore[arg-type]

    class Text(str):
        pass

    assert check_email(Text("ana@corp.io")) == "ana@corp.io"  # a str subclass is checked, not looked up


def test_a_service_with_its_own_validation_keeps_it() -> None:
    assert Hr._usual_validation and not DeclaredService._usual_validation


@pytest.mark.parametrize("name", ["phishing_inbox_triage", "travel_spend_review", "oncall_trade_for_leave"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=OPS, ops=OPS)
def test_an_open_check_turns_when_what_it_reads_moves(name: str, before: list[Any], ops: list[Any]) -> None:
    """``record`` looks at an open check only when the write moved what it reads (a count, an unchanged check's
    differences, a field check's record). Writes before the first ``record`` leave checks of every kind open and
    false (an unchanged check with collateral changes a later write may undo): each must still be noted at the
    first step it holds."""
    spec = load_spec(EXAMPLES / f"{name}.yaml")
    checks = derived_checks(spec)
    ws = Workspace(spec.services)
    tracker = CheckTracker(checks, ws)
    for op in before:
        if op[0]:  # no reset: what they changed stays
            apply_op(ws, op)
    tracker.record(0)
    expected = {c.id: 0 for c in checks if c.judge(ws)[0]}
    for step, op in enumerate(ops, 1):
        apply_op(ws, op)
        if op[0] == 0:
            expected = {}
        tracker.record(step)
        for c in checks:
            if c.id not in expected and c.judge(ws)[0]:
                expected[c.id] = step
        assert tracker.first_true == expected


def test_an_open_unchanged_check_and_an_open_field_check_turn_at_their_write() -> None:
    """Checks left open by changes before the first ``record``: an unchanged check turns when the last collateral
    change is undone (not before), a field check when its own record gets the value (not on another's write)."""
    spec = load_spec(EXAMPLES / "phishing_inbox_triage.yaml")
    ws = Workspace(spec.services)
    msg = {"service": "mail", "collection": "messages"}
    filed = {"id": "filed", "kind": "field_equals", "record_id": "msg-103", "field": "folder", "value": "archive"}
    keep = {"id": "keep", "kind": "unchanged"}
    checks = [CHECK.validate_python({**keep, **msg}), CHECK.validate_python({**filed, **msg})]
    tracker = CheckTracker(checks, ws)
    mail, initial = ws.services["mail"], ws.initial["mail"]["messages"]
    mail.update("messages", "msg-101", {"folder": "spam"})
    tracker.record(0)
    mail.update("messages", "msg-102", {"folder": "spam"})
    tracker.record(1)
    mail.update("messages", "msg-101", copy.deepcopy(initial["msg-101"]))  # one collateral change left
    tracker.record(2)
    assert tracker.first_true == {}
    mail.update("messages", "msg-104", {"folder": "archive"})  # the field check's value, on another record
    mail.update("messages", "msg-104", copy.deepcopy(initial["msg-104"]))
    tracker.record(3)
    assert tracker.first_true == {}
    mail.update("messages", "msg-102", copy.deepcopy(initial["msg-102"]))
    tracker.record(4)
    assert tracker.first_true == {"keep": 4}
    mail.update("messages", "msg-103", {"folder": "archive"})
    tracker.record(5)
    assert tracker.first_true == {"keep": 4, "filed": 5}
    assert tracker.results() == {c.id: c.judge(ws) for c in checks}
