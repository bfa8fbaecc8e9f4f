"""A lean step keeps its step record and its call record as values, built when read (``Environment.steps``,
``CallLog.calls``). Each test tries to make a record built late differ from the one the step would have built
then: reads at every step against reads only at the end against the general path (turns as message dicts),
across a confirmation that changes what later calls record, error steps, hostile argument texts, arguments
changed by the caller after the step, events due after a lean step, and holders of the log or the step list.
Also the flat-object pass of the argument nesting check (dict arguments, as the oracle gives them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coworkenv.runtime import AssistantTurn, Environment, ToolCall
from coworkenv.runtime.router import nesting_exceeds
from coworkenv.spec import TaskSpec, load_spec

EXAMPLES = Path(__file__).parent.parent / "examples"
QUOTE = load_spec(EXAMPLES / "external_quote_confirmation.yaml")
PHISHING = load_spec(EXAMPLES / "phishing_inbox_triage.yaml")
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
    """The same turn as a message dict, which never takes the lean path."""
    if not isinstance(turn, AssistantTurn):
        return turn
    calls = [{"id": c.id, "function": {"name": c.name, "arguments": c.arguments}} for c in turn.tool_calls]
    return {"role": "assistant", "content": turn.content, "tool_calls": calls}


def _records(env: Environment) -> tuple[Any, ...]:
    calls = [c.model_dump() for c in env.log.calls]
    steps = [(s.model_dump(), s.model_fields_set) for s in env.steps]
    return calls, steps, env.messages, env.grade().model_dump(), env.workspace.state_hash()


def _play(spec: TaskSpec, turns: list[Any], *, read_every_step: bool) -> tuple[Any, ...]:
    env = Environment(spec)
    seen = []
    for turn in turns:
        seen.append(env.step(turn).__dict__)
        if read_every_step:  # built now, at their own step, not later
            seen.append((env.steps[-1].model_dump(), [c.model_dump() for c in env.log.calls]))
    return _records(env), seen[::2] if read_every_step else seen


def _all_ways(spec: TaskSpec, turns: list[Any]) -> tuple[Any, ...]:
    late = _play(spec, turns, read_every_step=False)
    assert late == _play(spec, turns, read_every_step=True)
    assert late == _play(spec, [_as_dict(t) for t in turns], read_every_step=False)
    return late


def test_a_call_read_after_a_confirmation_keeps_the_confirmation_of_its_own_step() -> None:
    spec = _spec(QUOTE)
    turns = [_turn(0, "mail_search", '{"query": "quote"}'), ASK, _turn(2, "mail_search", '{"query": "Acme"}')]
    (calls, steps, *_), _ = _all_ways(spec, turns)
    assert [c["confirmed"] for c in calls] == [False, True]
    assert [s["tool_calls"] for s, _ in steps] == [1, 0, 1] and steps[1][0]["user"]["approved"]


@pytest.mark.parametrize("lean_first", [True, False])
def test_error_steps_and_hostile_argument_texts_record_what_the_general_path_records(lean_first: bool) -> None:
    turns: list[Any] = [_turn(i, name, args) for i, (name, args) in enumerate(HOSTILE)]
    if not lean_first:  # a general-path step (two calls) first: its records come before the lean ones
        two = AssistantTurn(tool_calls=[ToolCall(id="d0", name="mail_read", arguments="{}")] * 2)
        turns.insert(0, two)
    (calls, steps, *_), _ = _all_ways(_spec(PHISHING), turns)
    assert len(calls) == len(HOSTILE) + (0 if lean_first else 2) and len(steps) == len(turns)
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


def test_an_event_due_after_a_lean_step_is_noted_in_its_record() -> None:
    update = {"service": "mail", "collection": "messages", "op": "update", "id": "msg-502", "record": {"unread": False}}
    spec = _spec(PHISHING, events=[{"id": "late", "after_step": 2, "notify": "Mail arrived.", "mutations": [update]}])
    turns = [_turn(i, "mail_read", '{"message_id": "msg-501"}') for i in range(3)]
    (_, steps, messages, *_), _ = _all_ways(spec, turns)
    assert [s["events"] for s, _ in steps] == [[], ["late"], []]
    assert any("Mail arrived." in str(m.get("content")) for m in messages)


def test_holders_of_the_log_see_every_call_and_held_step_lists_hold_only_records() -> None:
    env = Environment(_spec(PHISHING))
    log = env.log
    held = env.steps
    for i in range(3):
        env.step(_turn(i, "mail_read", json.dumps({"message_id": f"msg-50{i + 1}"})))
    assert [c.call_id for c in log.calls] == ["c0", "c1", "c2"] and held == []
    steps = env.steps
    assert [s.index for s in steps] == [1, 2, 3] and all(a is b for a, b in zip(steps, env.steps, strict=True))
    env.step(_turn(3, "mail_read", '{"message_id": "msg-501"}'))
    assert len(steps) == 3 and len(env.steps) == 4  # a list read earlier is not extended with placeholders
    assert env.trajectory().steps == env.steps and len(env.trajectory().calls) == 4


def test_a_reset_drops_the_calls_not_yet_read() -> None:
    env = Environment(_spec(PHISHING))
    env.step(_turn(0, "mail_read", '{"message_id": "msg-501"}'))
    env.reset()
    assert env.log.calls == [] and env.steps == []
    env.step(_turn(1, "mail_read", '{"message_id": "msg-502"}'))
    assert [c.call_id for c in env.log.calls] == ["c1"] and [s.index for s in env.steps] == [1]


def test_in_a_spec_with_faults_only_the_faulted_tool_leaves_the_lean_path_and_its_fault_still_hits() -> None:
    """PHISHING fails mail_move's first call: reads run lean around it, and the move's count is its own."""
    env = Environment(PHISHING)
    read = _turn(0, "mail_read", '{"message_id": "msg-501"}')
    move = _turn(1, "mail_move", '{"message_id": "msg-501", "folder": "spam"}')
    assert env._lean_step(read) is not None and env._lean_step(move) is None
    turns = [read, read, move, read, move, read]
    (calls, *_), _ = _all_ways(PHISHING, turns)  # PHISHING as it is: its fault kept
    assert [(c["tool"], c["ok"], c["fault"]) for c in calls if c["tool"] == "mail_move"] == [
        ("mail_move", False, True),
        ("mail_move", True, False),
    ]


def _depth(value: Any) -> int:
    """How deep lists and dicts nest in ``value`` (the reference nesting_exceeds is checked against)."""
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
def test_the_flat_object_pass_of_the_nesting_check_agrees_with_the_depth(value: Any, limit: int) -> None:
    assert nesting_exceeds(value, limit) == (_depth(value) > limit)
