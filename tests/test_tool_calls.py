"""A turn's tool calls at the edges of the call path: the tool-call budget, several calls in one turn, scheduled and
random faults, a broken workflow rule, an event a call sets off, hostile argument texts, a confirmation, arguments
the caller changes later; each test checks the records, messages and check tracking the turns leave. Turns given as
AssistantTurns and as message dicts record the same."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coworkenv.runtime import AssistantTurn, Environment, ToolCall
from coworkenv.runtime.router import nesting_exceeds
from coworkenv.spec import TaskSpec, load_spec
from coworkenv.spec.models import TRANSIENT_ERROR

EXAMPLES = Path(__file__).parent.parent / "examples"
PHISHING = load_spec(EXAMPLES / "phishing_inbox_triage.yaml")
QUOTE = load_spec(EXAMPLES / "external_quote_confirmation.yaml")
MOVE = {"name": "mail_move", "arguments": json.dumps({"message_id": "msg-501", "folder": "spam"})}
READ = {"name": "mail_read", "arguments": json.dumps({"message_id": "msg-501"})}


def turn(*calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": f"c{i}", "function": c} for i, c in enumerate(calls)],
    }


def variant(**changes: Any) -> TaskSpec:
    return TaskSpec.model_validate({**PHISHING.model_dump(exclude_none=True), **changes})


def test_the_call_that_meets_the_budget_runs_and_the_next_ends_the_episode() -> None:
    env = Environment(PHISHING, max_tool_calls=2)
    env.step(turn(READ))
    second = env.step(turn(READ))
    assert not second.done and env.steps[-1].tool_calls == 1
    third = env.step(turn(READ))
    assert (
        third.done and third.info["done_reason"] == "max_tool_calls" and "limit reached" in third.messages[0]["content"]
    )
    record = env.steps[-1]
    assert record.tool_calls == 0 and "tool_calls" not in record.model_fields_set  # no call ran
    assert len(env.log.calls) == 2


def test_a_two_call_turn_counts_both_and_keeps_the_order() -> None:
    env = Environment(PHISHING)
    obs = env.step(turn(READ, READ))
    assert [m["tool_call_id"] for m in obs.messages] == ["c0", "c1"] and env.steps[-1].tool_calls == 2


def test_a_scheduled_fault_hits_its_call_and_leaves_no_trace() -> None:
    env = Environment(PHISHING)  # faults: mail_move fails on its first call
    before = env.workspace.state_hash()
    obs = env.step(turn(MOVE))
    assert "error" in json.loads(obs.messages[0]["content"]) and env.log.calls[-1].fault
    assert env.workspace.state_hash() == before and not env.workspace.changes
    env.step(turn(MOVE))
    assert env.workspace.records("mail", "messages")["msg-501"]["folder"] == "spam"


def test_a_random_fault_is_drawn_without_scheduled_ones() -> None:
    env = Environment(variant(faults=[]), fault_rate=1.0)
    obs = env.step(turn(READ))
    assert json.loads(obs.messages[0]["content"]) == {"error": TRANSIENT_ERROR}
    clean = Environment(variant(faults=[]))
    assert "error" not in json.loads(clean.step(turn(READ)).messages[0]["content"])


def test_a_broken_rule_is_noted_on_the_step_and_the_episode() -> None:
    env = Environment(PHISHING)
    send = {"name": "mail_send", "arguments": json.dumps({"to": ["x@evil.com"], "subject": "s", "body": "b"})}
    env.step(turn(send))
    assert env.steps[-1].violations == ["no_external_forward"] and env.violations[0].tool == "mail_send"


def test_an_event_fired_by_a_call_changes_what_checks_see() -> None:
    """The event moves a message the check reads: its notice follows the tool message, the check records it."""
    event = {
        "id": "auto_spam",
        "on_tool": "mail_read",
        "notify": "Two messages were flagged.",
        "mutations": [
            {"service": "mail", "collection": "messages", "op": "update", "id": m, "record": {"folder": "spam"}}
            for m in ("msg-502", "msg-503")
        ],
    }
    env = Environment(variant(faults=[], events=[event]))
    env.step(turn(MOVE))
    assert "scams_in_spam" not in env.tracker.first_true
    obs = env.step(turn(READ))
    assert [m["role"] for m in obs.messages] == ["tool", "user"] and env.steps[-1].events == ["auto_spam"]
    assert env.tracker.first_true["scams_in_spam"] == 2


ASK = "Before I email Kenji at Acme the quote, can you confirm I should send it?"
HOSTILE = [
    ("mail_read", '{"message_id": "msg-501"}'),
    ("no_such_tool", '{"message_id": "msg-501"}'),
    ("mail_read", "{"),
    ("mail_read", '{"message_id": "msg-501"} trailing'),
    ("mail_read", '{"message_id": "msg-501", "message_id": "msg-999"}'),
    ("mail_read", '{"message_id": "\\u00e9\\ud83d\\ude00 \u00fc"}'),
    ("mail_read", '{"message_id": ' + "[" * 40 + "]" * 40 + "}"),
    ("mail_read", '{"message_id": ' + "9" * 5000 + "}"),
    ("mail_read", "[1, 2]"),
    ("mail_read", ""),
    ("mail_read", '{"message_id": 7}'),
    ("mail_read", '{"message_id": "msg-501", "extra": true}'),
    ("mail_read", '{"message_id": NaN}'),
    ("mail_search", '{"query": "invoice", "limit": 2}'),
]


def _spec(spec: TaskSpec, **changes: Any) -> TaskSpec:
    return TaskSpec.model_validate({**spec.model_dump(exclude_none=True), "faults": [], **changes})


def _turn(i: int, name: str, arguments: str | dict[str, Any]) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(id=f"c{i}", name=name, arguments=arguments)])


def _as_dict(turn: Any) -> Any:
    """The same turn as a message dict."""
    if not isinstance(turn, AssistantTurn):
        return turn
    calls = [{"id": c.id, "function": {"name": c.name, "arguments": c.arguments}} for c in turn.tool_calls]
    return {"role": "assistant", "content": turn.content, "tool_calls": calls}


def _records(env: Environment) -> tuple[Any, ...]:
    calls = [c.model_dump() for c in env.log.calls]
    steps = [(s.model_dump(), s.model_fields_set) for s in env.steps]
    return calls, steps, env.messages, env.grade().model_dump(), env.workspace.state_hash()


def _play(spec: TaskSpec, turns: list[Any]) -> tuple[Any, ...]:
    env = Environment(spec)
    seen = [dataclasses.asdict(env.step(turn)) for turn in turns]
    return _records(env), seen


def _both_ways(spec: TaskSpec, turns: list[Any]) -> tuple[Any, ...]:
    """The records of the turns as given, which the same turns as message dicts must leave too."""
    played = _play(spec, turns)
    assert played == _play(spec, [_as_dict(t) for t in turns])
    return played


def test_a_call_read_after_a_confirmation_keeps_the_confirmation_of_its_own_step() -> None:
    spec = _spec(QUOTE)
    turns = [_turn(0, "mail_search", '{"query": "quote"}'), ASK, _turn(2, "mail_search", '{"query": "Acme"}')]
    (calls, steps, *_), _ = _both_ways(spec, turns)
    assert [c["confirmed"] for c in calls] == [False, True]
    assert [s["tool_calls"] for s, _ in steps] == [1, 0, 1] and steps[1][0]["user"]["approved"]


@pytest.mark.parametrize("two_first", [False, True])
def test_error_steps_and_hostile_argument_texts_are_recorded(two_first: bool) -> None:
    turns: list[Any] = [_turn(i, name, args) for i, (name, args) in enumerate(HOSTILE)]
    if two_first:  # a step of two calls first: its records come before the others
        two = AssistantTurn(tool_calls=[ToolCall(id="d0", name="mail_read", arguments="{}")] * 2)
        turns.insert(0, two)
    (calls, steps, *_), _ = _both_ways(_spec(PHISHING), turns)
    assert len(calls) == len(HOSTILE) + (2 if two_first else 0) and len(steps) == len(turns)
    lean = calls[-len(HOSTILE) :]
    assert [c["ok"] for c in lean] == [True, *[False] * (len(HOSTILE) - 2), True]  # the plain read and the search
    assert [c["args"] is None for c in lean[:4]] == [False, True, True, True]  # undecodable: no arguments
    assert lean[4]["args"] == {"message_id": "msg-999"} and lean[5]["args"] == {"message_id": "\u00e9\U0001f600 \u00fc"}


def test_arguments_changed_by_the_caller_after_later_steps_stay_as_given() -> None:
    """The record holds its own copy of the arguments (one level, as validating the record would), taken at its
    step: changing the caller's dict later, after further steps, does not reach it."""
    env = Environment(_spec(PHISHING))
    turn = _turn(0, "mail_read", {"message_id": "msg-501"})
    env.step(turn)
    args = turn.tool_calls[0].arguments  # the very dict the environment was given
    assert isinstance(args, dict)
    args["message_id"] = "changed"
    args["extra"] = True
    env.step(_turn(1, "mail_read", '{"message_id": "msg-502"}'))
    assert env.log.calls[0].args == {"message_id": "msg-501"} and env.log.calls[0].ok


def test_an_event_due_after_a_step_is_noted_in_its_record() -> None:
    update = {"service": "mail", "collection": "messages", "op": "update", "id": "msg-502", "record": {"unread": False}}
    spec = _spec(PHISHING, events=[{"id": "late", "after_step": 2, "notify": "Mail arrived.", "mutations": [update]}])
    turns = [_turn(i, "mail_read", '{"message_id": "msg-501"}') for i in range(3)]
    (_, steps, messages, *_), _ = _both_ways(spec, turns)
    assert [s["events"] for s, _ in steps] == [[], ["late"], []]
    assert any("Mail arrived." in str(m.get("content")) for m in messages)


def test_a_reset_drops_the_calls_and_steps() -> None:
    env = Environment(_spec(PHISHING))
    env.step(_turn(0, "mail_read", '{"message_id": "msg-501"}'))
    env.reset()
    assert env.log.calls == [] and env.steps == []
    env.step(_turn(1, "mail_read", '{"message_id": "msg-502"}'))
    assert [c.call_id for c in env.log.calls] == ["c1"] and [s.index for s in env.steps] == [1]


def test_a_scheduled_fault_counts_the_calls_of_its_own_tool() -> None:
    """PHISHING fails mail_move's first call: reads around it do not move the count."""
    read = _turn(0, "mail_read", '{"message_id": "msg-501"}')
    move = _turn(1, "mail_move", '{"message_id": "msg-501", "folder": "spam"}')
    turns = [read, read, move, read, move, read]
    (calls, *_), _ = _both_ways(PHISHING, turns)  # PHISHING as it is: its fault kept
    assert [(c["tool"], c["ok"], c["fault"]) for c in calls if c["tool"] == "mail_move"] == [
        ("mail_move", False, True),
        ("mail_move", True, False),
    ]


def _depth(value: Any) -> int:
    """How deep lists and dicts nest in ``value``, by recursion (what nesting_exceeds is checked against)."""
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


NESTED = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=2)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(NESTED, st.dictionaries(st.text(max_size=2), NESTED, max_size=4)), limit=st.integers(0, 5))
def test_the_nesting_check_agrees_with_the_depth(value: Any, limit: int) -> None:
    assert nesting_exceeds(value, limit) == (_depth(value) > limit)
