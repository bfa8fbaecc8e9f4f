"""Store lines joined from separately encoded parts (the record's typed text, the messages, the tool menu's bytes
encoded once) must be the full dump byte for byte, whatever width each part's text has, and a call record whose
fields are not exactly their declared types must fall back to the full dump."""

from __future__ import annotations

import copy
import enum
import math
from typing import Any

import pytest

from coworkenv.agents import OracleTeacher
from coworkenv.bank.sources import load_specs
from coworkenv.rollout.lines import ToolMenu, _fast_line, record_bytes
from coworkenv.rollout.worker import EpisodeTask, episode_record
from coworkenv.runtime import Environment, run_episode
from coworkenv.trajectory import EpisodeRecord
from line_helpers import assert_full_dump_fallback, full_dump
from test_rollout_shortcuts import TESTS

EXAMPLES = load_specs(TESTS.parent / "examples")


class Level(enum.IntEnum):
    HIGH = 1


def _record() -> tuple[EpisodeRecord, ToolMenu, Environment]:
    spec = next(s for s in EXAMPLES if not s.stages)
    env = Environment(spec)
    traj = run_episode(env, OracleTeacher())
    menu = ToolMenu(env.router.schemas())
    return episode_record(EpisodeTask({"id": spec.id}, 0, 0), "oracle", traj, None), menu, env


WIDE = {"latin": "café", "bmp": "— 東京", "astral": "🚀 𝔘"}


@pytest.mark.parametrize("menu_text", ["", *WIDE])
@pytest.mark.parametrize("message_text", ["", *WIDE])
def test_parts_of_any_width_join_into_the_full_dump(menu_text: str, message_text: str) -> None:
    record, _, env = _record()
    traj = record.trajectory
    assert traj is not None
    schemas = copy.deepcopy(env.router.schemas())  # the environment's own are shared by every one of its spec
    if menu_text:  # the menu's own objects, one of them describing itself in wider text
        schemas[0]["function"]["description"] += " " + WIDE[menu_text]
    if message_text:
        traj.messages.append({"role": "user", "content": f"Thanks {WIDE[message_text]}"})
    menu = ToolMenu(schemas)
    traj.tools = list(schemas)
    line = _fast_line(record, menu)
    assert line is not None and line == full_dump(record) == record_bytes(record, menu)


def test_a_menu_with_a_lone_surrogate_writes_the_escaped_full_dump() -> None:
    record, _, env = _record()
    traj = record.trajectory
    assert traj is not None
    schemas = copy.deepcopy(env.router.schemas())  # the environment's own are shared by every one of its spec
    schemas[0]["function"]["description"] += " \ud800"
    menu = ToolMenu(schemas)
    traj.tools = list(schemas)
    assert menu.data is None and _fast_line(record, menu) is None
    assert record_bytes(record, menu) == full_dump(record) and b"\\ud800" in full_dump(record)


def _spoil_call(record: EpisodeRecord, how: str) -> None:
    assert record.trajectory is not None
    call = record.trajectory.calls[0].__dict__
    if how == "bool_step":
        call["step"] = True
    elif how == "str_subclass_kind":
        call["kind"] = type("Kind", (str,), {})("read")
    elif how == "int_error":
        call["error"] = 503
    elif how == "int_ok":
        call["ok"] = 1
    elif how == "none_call_id":
        call["call_id"] = None
    elif how == "enum_argument":
        call["args"] = {"level": Level.HIGH}
    elif how == "infinite_nested_argument":
        call["args"] = {"filter": {"amount": math.inf}}
    elif how == "int_key_argument":
        call["args"] = {1: "one"}


@pytest.mark.parametrize(
    "how",
    [
        "bool_step",
        "str_subclass_kind",
        "int_error",
        "int_ok",
        "none_call_id",
        "enum_argument",
        "infinite_nested_argument",
        "int_key_argument",
    ],
)
def test_a_call_record_of_unusual_types_gets_the_full_dump(how: str) -> None:
    record, menu, _ = _record()
    _spoil_call(record, how)
    assert_full_dump_fallback(record, menu)


def test_plain_nested_arguments_take_the_typed_path() -> None:
    record, menu, _ = _record()
    assert record.trajectory is not None
    args: dict[str, Any] = {"q": "x", "n": 2, "f": 1.5, "b": False, "z": None, "l": [1, {"k": "v"}], "d": {"e": []}}
    record.trajectory.calls[0].__dict__["args"] = args
    line = _fast_line(record, menu)
    assert line is not None and line == full_dump(record)
