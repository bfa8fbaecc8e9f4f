"""The shortcuts on the runtime's hot paths give exactly what the plain code gives.

Each test tries to make one shortcut wrong: a cached tool menu or prompt that a caller mutates, a
schema cache fooled by a look-alike tool, the nesting limit on argument text and objects, cached
time parsing fed junk, the Protocol test
``actor_for`` no longer runs, and the alarm handler swap.
"""

from __future__ import annotations

import json
import signal
import time
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coworkenv.agents import OracleTeacher
from coworkenv.grading.answers import prompt_of
from coworkenv.rollout.deadline import Deadline, EpisodeTimeout
from coworkenv.runtime import Environment
from coworkenv.runtime.policy import TaskPolicy, actor_for
from coworkenv.runtime.router import MAX_ARG_DEPTH, exposed_tools
from coworkenv.services.base import ToolError, check_datetime
from coworkenv.services.calendar import _hhmm
from coworkenv.services.registry import ALL_TOOLS
from coworkenv.spec.checks import Prompt
from coworkenv.spec.declared import ServiceDecl
from coworkenv.spec.models import AnswerNumber
from coworkenv.values import numbers_in
from minispec import tiny_spec
from test_declared_service import BOOKS


def test_tool_menu_cache_hands_out_copies() -> None:
    first = exposed_tools(["mail", "calendar"], None)
    assert first == {n: i for n, i in ALL_TOOLS.items() if i.service in ("mail", "calendar")}
    first.clear()
    assert exposed_tools(["mail", "calendar"], None)  # the cached menu was not emptied
    listed = exposed_tools(["mail"], ["mail_read", "mail_search"])
    assert list(listed) == ["mail_read", "mail_search"]
    with pytest.raises(KeyError):
        exposed_tools(["mail"], ["mail_nope"])


def test_schema_cache_tells_look_alike_tools_apart() -> None:
    real = ALL_TOOLS["mail_read"]
    assert real.schema() is real.schema()
    twin = replace(real, description="a different description")
    assert twin.schema()["function"]["description"] == "a different description"
    assert real.schema()["function"]["description"] == real.description
    assert ALL_TOOLS["mail_read"].schema() is real.schema()


class _Task:
    name = "task"

    def for_task(self, spec: Any) -> str:
        return "run"


class _Plain:
    name = "plain"

    def act(self, messages: Any, tools: Any) -> None:
        return None


class _NoName:
    def for_task(self, spec: Any) -> str:
        return "run"


class _Disabled:
    name = "disabled"
    for_task = None


@pytest.mark.parametrize("policy", [_Task(), _Plain(), _NoName(), _Disabled(), OracleTeacher()])
def test_actor_for_agrees_with_the_protocol_check(policy: Any) -> None:
    spec = tiny_spec()
    expected = policy.for_task(spec) if isinstance(policy, TaskPolicy) else policy
    got = actor_for(policy, spec)
    assert type(got) is type(expected)
    assert (got is policy) == (expected is policy)


def test_shared_prompt_and_its_memo_give_the_plain_cut() -> None:
    spec = tiny_spec()
    prompt = prompt_of(spec)
    assert prompt is prompt_of(spec.model_copy(deep=True))  # same text, same Prompt
    fresh = Prompt(list(prompt.parts))
    report = f"Done. {spec.user.opening} The total is 42."
    assert prompt.unrestated(report) == fresh._cut(report)
    assert prompt.unrestated(report) == prompt.unrestated(report)
    for i in range(600):  # the memo stays bounded and right after it is cleared
        text = f"report {i}: {spec.user.opening}"
        assert prompt.unrestated(text) == fresh._cut(text)
    assert len(prompt._cuts) <= 256


def _nested(depth: int) -> str:
    return '{"query": ' + "[" * depth + "1" + "]" * depth + "}"


def test_nesting_limit_holds_for_argument_text_and_objects() -> None:
    env = Environment(tiny_spec())
    router = env.router
    _, args, error = router.parse_args("mail_search", _nested(MAX_ARG_DEPTH))  # 33 levels with the object
    assert args is None and "nested deeper" in error
    _, args, error = router.parse_args("mail_search", _nested(MAX_ARG_DEPTH - 1))
    assert args is not None and not error
    brackets = json.dumps({"query": "[[[{{{" * 20})  # brackets inside text: shallow after all
    _, args, error = router.parse_args("mail_search", brackets)
    assert args == {"query": "[[[{{{" * 20}
    deep: Any = 1
    for _ in range(MAX_ARG_DEPTH + 1):
        deep = [deep]
    _, args, error = router.parse_args("mail_search", {"query": deep})  # an object
    assert args is None and "nested deeper" in error
    for blank in ("", "   ", "\n\t"):
        assert router.parse_args("mail_search", blank)[1] == {}


@pytest.mark.parametrize("bad", ["25:00", "9am", "", None, ["09:00"], 900])
def test_cached_time_parsing_still_rejects_junk(bad: Any) -> None:
    with pytest.raises(ToolError, match="expected HH:MM"):
        _hhmm(bad, "day_start")
    with pytest.raises(ToolError, match="expected YYYY-MM-DDTHH:MM"):
        check_datetime(bad, "start")


def test_cached_time_parsing_normalises_as_before() -> None:
    assert _hhmm("9:05", "day_start") == "09:05"
    assert check_datetime("2025-03-04T09:05:59") == "2025-03-04T09:05"
    assert check_datetime("2025-03-04") == "2025-03-04T00:00"


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
def test_deadline_restores_the_alarm_handler_and_still_interrupts() -> None:
    def mine(signum: int, frame: Any) -> None:
        raise AssertionError("the alarm reached the outer handler")

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        quick = Deadline(lambda *a: "ok", 5.0, "quick")
        assert quick.act([], []) == "ok"
        assert signal.getsignal(signal.SIGALRM) is mine
        slow = Deadline(lambda *a: time.sleep(2), 0.05, "slow")
        with pytest.raises(EpisodeTimeout):
            slow.act([], [])
        assert slow.expired
        assert signal.getsignal(signal.SIGALRM) is mine
    finally:
        signal.signal(signal.SIGALRM, previous)


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="0123456789 ,.-$kK%ptm:abc", max_size=30), value=st.floats(-1e4, 1e4))
def test_remembered_report_numbers_grade_as_fresh_ones(text: str, value: float) -> None:
    check = AnswerNumber(id="n", value=value, tolerance=0.5)
    for _ in range(2):  # the second time from the memo
        assert check.stated_in(text) == any(abs(x - value) <= 0.5 for x in numbers_in(text))


def test_declared_tools_bypass_the_built_in_menu_cache() -> None:
    full = ServiceDecl.model_validate(BOOKS)
    fewer = ServiceDecl.model_validate({**BOOKS, "tools": {k: v for k, v in BOOKS["tools"].items() if k != "lib_get"}})
    assert "lib_get" in exposed_tools(["library"], None, {"library": full})
    assert "lib_get" not in exposed_tools(["library"], None, {"library": fewer})
    assert exposed_tools(["library", "mail"], None) == exposed_tools(["mail"], None)  # no declarations leak in
