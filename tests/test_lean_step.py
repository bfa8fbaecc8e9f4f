"""The lean step's shortcuts give exactly what the plain code gives.

Each test tries to make one shortcut wrong: the exact-type argument table against the
tool's pydantic model (coercible types, bools for ints, ints for floats, extra and missing
keys, out-of-range pages, lists the tool could keep), the one-scan decoding of argument
text against ``json.loads`` (duplicate keys, trailing junk, non-ASCII, NaN), the records
built without validation against validated ones, and whole hostile steps with the table
switched off against the same steps with it on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ConfigDict, Field, create_model

from coworkenv.runtime import AssistantTurn, Environment, ToolCall
from coworkenv.runtime.records import call_records, set_tool_calls, step_record
from coworkenv.runtime.router import plain_object
from coworkenv.runtime.turn import parse_turn
from coworkenv.services.arguments import Arguments, compiled
from coworkenv.services.registry import ALL_TOOLS
from coworkenv.spec import TaskSpec
from coworkenv.spec.io import load_spec
from coworkenv.trajectory import StepRecord, ToolCallRecord
from minispec import call

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.yaml"))
TOOLS = sorted(ALL_TOOLS)


def _literals() -> list[str]:
    """Every literal value some tool argument takes (so drawn arguments often are valid ones)."""
    out: set[str] = set()
    for info in ALL_TOOLS.values():
        for field in info.args_model.model_fields.values():
            for part in (field.annotation, *get_args(field.annotation)):
                out.update(a for a in get_args(part) if isinstance(a, str))
    return sorted(out)


VALUES = st.one_of(
    st.text(max_size=6),
    st.sampled_from(_literals()),
    st.none(),
    st.booleans(),
    st.integers(-3, 60),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.text(max_size=4), max_size=3),
    st.lists(st.one_of(st.text(max_size=3), st.integers(), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@st.composite
def tool_args(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(TOOLS))
    fields = list(ALL_TOOLS[name].args_model.model_fields)
    keys = draw(st.lists(st.sampled_from([*fields, "extra", "Query"]), unique=True, max_size=len(fields) + 1))
    return name, {k: draw(VALUES) for k in keys}


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (``1 == 1.0 == True`` would hide a coercion)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b or (a != a and b != b)  # NaN equals itself here


@settings(max_examples=400, deadline=None)
@given(drawn=tool_args())
def test_the_table_accepts_only_what_the_model_gives_unchanged(drawn: tuple[str, dict[str, Any]]) -> None:
    name, args = drawn
    model = ALL_TOOLS[name].args_model
    fast = compiled(model).fast(args)
    if fast is None:
        return  # the model decides, with its own errors
    validated = vars(model.model_validate(args))  # the table never accepts what the model refuses
    for key, value in validated.items():
        given_value = fast[key] if key in fast else model.model_fields[key].default
        assert _same(given_value, value), (name, key, given_value, value)
        if isinstance(value, list):
            assert given_value is not args[key]  # copied, as validation copies: the tool cannot keep the caller's


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("mail_search", {"query": "x", "limit": True}),  # a bool for an int: the model makes it 1
        ("mail_search", {"query": "x", "limit": 3.0}),  # a whole float for an int
        ("mail_search", {"query": "x", "limit": 51}),  # past the page size
        ("mail_search", {"query": "x", "limit": 0}),
        ("mail_search", {"query": 5}),
        ("mail_search", {"query": "x", "extra": 1}),
        ("mail_read", {}),  # the required id missing
        ("expenses_create_expense", {"employee": "a@corp.io", "amount": 42, "category": "meals", "date": "x"}),
        ("expenses_create_expense", {"employee": "a@corp.io", "amount": True, "category": "meals", "date": "x"}),
        ("calendar_create_event", {"title": "t", "start": "s", "end": "e", "attendees": ("a",)}),
        ("tickets_update", {"ticket_id": "t", "priority": "URGENT"}),
    ],
)
def test_coercible_or_wrong_arguments_go_to_the_model(name: str, args: dict[str, Any]) -> None:
    assert compiled(ALL_TOOLS[name].args_model).fast(args) is None


def test_plain_arguments_take_the_table() -> None:
    """The shortcut is really taken for the usual calls (else the other tests prove nothing)."""
    cases = {
        "mail_read": {"message_id": "m1"},
        "mail_search": {"query": "q", "limit": 5, "offset": 0, "unread": None},
        "expenses_create_expense": {
            "employee": "a@b.io",
            "amount": 4.5,
            "category": "meals",
            "description": "Lunch",
            "date": "2025-03-01",
        },
        "calendar_create_event": {"title": "t", "start": "s", "end": "e", "attendees": ["a@b.io"]},
    }
    for name, args in cases.items():
        assert compiled(ALL_TOOLS[name].args_model).fast(args) is not None, name
    attendees = cases["calendar_create_event"]["attendees"]
    kwargs = compiled(ALL_TOOLS["calendar_create_event"].args_model).fast(cases["calendar_create_event"])
    assert kwargs is not None and kwargs["attendees"] == attendees and kwargs["attendees"] is not attendees


def test_the_table_holds_types_exactly() -> None:
    """A bool is an int to isinstance, and an int passes for a float: both go to the model, which converts them."""
    model = create_model("m", __config__=ConfigDict(extra="forbid"), n=(int, 0), x=(float, 0.0), s=(str, ""))
    table = compiled(model)
    assert table.fast({"n": 1, "x": 1.0, "s": "a"}) == {"n": 1, "x": 1.0, "s": "a"}
    for args in ({"n": True}, {"x": 1}, {"x": False}):
        assert table.fast(args) is None
        (key, value), *_ = args.items()
        assert not _same(getattr(model.model_validate(args), key), value)  # the model converts: passing it was wrong
    assert table.fast({"s": b"a"}) is None


def test_models_the_table_cannot_judge_always_go_to_the_model() -> None:
    plain = ConfigDict(extra="forbid")
    models = [
        create_model("a", __config__=plain, n=(int, Field(0, alias="N"))),  # an alias (declared services)
        create_model("b", __config__=ConfigDict(extra="ignore"), n=(int, 0)),  # extra keys dropped, not refused
        create_model("c", __config__=plain, n=(dict[str, int], {})),  # a type the table does not know
        create_model("d", __config__=plain, n=(list[str], ["x"])),  # a mutable default the model would copy
        create_model("e", __config__=ConfigDict(extra="forbid", strict=True), n=(int, 0)),
    ]
    for model in models:
        assert not compiled(model).known, model.__name__
        assert compiled(model).fast({}) is None


@pytest.mark.parametrize(
    "text",
    [
        '{"message_id": "m1"}',
        '{"message_id": "m1", "message_id": "m2"}',  # duplicate keys: the last wins, as in json.loads
        '{"message_id": "m1"} {"x": 1}',
        '{"message_id": "m1"}}',
        '{"message_id": "m1"} ',
        ' {"message_id": "m1"}',
        '{"message_id": "naïve ✓ \\u00e9 \\ud800"}',
        '{"message_id": NaN}',
        '{"message_id": "m1",}',
        "{}",
        "{",
        "}",
        '{"a": ' + "1" * 5000 + "}",
        "[1]",
    ],
)
def test_one_scan_decoding_matches_json_loads_or_declines(text: str) -> None:
    """The one-scan decoding gives what ``json.loads`` gives, or nothing (the long path decides, errors included)."""
    decoded = plain_object(text)
    if decoded is None:
        return
    expected = json.loads(text)
    assert _same(decoded, expected) or json.dumps(decoded) == json.dumps(expected)


def test_built_records_are_the_validated_ones() -> None:
    args = {"to": ["a@corp.io"], "n": 1.5}
    built, faulted = call_records(
        [
            (3, "c1", "mail_send", dict(args), True, "write", None, False, True),
            (4, "c2", "x", None, False, None, "e", True, False),
        ]
    )
    plain = ToolCallRecord(
        step=3,
        call_id="c1",
        tool="mail_send",
        args=args,
        ok=True,
        kind="write",
        error=None,
        fault=False,
        confirmed=True,
    )
    assert built == plain
    assert built.model_fields_set == plain.model_fields_set
    assert built.model_dump_json() == plain.model_dump_json()
    args["to"] = ["b@corp.io"]  # the caller's dict changes later: the record keeps its own
    assert built.args == {"to": ["a@corp.io"], "n": 1.5}
    other = ToolCallRecord(step=4, call_id="c2", tool="x", args=None, ok=False, kind=None, error="e", fault=True)
    other.confirmed = False
    assert faulted == other and faulted.model_fields_set == other.model_fields_set
    assert faulted.model_dump_json() == other.model_dump_json()
    first, second = step_record(1, False), step_record(2, True)
    assert first == StepRecord(index=1, malformed=False)
    assert first.model_fields_set == StepRecord(index=1, malformed=False).model_fields_set
    first.events.append("e1")  # fresh default lists, never shared between steps
    assert second.events == [] and second.violations == []
    set_tool_calls(second, 2)
    reference = StepRecord(index=2, malformed=True)
    reference.tool_calls = 2
    assert second == reference
    assert second.model_fields_set == reference.model_fields_set
    assert second.model_dump_json() == reference.model_dump_json()


@pytest.mark.parametrize(
    "raw",
    [
        {"content": "hi"},
        {"content": None, "tool_calls": [{"id": "x", "function": {"name": "mail_read", "arguments": "{}"}}]},
        {"tool_calls": [{"function": {"name": "mail_read", "arguments": {"message_id": "é"}}}]},
        {"tool_calls": [{"name": "mail_read", "arguments": None}, {"function": {"name": ""}}, 5]},
    ],
)
def test_turns_from_dicts_equal_validated_turns(raw: dict[str, Any]) -> None:
    turn, _ = parse_turn(raw, 4)
    again = AssistantTurn(
        content=turn.content,
        tool_calls=[ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in turn.tool_calls],
    )
    assert turn == again
    assert turn.model_fields_set == again.model_fields_set
    assert [c.model_fields_set for c in turn.tool_calls] == [c.model_fields_set for c in again.tool_calls]
    assert turn.model_dump_json() == again.model_dump_json()


def test_a_list_argument_is_not_shared_with_the_stored_record() -> None:
    """calendar_create_event keeps its attendees: the call record's list and the stored event's are not one."""
    spec = next(s for s in map(load_spec, EXAMPLES) if "calendar_create_event" in _tools(s))
    env = Environment(spec)
    args = {"title": "Sync", "start": "2025-03-12T10:00", "end": "2025-03-12T10:30", "attendees": ["a@corp.io"]}
    env.step(call("calendar_create_event", args))
    record = env.log.calls[-1]
    assert record.ok, record.error
    before = env.workspace.state_hash()
    assert record.args is not None
    record.args["attendees"].append("intruder@corp.io")
    assert env.workspace.state_hash() == before


def _tools(spec: TaskSpec) -> list[str]:
    return [t["function"]["name"] for t in Environment(spec).router.schemas()]


@st.composite
def hostile_turns(draw: st.DrawFn) -> tuple[int, list[Any]]:
    example = draw(st.integers(0, len(EXAMPLES) - 1))
    turns = []
    for i in range(draw(st.integers(1, 4))):
        name, args = draw(tool_args())
        text = draw(st.sampled_from(["json", "object", "spaced"]))
        arguments = {"json": json.dumps(args), "spaced": f" {json.dumps(args)} ", "object": args}[text]
        turns.append({"tool_calls": [{"id": f"c{i}", "function": {"name": name, "arguments": arguments}}]})
    return example, turns


def _play(spec: TaskSpec, turns: list[Any]) -> tuple[list[Any], str, Any]:
    env = Environment(spec)
    contents = [[m.get("content") for m in env.step(t).messages] for t in turns]
    calls = [c.model_dump() for c in env.log.calls]
    return contents, env.workspace.state_hash(), (calls, env.grade().model_dump(), [s.model_dump() for s in env.steps])


@settings(max_examples=60, deadline=None)
@given(drawn=hostile_turns())
def test_hostile_steps_are_the_same_with_the_table_off(drawn: tuple[int, list[Any]]) -> None:
    example, turns = drawn
    spec = load_spec(EXAMPLES[example])
    lean = _play(spec, turns)
    plain_fast = Arguments.fast
    try:
        Arguments.fast = lambda self, args: None  # type: ignore[method-assign]  # every call through the model
        plain = _play(spec, turns)
    finally:
        Arguments.fast = plain_fast  # type: ignore[method-assign]
    assert lean == plain
