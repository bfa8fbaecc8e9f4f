"""Same spec and same actions give the same state hash and the same grade, in any Environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coworkenv.agents import OracleTeacher
from coworkenv.runtime import AssistantTurn, Environment, run_episode
from coworkenv.spec import TaskSpec, load_spec
from minispec import CREATE_TAXI, call, play, say, tiny_spec

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.yaml"))


def _replay(spec: TaskSpec, turns: list[Any], **kwargs: Any) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    env = Environment(spec, **kwargs)
    play(env, turns)
    return env.workspace.state_hash(), env.grade().model_dump(), env.messages


def test_same_actions_same_outcome_across_instances() -> None:
    spec = tiny_spec(faults=[{"tool": "mail_search", "on_call": 2}])
    turns = [
        call("mail_search", {"query": "taxi"}),
        call("mail_search", {}),
        {"tool_calls": "junk"},
        call("expenses_create_expense", CREATE_TAXI),
        call("mail_move", {"message_id": "m2", "folder": "spam"}),
        say("Filed the taxi and moved the lunch mail."),
    ]
    first, second = _replay(spec, turns), _replay(spec, turns)
    assert first == second
    assert first[0] != Environment(spec).workspace.state_hash()


def test_reset_replays_identically_in_one_instance() -> None:
    env = Environment(tiny_spec())
    turns = [call("expenses_create_expense", CREATE_TAXI), say("Done.")]
    play(env, turns)
    first = (env.workspace.state_hash(), env.grade().model_dump(), list(env.messages))
    play(env, turns)
    assert (env.workspace.state_hash(), env.grade().model_dump(), env.messages) == first


def test_random_faults_are_reproducible_per_seed() -> None:
    turns = [call("mail_search", {})] * 12 + [AssistantTurn(content="Done.")]
    assert _replay(tiny_spec(), turns, seed=3, fault_rate=0.4) == _replay(tiny_spec(), turns, seed=3, fault_rate=0.4)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_oracle_runs_are_identical(path: Path) -> None:
    spec = load_spec(path)
    a = run_episode(Environment(spec), OracleTeacher())
    b = run_episode(Environment(spec), OracleTeacher())
    assert a.final_state_hash == b.final_state_hash
    assert a.grade == b.grade and a.messages == b.messages
