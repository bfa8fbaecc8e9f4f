"""The exact-type argument and record tables (:mod:`coworkenv.services.arguments`) give exactly what pydantic gives.

Each test tries to make the tables wrong: against the tool's argument model (coercible types, bools for ints,
ints for floats, extra and missing keys, out-of-range pages, lists the tool could keep), new records against
pydantic's validate-and-dump (dates a validator would normalise), and whole hostile steps with the table switched
off against the same steps with it on. Also: a call's record and the stored records never share the caller's lists.
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
from coworkenv.services.arguments import Arguments, compiled, inserted_record
from coworkenv.services.registry import ALL_TOOLS, SERVICES
from coworkenv.spec import TaskSpec
from coworkenv.spec.io import load_spec
from minispec import call

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.yaml"))
TOOLS = sorted(ALL_TOOLS)
MODELS = [(name, coll, model) for name, cls in SERVICES.items() for coll, model in cls.records.items()]
PHISHING = load_spec(Path(__file__).parent.parent / "examples" / "phishing_inbox_triage.yaml")


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


def _pydantic(model: Any, row: dict[str, Any]) -> dict[str, Any]:
    return model.__pydantic_serializer__.to_python(model.__pydantic_validator__.validate_python(row), mode="json")  # type: ignore[no-any-return]


def _same_ordered(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down, and with the keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same_ordered(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_ordered(x, y) for x, y in zip(a, b, strict=True))
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
    assert _same_ordered(built, _pydantic(model, row)), (model.__name__, row)
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


def test_arguments_given_as_an_object_are_copied_into_the_record() -> None:
    env = Environment(PHISHING)
    args = {"message_id": "msg-501"}
    env.step(AssistantTurn(tool_calls=[ToolCall(id="c", name="mail_read", arguments=args)]))
    args["message_id"] = "changed"
    assert env.log.calls[-1].args == {"message_id": "msg-501"}
    assert env.messages[-2]["tool_calls"][0]["function"]["arguments"] == '{"message_id": "msg-501"}'
