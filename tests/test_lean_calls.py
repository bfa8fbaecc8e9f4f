"""The single-call step, the record table for inserts and the kept texts of stored records give exactly what the
general code gives.

Each test tries to make one shortcut wrong: the one-call step against the general step (the same turns given as
message dicts never take it), including hostile arguments and tools a rule, event, fault or stage guards; new
records built from the exact-type table against pydantic's validate-and-dump (wrong and coercible types, extra
and missing keys, dates a validator would normalise); and a result's JSON kept only for records found stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coworkenv.runtime import AssistantTurn, Environment, ToolCall
from coworkenv.runtime.json_encoding import StoredTexts
from coworkenv.services.arguments import inserted_record
from coworkenv.services.registry import SERVICES
from coworkenv.spec import TaskSpec
from coworkenv.spec.io import load_spec
from test_lean_step import EXAMPLES, VALUES, tool_args

MODELS = [(name, coll, model) for name, cls in SERVICES.items() for coll, model in cls.records.items()]
PHISHING = load_spec(Path(__file__).parent.parent / "examples" / "phishing_inbox_triage.yaml")


def _pydantic(model: Any, row: dict[str, Any]) -> dict[str, Any]:
    return model.__pydantic_serializer__.to_python(model.__pydantic_validator__.validate_python(row), mode="json")  # type: ignore[no-any-return]


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down, and with the keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b or (a != a and b != b)


@st.composite
def rows(draw: st.DrawFn) -> tuple[Any, dict[str, Any]]:
    _, _, model = draw(st.sampled_from(MODELS))
    fields = list(model.model_fields)
    keys = draw(st.lists(st.sampled_from([*fields, "extra"]), unique=True, max_size=len(fields) + 1))
    dates = st.sampled_from(["2025-03-01", "2025-3-1", "2025-03-01T09:00", "2025-03-01T09:00:00", "a@b.io", "x y"])
    row = {k: draw(st.one_of(VALUES, dates)) for k in keys}
    if draw(st.booleans()):  # often a complete row of the right types, so the table is really taken
        example = {n: _example(f.annotation) for n, f in model.model_fields.items() if f.is_required()}
        row = {**example, **row} if draw(st.booleans()) else example
    return model, row


def _example(annotation: Any) -> Any:
    text = str(annotation)
    if "Literal" in text:
        return annotation.__args__[0]
    return {"<class 'float'>": 1.5, "<class 'int'>": 2, "<class 'bool'>": True}.get(text, "2025-03-01")


@settings(max_examples=500, deadline=None)
@given(drawn=rows())
def test_inserted_records_are_what_pydantic_makes(drawn: tuple[Any, dict[str, Any]]) -> None:
    model, row = drawn
    built = inserted_record(model, row)
    if built is None:
        return  # the model decides, with its own errors
    assert _same(built, _pydantic(model, row)), (model.__name__, row)
    for key, value in row.items():
        if isinstance(value, list):
            assert built[key] is not value  # copied, as validation copies


def test_the_table_is_taken_for_plain_rows_and_refuses_what_the_model_changes() -> None:
    leave = SERVICES["hr"].records["leave"]
    row = {"id": "lv-9", "employee": "e@corp.io", "kind": "vacation", "start": "2026-01-05", "end": "2026-01-06"}
    assert inserted_record(leave, {**row, "days": 2.0}) is not None
    for bad in (
        {"days": 2},  # an int for a float: the model converts it
        {"days": True},
        {"days": 2.0, "start": "2026-1-5"},  # a date the validator would refuse
        {"days": 2.0, "extra": 1},
        {},  # days missing
    ):
        assert inserted_record(leave, {**row, **bad}) is None, bad
    shift = SERVICES["hr"].records["rota"]
    normalised = {"id": "r", "rota": "it", "person": "p", "start": "2025-03-01T09:00:00", "end": "2025-03-01T10:00"}
    assert inserted_record(shift, normalised) is None  # the validator rewrites the time: only the model can say
    assert SERVICES["hr"].validate_record("rota", normalised)["start"] == "2025-03-01T09:00"
    events = SERVICES["calendar"].records["events"]
    assert inserted_record(events, {"id": "e", "title": "t", "start": "s", "end": "e"}) is None  # own validators


def test_kept_texts_are_only_those_of_stored_records() -> None:
    encodes: list[Any] = []

    def encode(value: Any) -> str:
        encodes.append(value)
        return json.dumps(value)

    texts = StoredTexts(encode, limit=2)
    stored = {"id": "r1", "x": 1}
    tables = {"things": {"r1": stored}}
    assert texts.text(stored, tables) == texts.text(stored, tables) == '{"id": "r1", "x": 1}'
    assert encodes == [stored]  # the second read reused the text
    built = {"id": "r1", "x": 1}  # equal to the stored record, but a tool's own dict: it may change
    texts.text(built, tables)
    built["x"] = 2
    assert texts.text(built, tables) == '{"id": "r1", "x": 2}'
    for value in ([stored], "r1", {"id": ["r1"]}, {"x": 1}):
        assert texts.text(value, tables) == json.dumps(value)
    for i in range(3):  # past the limit the kept texts are dropped, never wrong
        rec = {"id": f"n{i}"}
        tables["things"][f"n{i}"] = rec
        assert texts.text(rec, tables) == json.dumps(rec)
    assert len(texts._texts) <= 2


def _as_dict(turn: AssistantTurn) -> dict[str, Any]:
    calls = [{"id": c.id, "function": {"name": c.name, "arguments": c.arguments}} for c in turn.tool_calls]
    return {"role": "assistant", "content": turn.content, "tool_calls": calls}


def _play(spec: TaskSpec, turns: list[Any]) -> Any:
    env = Environment(spec)
    seen = [env.step(t).__dict__ for t in turns]
    calls = [c.model_dump() for c in env.log.calls]
    steps = [(s.model_dump(), s.model_fields_set) for s in env.steps]
    return seen, env.messages, calls, steps, env.workspace.state_hash(), env.grade().model_dump(), env.tool_counts


@settings(max_examples=80, deadline=None)
@given(example=st.integers(0, len(EXAMPLES) - 1), drawn=st.lists(tool_args(), min_size=1, max_size=5))
def test_single_call_turns_step_as_the_general_path(example: int, drawn: list[tuple[str, dict[str, Any]]]) -> None:
    """The same turns as AssistantTurns (the single-call path) and as message dicts (never on it)."""
    spec = load_spec(EXAMPLES[example])
    turns = [
        AssistantTurn(tool_calls=[ToolCall(id=f"c{i}", name=name, arguments=json.dumps(args))])
        for i, (name, args) in enumerate(drawn)
    ]
    assert _play(spec, turns) == _play(spec, [_as_dict(t) for t in turns])


def test_arguments_given_as_an_object_are_copied_into_the_record() -> None:
    env = Environment(PHISHING)
    args = {"message_id": "msg-501"}
    env.step(AssistantTurn(tool_calls=[ToolCall(id="c", name="mail_read", arguments=args)]))
    args["message_id"] = "changed"
    assert env.log.calls[-1].args == {"message_id": "msg-501"}
    assert env.messages[-2]["tool_calls"][0]["function"]["arguments"] == '{"message_id": "msg-501"}'


class _Call(ToolCall):
    pass


@pytest.mark.parametrize(
    ("case", "tool"),
    [
        ("faults", "mail_move"),  # the example schedules a fault on its first call
        ("rule", "mail_send"),
        ("event", "mail_read"),
        ("fault_rate", "mail_read"),
        ("budget", "mail_read"),
        ("two_calls", "mail_read"),
        ("subclass", "mail_read"),
        ("stages", "mail_read"),
    ],
)
def test_calls_with_more_to_do_take_the_general_path(case: str, tool: str) -> None:
    data = PHISHING.model_dump(exclude_none=True)
    if case != "faults":
        data["faults"] = []
    if case == "event":
        update = {"service": "mail", "collection": "messages", "op": "update", "id": "msg-502"}
        update["record"] = {"unread": False}
        data["events"] = [{"id": "ev", "on_tool": tool, "notify": "x", "mutations": [update]}]
    if case == "stages":
        hiring = load_spec(Path(__file__).parent.parent / "examples" / "hiring_loop_three_days.yaml")
        data = hiring.model_dump(exclude_none=True)
        tool = next(iter(Environment(hiring).router.tools))
    env = Environment(TaskSpec.model_validate(data), fault_rate=0.5 if case == "fault_rate" else 0.0)
    if case == "budget":
        env.max_tool_calls = 0
    call = (_Call if case == "subclass" else ToolCall)(id="c", name=tool, arguments="{}")
    turn = AssistantTurn(tool_calls=[call, call] if case == "two_calls" else [call])
    assert env._lean_step(turn) is None
    assert not env.steps  # nothing done before deciding


def test_a_plain_call_takes_the_single_call_path() -> None:
    """Else the comparisons above prove nothing."""
    env = Environment(TaskSpec.model_validate({**PHISHING.model_dump(exclude_none=True), "faults": []}))
    obs = env._lean_step(AssistantTurn(tool_calls=[ToolCall(id="c", name="mail_read", arguments="{}")]))
    assert obs is not None and obs.messages[0]["role"] == "tool" and env.steps[-1].tool_calls == 1
