"""The check tracker's shortcuts: a write that leaves every field a check reads as it was at step 0 is not
re-evaluated, and ``allow`` on an initial record is computed once. Each test tries to make a shortcut give a
result that differs from evaluating the check from scratch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from coworkenv.expr import record_fields
from coworkenv.grading import state_check, tracking
from coworkenv.grading.tracking import CheckTracker
from coworkenv.runtime import Workspace
from coworkenv.spec import Check, load_spec
from coworkenv.spec.events import Mutation
from test_incremental import OPS, apply_op, derived_checks

SPEC = load_spec(Path(__file__).parent.parent / "examples" / "phishing_inbox_triage.yaml")
CHECK = TypeAdapter(Check)
MSG = {"service": "mail", "collection": "messages"}


def make(checks: list[dict[str, Any]]) -> tuple[Workspace, CheckTracker, list[Any]]:
    built = [CHECK.validate_python({**MSG, **c}) for c in checks]
    ws = Workspace(SPEC.services)
    return ws, CheckTracker(built, ws), built


def agrees(ws: Workspace, tracker: CheckTracker, checks: list[Any]) -> None:
    assert tracker.results() == {c.id: state_check(c, ws) for c in checks}


@pytest.fixture
def evaluations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The expressions the tracker evaluates, in order (through the predicates it compiles)."""
    seen: list[str] = []
    real = tracking.record_predicate

    def counting(where: str) -> Callable[[dict[str, Any]], bool]:
        matches = real(where)

        def counted(rec: dict[str, Any]) -> bool:
            seen.append(where)
            return matches(rec)

        return counted

    monkeypatch.setattr(tracking, "record_predicate", counting)
    return seen


def test_record_fields() -> None:
    assert record_fields("r.folder == 'x' and contains(r.subject, 'y')") == {"folder", "subject"}
    assert record_fields("r.to[*].x == 1 and a.r == 2") == {"to"}
    for whole in ("len(r) > 1", "r['folder'] == 'x'", "r == null", "r.", "'unterminated"):
        assert record_fields(whole) is None, whole


def test_a_write_to_a_field_the_check_reads_is_evaluated(evaluations: list[str]) -> None:
    ws, tracker, checks = make([{"id": "spam", "kind": "record_exists", "where": "r.folder == 'spam'"}])
    assert not tracker.result(checks[0])[0]
    evaluations.clear()  # the step-0 picture
    ws.services["mail"].update("messages", "msg-101", {"folder": "spam"})
    agrees(ws, tracker, checks)
    assert tracker.result(checks[0])[0] and evaluations == ["r.folder == 'spam'"]


def test_a_write_to_other_fields_is_not_evaluated(evaluations: list[str]) -> None:
    ws, tracker, checks = make([{"id": "spam", "kind": "record_exists", "where": "r.folder == 'spam'"}])
    evaluations.clear()  # the step-0 picture
    assert ws.records("mail", "messages")["msg-101"]["folder"] == "inbox"
    ws.services["mail"].update("messages", "msg-101", {"folder": "spam"})
    agrees(ws, tracker, checks)  # the tracker reads the changes when asked
    ws.services["mail"].update("messages", "msg-101", {"folder": "inbox", "unread": False})  # back as at step 0
    agrees(ws, tracker, checks)
    ws.services["mail"].update("messages", "msg-102", {"unread": False})
    agrees(ws, tracker, checks)
    assert evaluations == ["r.folder == 'spam'"]  # only the first write changed what the check reads


def test_same_value_of_another_type_is_evaluated() -> None:
    """``1 == True`` in Python, yet ``str(r.unread)`` tells them apart: the shortcut must not take them as equal."""
    ws, tracker, checks = make([{"id": "flag", "kind": "record_exists", "where": "str(r.unread) == 'True'"}])
    records = ws.records("mail", "messages")
    for rid in list(records):  # unread True (as at step 0) only on msg-101, then an int 1 instead
        ws.services["mail"].store("messages", rid, {**records[rid], "unread": rid == "msg-101"})
    agrees(ws, tracker, checks)
    assert tracker.result(checks[0])[0] and ws.initial_records("mail", "messages")["msg-101"]["unread"] is True
    ws.services["mail"].store("messages", "msg-101", {**records["msg-101"], "unread": 1})
    agrees(ws, tracker, checks)
    assert not tracker.result(checks[0])[0]


def test_an_event_changing_a_field_the_check_reads() -> None:
    ws, tracker, checks = make(
        [
            {"id": "read", "kind": "count", "where": "r.unread == false", "op": ">=", "value": 1},
            {"id": "keep", "kind": "unchanged", "allow": "r.unread == false"},
        ]
    )
    before = tracker.results()
    ws.apply(Mutation(op="update", id="msg-101", record={"unread": False}, **MSG))
    agrees(ws, tracker, checks)
    assert tracker.results() != before
    ws.apply(Mutation(op="update", id="msg-101", record={"unread": True}, **MSG))
    agrees(ws, tracker, checks)
    assert tracker.results() == before


def test_allow_reading_the_whole_record_is_always_evaluated(evaluations: list[str]) -> None:
    ws, tracker, checks = make([{"id": "keep", "kind": "unchanged", "allow": "len(r) > 99"}])
    ws.services["mail"].update("messages", "msg-101", {"unread": False})
    agrees(ws, tracker, checks)
    assert not tracker.result(checks[0])[0] and "len(r) > 99" in evaluations


def test_allow_on_the_changed_field_and_on_an_untouched_one() -> None:
    ws, tracker, checks = make(
        [
            {"id": "by_unread", "kind": "unchanged", "allow": "r.unread == false"},
            {"id": "by_id", "kind": "unchanged", "allow": "r.id == 'msg-101'"},
        ]
    )
    mail = ws.services["mail"]
    mail.update("messages", "msg-101", {"unread": False, "folder": "archive"})
    agrees(ws, tracker, checks)
    mail.update("messages", "msg-102", {"folder": "archive"})  # allowed by neither
    agrees(ws, tracker, checks)
    mail.delete("messages", "msg-101")
    agrees(ws, tracker, checks)
    ws.reset()
    agrees(ws, tracker, checks)
    assert all(ok for ok, _ in tracker.results().values())


@pytest.mark.parametrize("name", ["phishing_inbox_triage", "travel_spend_review", "drive_offboard_agency"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, asks=st.lists(st.booleans(), max_size=20))
def test_settled_checks_catch_up_when_asked(name: str, ops: list[tuple[int, ...]], asks: list[bool]) -> None:
    """``record`` brings only the checks that have not held yet up to date; the others must still give the
    recomputed result whenever asked, and ``first_true`` must be the first step each held."""
    spec = load_spec(Path(__file__).parent.parent / "examples" / f"{name}.yaml")
    checks = derived_checks(spec)
    ws = Workspace(spec.services)
    tracker = CheckTracker(checks, ws)
    tracker.record(0)
    expected = {c.id: 0 for c in checks if state_check(c, ws)[0]}
    for step, op in enumerate(ops, 1):
        apply_op(ws, op)
        if op[0] == 0:  # a reset starts the count again, as an episode's reset does
            expected = {}
        if step <= len(asks) and asks[step - 1]:  # results asked for between a write and its record()
            agrees(ws, tracker, checks)
        tracker.record(step)
        for c in checks:
            if c.id not in expected and state_check(c, ws)[0]:
                expected[c.id] = step
        assert tracker.first_true == expected
    agrees(ws, tracker, checks)


def test_a_check_that_turns_true_while_results_are_read_is_recorded() -> None:
    """Results read between a write and ``record`` consume the change: ``record`` must still see the check that
    turned true."""
    ws, tracker, checks = make(
        [
            {"id": "spam", "kind": "record_exists", "where": "r.folder == 'spam'"},
            {"id": "keep", "kind": "unchanged", "allow": "r.folder == 'spam'"},
        ]
    )
    tracker.record(0)
    assert tracker.first_true == {"keep": 0}
    ws.services["mail"].update("messages", "msg-101", {"folder": "spam"})
    agrees(ws, tracker, checks)
    tracker.record(1)
    assert tracker.first_true == {"keep": 0, "spam": 1}
    ws.services["mail"].update("messages", "msg-102", {"folder": "archive"})  # collateral: a settled check sees it
    tracker.record(2)
    agrees(ws, tracker, checks)
    assert not tracker.result(checks[1])[0] and tracker.first_true == {"keep": 0, "spam": 1}
