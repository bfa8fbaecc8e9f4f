"""The oracle's remembered plan, attacked: a replayed run makes exactly the turns a plain run makes, on every
example (stages, faults and retries, divergent results that leave the plan mid-episode), its turns are its own
objects, a plan past its limit plays on unremembered, and results it cannot key go to the plain run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coworkenv.agents import OracleTeacher
from coworkenv.agents.oracle import OracleRun
from coworkenv.agents.oracle_plan import Plan, ReplayedRun, ReplayingTeacher
from coworkenv.bank.sources import load_specs
from coworkenv.rollout.policies import make_policy
from coworkenv.runtime import Environment, run_episode
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec.models import TaskSpec
from rollout_specs import mail_reply_spec

EXAMPLES = load_specs(Path(__file__).parent.parent / "examples")


def _turns(spec: TaskSpec, teacher: Any, **env: Any) -> list[tuple[dict[str, Any], set[str], list[set[str]]]]:
    """Every turn of an episode, as its dump and the fields it was given (its own and its calls')."""
    seen: list[AssistantTurn] = []
    run_episode(Environment(spec, **env), teacher, on_step=lambda t, _: seen.append(t))
    return [(t.model_dump(), set(t.model_fields_set), [set(c.model_fields_set) for c in t.tool_calls]) for t in seen]


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda s: s.id)
def test_replayed_runs_make_the_plain_runs_turns_on_every_example(spec: TaskSpec) -> None:
    teacher = ReplayingTeacher()
    for seed in (1, 2, 1, 3, 2):  # faults at random: paths the plan knows, and new ones that leave it midway
        faults = {"fault_rate": 0.3, "seed": seed}
        assert _turns(spec, teacher, **faults) == _turns(spec, OracleTeacher(), **faults)
    for _ in range(2):
        assert _turns(spec, teacher) == _turns(spec, OracleTeacher())
    assert any(plan.size for _, plan in teacher._plans.values())


def _drive(run: Any, results: Callable[[int], str], turns: int = 12) -> list[dict[str, Any]]:
    """Play ``run`` against a fake environment: the n-th call's result is ``results(n)``."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    out, n = [], 0
    for _ in range(turns):
        t = run.act(list(messages), [])
        out.append(t.model_dump())
        messages.append(t.message())
        for call in t.tool_calls:
            n += 1
            messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": results(n)})
    return out


def _results(variant: int) -> Callable[[int], str]:
    """Results that agree for the first call and then differ by ``variant`` (the second: a transient error)."""

    def result(n: int) -> str:
        if n == 1:
            return '{"items": [{"id": "msg_1", "sender": "dana@acme.com"}], "total": 1}'
        if n == 2 and variant == 1:
            return '{"error": "503 unavailable"}'
        return f'{{"id": "sent-{variant}-{n}", "ok": true}}'

    return result


def test_a_run_that_leaves_the_plan_midway_plays_on_from_the_bindings_there() -> None:
    spec = mail_reply_spec(0)
    plan = Plan()
    for variant in (0, 1, 2, 0, 2, 1):  # each replays the shared opening, then takes its own branch
        assert _drive(ReplayedRun(spec, plan), _results(variant)) == _drive(OracleRun(spec), _results(variant))
    assert plan.size > 0


def test_replayed_turns_are_their_own_objects() -> None:
    spec = mail_reply_spec(1)
    teacher = ReplayingTeacher()
    first: list[AssistantTurn] = []
    run_episode(Environment(spec), teacher, on_step=lambda t, _: first.append(t))
    for t in first:  # a caller that edits what it was given cannot change the next episode
        for call in t.tool_calls:
            if isinstance(call.arguments, dict):
                call.arguments["spoiled"] = True
    assert _turns(spec, teacher) == _turns(spec, OracleTeacher())


def test_a_plan_past_its_limit_plays_on_unremembered() -> None:
    spec = mail_reply_spec(2)
    plan = Plan(limit=2)
    for variant in (0, 1, 2):
        assert _drive(ReplayedRun(spec, plan), _results(variant)) == _drive(OracleRun(spec), _results(variant))
    assert plan.size == 2


def test_a_result_that_is_not_text_goes_to_the_plain_run() -> None:
    spec = mail_reply_spec(3)
    plan = Plan()
    _drive(ReplayedRun(spec, plan), _results(0))
    outcomes = []
    for run in (ReplayedRun(spec, plan), OracleRun(spec)):
        call = run.act([{"role": "user", "content": "go"}], []).tool_calls[0]
        odd = {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": None}
        try:
            outcomes.append(run.act([odd], []).model_dump())
        except Exception as exc:  # the plain run's own failure, whatever it is
            outcomes.append(type(exc).__name__)
    assert outcomes[0] == outcomes[1]


def test_rollouts_use_the_replaying_teacher_and_it_keeps_a_plan_per_spec_object() -> None:
    teacher = make_policy("oracle")
    assert isinstance(teacher, ReplayingTeacher) and teacher.name == "oracle"
    spec = mail_reply_spec(4)
    assert teacher.plan(spec) is teacher.plan(spec)
    assert teacher.plan(spec.model_copy(deep=True)) is not teacher.plan(spec)  # an equal spec: its own plan
