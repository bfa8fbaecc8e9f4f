"""Every check kind, true and false, on a small hand-made workspace and episode log."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import TypeAdapter

from coworkenv.grading import PASS_THRESHOLD, EpisodeLog, combine, numbers_in
from coworkenv.runtime import Environment, Workspace
from coworkenv.spec import Check
from coworkenv.spec.checks import KINDS
from coworkenv.spec.models import AnswerNumber
from coworkenv.trajectory import ToolCallRecord, UserReply
from minispec import BASE, CREATE_TAXI, call, play, say, tiny_spec

CHECK = TypeAdapter(Check)


def check(**data: Any) -> Any:
    return CHECK.validate_python({"id": "c", **data})


def exp(**data: Any) -> Any:
    return check(service="expenses", collection="expenses", **data)


def reject_e1(ws: Workspace) -> None:
    ws.services["expenses"].reject(expense_id="e1", reason="duplicate")


def file_taxi(ws: Workspace) -> None:
    ws.services["expenses"].create_expense(**CREATE_TAXI)


def untouched(ws: Workspace) -> None:
    pass


def reject_desc(ws: Workspace) -> None:
    ws.services["expenses"].update("expenses", "e1", {"description": "Client dinner, 640.00 USD over the limit"})


STATE_CASES: list[tuple[str, Any, Callable[[Workspace], None], bool]] = [
    ("exists: new record", exp(kind="record_exists", where="r.amount == 38.5"), file_taxi, True),
    ("exists: none", exp(kind="record_exists", where="r.amount == 38.5"), untouched, False),
    ("exists: bad expression is false", exp(kind="record_exists", where="r.amount >"), file_taxi, False),
    ("absent: gone", exp(kind="record_absent", where="r.status == 'submitted'"), reject_e1, True),
    ("absent: still there", exp(kind="record_absent", where="r.status == 'submitted'"), untouched, False),
    ("field: changed", exp(kind="field_equals", record_id="e1", field="status", value="rejected"), reject_e1, True),
    ("field: unchanged", exp(kind="field_equals", record_id="e1", field="status", value="rejected"), untouched, False),
    ("field: missing record", exp(kind="field_equals", record_id="nope", field="status", value="x"), untouched, False),
    ("count ==", exp(kind="count", where="r.category == 'meals'", value=2), untouched, True),
    ("count == after insert", exp(kind="count", value=2), file_taxi, False),
    ("count >=", exp(kind="count", op=">=", value=3), file_taxi, True),
    ("count <", exp(kind="count", op="<", value=2), untouched, False),
    ("count !=", exp(kind="count", op="!=", where="r.status == 'draft'", value=0), file_taxi, True),
    ("matches: new record", exp(kind="field_matches", field="description", pattern=r"^ta[x]i$"), file_taxi, True),
    ("matches: no such text", exp(kind="field_matches", field="description", pattern=r"^taxi$"), untouched, False),
    (
        "matches: only records where holds",
        exp(kind="field_matches", where="r.status == 'approved'", field="description", pattern="dinner"),
        untouched,
        False,
    ),
    ("matches: non-text field as text", exp(kind="field_matches", field="amount", pattern=r"^38\.5$"), file_taxi, True),
    ("number: numeric field", exp(kind="field_number", field="amount", value=38.5), file_taxi, True),
    (
        "number: outside tolerance",
        exp(kind="field_number", field="amount", value=38.0, tolerance=0.1),
        file_taxi,
        False,
    ),
    ("number: in text", exp(kind="field_number", field="description", value=640), reject_desc, True),
    ("number: missing field", exp(kind="field_number", field="nope", value=640), reject_desc, False),
    ("unchanged: nothing happened", exp(kind="unchanged"), untouched, True),
    ("unchanged: collateral change", exp(kind="unchanged"), reject_e1, False),
    ("unchanged: insert not allowed", exp(kind="unchanged", allow="r.id == 'e1'"), file_taxi, False),
    ("unchanged: change allowed (old record)", exp(kind="unchanged", allow="r.status == 'submitted'"), reject_e1, True),
    ("unchanged: change allowed (new record)", exp(kind="unchanged", allow="r.status == 'rejected'"), reject_e1, True),
    ("unchanged: insert allowed", exp(kind="unchanged", allow="r.amount == 38.5"), file_taxi, True),
    ("unchanged: other collection", check(kind="unchanged", service="mail", collection="messages"), reject_e1, True),
]


@pytest.mark.parametrize(("label", "chk", "mutate", "expected"), STATE_CASES, ids=[c[0] for c in STATE_CASES])
def test_state_checks(label: str, chk: Any, mutate: Callable[[Workspace], None], expected: bool) -> None:
    ws = Workspace(BASE["services"])
    mutate(ws)
    assert chk.judge(ws)[0] is expected


def test_unchanged_detects_deletion() -> None:
    ws = Workspace(BASE["services"])
    ws.services["mail"].delete("messages", "m2")
    assert check(kind="unchanged", service="mail", collection="messages").judge(ws)[0] is False
    allowed = check(kind="unchanged", service="mail", collection="messages", allow="r.id == 'm2'")
    assert allowed.judge(ws)[0] is True


def rec(
    step: int,
    tool: str,
    args: dict[str, Any] | None = None,
    *,
    ok: bool = True,
    confirmed: bool = False,
    fault: bool = False,
) -> ToolCallRecord:
    return ToolCallRecord(
        step=step, call_id=f"c{step}", tool=tool, args=args or {}, ok=ok, confirmed=confirmed, fault=fault
    )


READ_M1 = rec(1, "mail_read", {"message_id": "m1"})
CREATE = rec(2, "expenses_create_expense", CREATE_TAXI)
CREATE_UNCONFIRMED = rec(3, "expenses_create_expense", CREATE_TAXI)
FAILED_SEND = rec(2, "mail_send", {"to": ["x@y.z"]}, ok=False)
FACT = UserReply(step=1, kind="fact", slots=["amount"])
FALLBACK = UserReply(step=1, kind="fallback")

EPISODE_CASES: list[tuple[str, Any, EpisodeLog, bool]] = [
    ("called", check(kind="tool_called", tool="mail_read"), EpisodeLog(calls=[READ_M1]), True),
    (
        "called: where holds",
        check(kind="tool_called", tool="mail_read", where="args.message_id == 'm1'"),
        EpisodeLog(calls=[READ_M1]),
        True,
    ),
    (
        "called: where fails",
        check(kind="tool_called", tool="mail_read", where="args.message_id == 'm2'"),
        EpisodeLog(calls=[READ_M1]),
        False,
    ),
    ("called: min_times", check(kind="tool_called", tool="mail_read", min_times=2), EpisodeLog(calls=[READ_M1]), False),
    (
        "called: failed calls do not count",
        check(kind="tool_called", tool="mail_send"),
        EpisodeLog(calls=[FAILED_SEND]),
        False,
    ),
    ("max calls: within", check(kind="max_calls", tool="mail_read", max=1), EpisodeLog(calls=[READ_M1]), True),
    ("max calls: over", check(kind="max_calls", tool="mail_read", max=1), EpisodeLog(calls=[READ_M1, READ_M1]), False),
    (
        "max calls: zero and only matching calls count",
        check(kind="max_calls", tool="mail_read", max=0, where="args.message_id == 'm2'"),
        EpisodeLog(calls=[READ_M1]),
        True,
    ),
    (
        "max calls: failed calls do not count",
        check(kind="max_calls", tool="mail_send", max=0),
        EpisodeLog(calls=[FAILED_SEND]),
        True,
    ),
    (
        "contains: any-of group",
        check(kind="answer_contains", values=[["Tom", "tom@corp.io"], "taxi"]),
        EpisodeLog(answers=[(3, "Filed the taxi for tom@corp.io")]),
        True,
    ),
    (
        "contains: no alternative of a group",
        check(kind="answer_contains", values=[["Tom", "tom@corp.io"], "taxi"]),
        EpisodeLog(answers=[(3, "Filed the taxi for Ann")]),
        False,
    ),
    ("not called", check(kind="tool_not_called", tool="mail_send"), EpisodeLog(calls=[READ_M1]), True),
    ("not called: it was", check(kind="tool_not_called", tool="mail_read"), EpisodeLog(calls=[READ_M1]), False),
    (
        "not called: only with other args",
        check(kind="tool_not_called", tool="mail_read", where="args.message_id == 'm2'"),
        EpisodeLog(calls=[READ_M1]),
        True,
    ),
    (
        "order",
        check(kind="order", first="mail_read", then="expenses_create_expense"),
        EpisodeLog(calls=[READ_M1, CREATE]),
        True,
    ),
    (
        "order: reversed",
        check(kind="order", first="expenses_create_expense", then="mail_read"),
        EpisodeLog(calls=[READ_M1, CREATE]),
        False,
    ),
    ("order: missing", check(kind="order", first="mail_read", then="mail_send"), EpisodeLog(calls=[READ_M1]), False),
    ("asked", check(kind="asked_user", slot="amount"), EpisodeLog(replies=[FACT]), True),
    ("asked: other slot", check(kind="asked_user", slot="date"), EpisodeLog(replies=[FACT]), False),
    (
        "asked: fallback is not an answer",
        check(kind="asked_user", slot="amount"),
        EpisodeLog(replies=[FALLBACK]),
        False,
    ),
    (
        "confirmed",
        check(kind="confirmed_before", tool="expenses_create_expense"),
        EpisodeLog(calls=[rec(2, "expenses_create_expense", confirmed=True)]),
        True,
    ),
    (
        "confirmed: one call unconfirmed",
        check(kind="confirmed_before", tool="expenses_create_expense"),
        EpisodeLog(calls=[rec(2, "expenses_create_expense", confirmed=True), CREATE_UNCONFIRMED]),
        False,
    ),
    ("confirmed: never called", check(kind="confirmed_before", tool="expenses_create_expense"), EpisodeLog(), False),
    (
        "contains",
        check(kind="answer_contains", values=["Taxi", "38.50"]),
        EpisodeLog(answers=[(3, "taxi: 38.50")]),
        True,
    ),
    (
        "contains: one value missing",
        check(kind="answer_contains", values=["taxi", "tom"]),
        EpisodeLog(answers=[(3, "taxi filed")]),
        False,
    ),
    (
        "contains: final scope ignores earlier",
        check(kind="answer_contains", values=["taxi"], scope="final"),
        EpisodeLog(answers=[(2, "taxi filed"), (4, "anything else?")]),
        False,
    ),
    (
        "contains: any scope sees earlier",
        check(kind="answer_contains", values=["taxi"], scope="any"),
        EpisodeLog(answers=[(2, "taxi filed"), (4, "anything else?")]),
        True,
    ),
    ("number", check(kind="answer_number", value=1179500), EpisodeLog(answers=[(3, "Total: $1,179,500.00")]), True),
    (
        "number: within tolerance",
        check(kind="answer_number", value=2033.6, tolerance=0.01),
        EpisodeLog(answers=[(3, "2033.60 USD")]),
        True,
    ),
    (
        "number: outside tolerance",
        check(kind="answer_number", value=2033.6, tolerance=0.01),
        EpisodeLog(answers=[(3, "about 2034 USD")]),
        False,
    ),
    ("number: none", check(kind="answer_number", value=5), EpisodeLog(answers=[(3, "five deals")]), False),
]


@pytest.mark.parametrize(("label", "chk", "log", "expected"), EPISODE_CASES, ids=[c[0] for c in EPISODE_CASES])
def test_episode_checks(label: str, chk: Any, log: EpisodeLog, expected: bool) -> None:
    assert chk.judge(log)[0] is expected


def test_every_check_kind_is_covered() -> None:
    """Each kind has cases here or a test module of its own (``test_check_<kind>.py``)."""
    kinds = {c[1].kind for c in STATE_CASES} | {c[1].kind for c in EPISODE_CASES}
    kinds |= {p.stem.removeprefix("test_check_") for p in Path(__file__).parent.glob("test_check_*.py")}
    assert kinds == {m.model_fields["kind"].default for m in get_args(get_args(Check)[0])}


def test_the_union_holds_every_registered_kind() -> None:
    kinds = [m.model_fields["kind"].default for m in get_args(get_args(Check)[0])]
    assert sorted(kinds) == sorted(KINDS)


def test_numbers_in_text() -> None:
    assert numbers_in("paid $1,234.50 and -3 items, ref 2025") == [1234.5, -3.0, 2025.0]


def test_combine_and_threshold() -> None:
    assert combine(1.0, 1.0, 1.0) == 1.0
    assert combine(1.0, 0.0, 1.0) == 0.8
    assert combine(0.5, 1.0, 1.0) == 0.6
    assert combine(1.0, 1.0, 0.0) == 0.0
    assert PASS_THRESHOLD == 0.75


def test_grade_weights_checks_and_records_first_step() -> None:
    spec = tiny_spec(
        checks=[
            {
                "id": "filed",
                "kind": "record_exists",
                "service": "expenses",
                "collection": "expenses",
                "weight": 3,
                "where": "r.amount == 38.5",
            },
            {"id": "said", "kind": "answer_contains", "values": ["zebra"]},
        ]
    )
    env = Environment(spec)
    play(env, [call("mail_read", {"message_id": "m1"}), call("expenses_create_expense", CREATE_TAXI), say("Filed it.")])
    grade = env.grade()
    by_id = {c.id: c for c in grade.checks}
    assert by_id["filed"].passed and by_id["filed"].first_step == 2
    assert not by_id["said"].passed and by_id["said"].first_step is None
    assert grade.completion == 0.75
    assert grade.score == combine(0.75, 1.0, 1.0) and grade.passed is (grade.score >= PASS_THRESHOLD)


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("24-28 March", [24.0, 28.0]),  # a range, not 24 and -28
        ("see tkt-501 and INV-2024-001, Q3", []),  # identifiers are not quantities
        ("18.450,00 EUR", [18450.0]),  # European separators
        ("1.234.567 and 1,234,567.5", [1234567.0, 1234567.5]),
        ("paid $1,234.50 and -3 items, ref 2025", [1234.5, -3.0, 2025.0]),
        ("12,5 kg or 3, 4", [12.5, 3.0, 4.0]),
        ("at 2 pm on 2025-03-03T14:00, 10:30 or 9am", []),  # dates and clock times are not quantities
        ("a 27-inch screen (-4) x=-5", [27.0, -4.0, -5.0]),
    ],
)
def test_numbers_in(text: str, numbers: list[float]) -> None:
    assert numbers_in(text) == numbers


def test_answer_number_is_not_fooled_by_ranges_and_ids() -> None:
    log = EpisodeLog(answers=[(2, "Ticket tkt-501 covers the 24-28 March trip.")])
    assert not AnswerNumber(id="n", value=-501).judge(log)[0]
    assert not AnswerNumber(id="n", value=-28).judge(log)[0]
    assert AnswerNumber(id="n", value=28).judge(log)[0]
    assert AnswerNumber(id="n", value=18450).judge(EpisodeLog(answers=[(1, "Total: 18.450,00 €")]))[0]
