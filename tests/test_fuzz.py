"""Fuzzing: nothing a model sends makes env.step raise; nothing a generator writes makes spec loading raise
anything but SpecError; no expression makes the evaluator raise anything but ExprError."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coworkenv.expr import ExprError, evaluate
from coworkenv.rollout.store import Encoded
from coworkenv.rollout.worker import EpisodeTask, episode_record
from coworkenv.runtime import AssistantTurn, Environment, ToolCall
from coworkenv.services import ALL_TOOLS
from coworkenv.spec import SpecError, TaskSpec, spec_from_data
from minispec import tiny_data
from test_hostile_input import ARGUMENT_TEXTS, CONTENTS, WORKPLACE

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ENV = Environment(WORKPLACE)  # policies over state, every service; reset before every example

scalars = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats(allow_nan=True) | st.text(max_size=30)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
plausible = st.sampled_from(
    [
        "msg-201",
        "exp-101",
        "exp-109",
        "con-03",
        "nope",
        "",
        "tom.okafor@northwind.io",
        "x@evil.example",
        "meals",
        "2025-03-06",
        "2025-13-40",
        "archive",
        "receipt",
        "inv-109",
        "inv-104",
        "ven-10",
        "po-108",
        "dana.whitfield@northwind.io",
        "lv-01",
        "rot-03",
        "swp-1",
        "wei.zhang@northwind.io",
        "2025-03-24T09:00",
        "platform",
        "vacation",
        "fld-01",
        "file-01",
        "editor",
        "maya.lind@kestrelcreative.example",
        642.8,
        600,
        -1,
        0,
        True,
        [],
        ["tom.okafor@northwind.io"],
    ]
)
exposed = sorted(ENV.router.tools)
tool_names = st.one_of(
    st.sampled_from(exposed), st.sampled_from(exposed), st.sampled_from(sorted(ALL_TOOLS)), st.text(max_size=24)
)


@st.composite
def plausible_args(draw: st.DrawFn, name: str) -> dict[str, Any]:
    """Arguments with the tool's own parameter names, filled with random or plausible values."""
    info = ALL_TOOLS.get(name)
    params = list(info.args_model.model_fields) if info else []
    if params and draw(st.booleans()):  # every parameter, so some calls get through validation
        keys = params
    else:
        keys = draw(st.lists(st.sampled_from(params) if params else st.text(max_size=8), max_size=5))
    return {k: draw(plausible | plausible | plausible | json_values) for k in keys}


far_off_days = st.builds(
    lambda n, unit, tail: f"Should I cancel the meetings in {n} {unit}{tail}",
    st.integers(0, 10**12),
    st.sampled_from(["days", "weeks", "day"]),
    st.sampled_from(["?", " ago?", ", tomorrow or next Friday?"]),
)
hostile_texts = st.sampled_from(sorted(ARGUMENT_TEXTS.values()))
"""5,000-digit numbers, 100k-deep nesting, lone surrogates, … (see test_hostile_input.py)."""
contents = st.text(max_size=60) | st.sampled_from(sorted(CONTENTS.values())) | st.just("\ud800") | far_off_days
"""Random text, hostile texts, and far-off days that the user's date reading must take as plain text."""


@st.composite
def arguments(draw: st.DrawFn, name: str) -> Any:
    kind = draw(st.sampled_from(["dict", "dict", "json", "json", "text", "value", "hostile"]))
    if kind == "hostile":
        return draw(hostile_texts)
    if kind == "dict":
        return draw(plausible_args(name))
    if kind == "json":
        return json.dumps(draw(plausible_args(name) | json_values))
    if kind == "text":
        return draw(st.text(max_size=40))
    return draw(json_values)


@st.composite
def tool_call(draw: st.DrawFn) -> Any:
    name = draw(tool_names)
    args = draw(arguments(name))
    shape = draw(st.sampled_from(["openai", "openai", "flat", "object", "junk"]))
    if shape == "openai":
        return {
            "id": draw(st.text(max_size=6) | st.integers()),
            "type": "function",
            "function": {"name": name, "arguments": args},
        }
    if shape == "flat":
        return {"name": name, "arguments": args}
    if shape == "object":
        return ToolCall(id="t", name=name or "x", arguments=args if isinstance(args, str | dict) else "{}")
    return draw(json_values)


@st.composite
def turns(draw: st.DrawFn) -> Any:
    shape = draw(st.sampled_from(["message", "turn", "text", "junk"]))
    if shape == "message":
        msg: dict[str, Any] = {"role": "assistant"}
        if draw(st.booleans()):
            msg["content"] = draw(contents | json_values)
        if draw(st.integers(0, 3)):
            calls = draw(st.lists(tool_call(), min_size=1, max_size=3))
            msg["tool_calls"] = [c.model_dump() if isinstance(c, ToolCall) else c for c in calls]
        elif draw(st.booleans()):
            msg["tool_calls"] = draw(json_values)
        return msg
    if shape == "turn":
        calls = [c for c in draw(st.lists(tool_call(), max_size=3)) if isinstance(c, ToolCall)]
        return AssistantTurn(content=draw(st.none() | contents), tool_calls=calls)
    if shape == "text":
        return draw(contents)
    return draw(json_values)


@SETTINGS
@given(st.lists(turns(), min_size=1, max_size=5))
def test_step_never_raises(sequence: list[Any]) -> None:
    obs = ENV.reset()
    taken = 0
    for turn in sequence:
        obs = ENV.step(turn)
        taken += 1
        assert all(isinstance(m.get("content"), str) for m in obs.messages)
        if obs.done:
            break
    grade = ENV.grade()
    assert 0.0 <= grade.score <= 1.0
    ENV.workspace.state_hash()
    trajectory = ENV.trajectory()
    assistant = [m for m in trajectory.messages if m["role"] == "assistant"]
    assert len(trajectory.steps) == len(assistant) == taken  # every step applied whole: its turn, its count
    record = episode_record(EpisodeTask({"id": "fuzz"}, 0, 0), "fuzz", trajectory, None)
    assert json.loads(record.model_dump_json())["trajectory"]["spec_id"] == trajectory.spec_id  # it serialises
    line = Encoded.of(record).line
    assert json.loads(line.encode("utf-8"))["status"] in ("ok", "error")  # the store writes UTF-8


def _mutate(data: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    """Replace (or delete, for the sentinel) the value at ``path`` inside ``data``."""
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE and isinstance(node, dict):
        node.pop(path[-1], None)
    elif value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


_DELETE = object()
PATHS: list[list[Any]] = [
    ["id"],
    ["title"],
    ["services"],
    ["services", "mail"],
    ["services", "mail", "messages"],
    ["services", "mail", "messages", 0],
    ["services", "mail", "messages", 0, "id"],
    ["user"],
    ["user", "opening"],
    ["checks"],
    ["checks", 0],
    ["checks", 0, "kind"],
    ["checks", 0, "where"],
    ["reference"],
    ["reference", 0],
    ["reference", 0, "args"],
    ["max_turns"],
    ["capabilities"],
    ["provenance"],
]


@SETTINGS
@given(st.sampled_from(PATHS), json_values | st.just(_DELETE))
def test_mutated_specs_validate_or_raise_spec_error(path: list[Any], value: Any) -> None:
    data = _mutate(tiny_data(), path, value)
    try:
        assert isinstance(spec_from_data(data, "fuzz"), TaskSpec)
    except SpecError as exc:
        assert exc.path == "fuzz" and exc.problems


@SETTINGS
@given(json_values | st.dictionaries(st.sampled_from(list(tiny_data())), json_values, max_size=8))
def test_random_documents_validate_or_raise_spec_error(data: Any) -> None:
    try:
        spec_from_data(data, "fuzz")
    except SpecError as exc:
        assert exc.problems


expr_tokens = st.sampled_from(
    [
        "r",
        "args",
        "state",
        ".",
        "[",
        "]",
        "[*]",
        "(",
        ")",
        ",",
        "and",
        "or",
        "not",
        "in",
        "==",
        "<",
        ">=",
        "+",
        "-",
        "*",
        "/",
        "%",
        "1",
        "0",
        "2.5",
        "'x'",
        "true",
        "null",
        "len",
        "sum",
        "max",
        "round",
        "join",
        "contains",
        "amount",
        "to",
        "id",
    ]
)


@SETTINGS
@given(st.lists(expr_tokens, max_size=12).map(" ".join) | st.text(max_size=30), json_values)
def test_expressions_raise_only_expr_error(src: str, value: Any) -> None:
    ctx = {"r": {"amount": value, "to": [value, "a@b.c"], "id": value}, "args": value, "state": {"x": value}}
    with contextlib.suppress(ExprError):
        evaluate(src, ctx)
