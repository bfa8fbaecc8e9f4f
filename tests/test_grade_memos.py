"""What grading and the store line remember across episodes, attacked: matches kept per stored record object
equal a fresh evaluation (also when a record is replaced or the memo overflows), check results' JSON kept by
value never stands in for a value of another type."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coworkenv.agents import OracleTeacher
from coworkenv.bank.sources import load_specs
from coworkenv.grading import checks
from coworkenv.grading.checks import _Matches, record_matches
from coworkenv.rollout import typed_json
from coworkenv.rollout.lines import ToolMenu, record_bytes
from coworkenv.rollout.worker import EpisodeTask, episode_record
from coworkenv.runtime import Environment, run_episode
from coworkenv.storage import json_text
from coworkenv.trajectory import CheckResult, trusted

EXAMPLES = load_specs(Path(__file__).parent.parent / "examples")


def test_matches_kept_per_record_object_equal_a_fresh_scan() -> None:
    memo = _Matches(limit=3)  # small: the memo empties itself on the way
    old = {"id": "a", "status": "open"}
    table = {"a": old, "b": {"id": "b", "status": "closed"}, "c": {"id": "c", "status": "open"}}
    where = "r.status == 'open'"
    initial = dict(table)
    for _ in range(2):
        assert memo(where, table, initial) == [r for r in table.values() if record_matches(where, r)]
    table["a"] = {**old, "status": "closed"}  # a write replaces the record: the new object is evaluated
    assert memo(where, table, initial) == [table["c"]]
    assert memo("r.status == 'closed'", table, initial) == [table["a"], table["b"]]  # another where: its own
    assert len(memo.known) <= 3 and all(entry[0] is not table["a"] for entry in memo.known.values())


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda s: s.id)
def test_grades_with_kept_matches_are_the_grades_of_a_fresh_scan(spec: Any) -> None:
    env = Environment(spec, fault_rate=0.2, seed=4)
    for _ in range(2):  # the second episode meets the matches the first kept
        traj = run_episode(env, OracleTeacher())
        checks._matches.known.clear()
        env._grade = None
        assert env.grade() == traj.grade


def _record_with(**check: Any) -> tuple[Any, ToolMenu]:
    env = Environment(EXAMPLES[0])
    traj = run_episode(env, OracleTeacher())
    assert traj.grade is not None and traj.grade.checks
    first = traj.grade.checks[0]
    values = {**first.__dict__, **check}
    traj.grade.checks[0] = trusted(CheckResult, values, set(values))  # what validation would not let through
    return episode_record(EpisodeTask({"id": EXAMPLES[0].id}, 0, 0), "oracle", traj, None), ToolMenu(
        env.router.schemas()
    )


@pytest.mark.parametrize(
    "odd",
    [
        {"weight": 1},  # an int where the float 1.0 was written before
        {"first_step": True},  # a bool equal to the int 1
        {"weight": -0.0},
        {"weight": 0.0},
        {"passed": 1},
        {"weight": float("nan")},
    ],
)
def test_a_check_result_of_another_type_is_never_written_as_a_kept_one(odd: dict[str, Any]) -> None:
    record, menu = _record_with(weight=1.0, first_step=1, passed=True)
    full = json_text(record.model_dump(mode="json")).encode("utf-8")
    assert record_bytes(record, menu) == full  # kept now
    record, menu = _record_with(**{"weight": 1.0, "first_step": 1, "passed": True, **odd})
    try:
        full = json_text(record.model_dump(mode="json")).encode("utf-8")
    except ValueError:  # NaN: the full dump refuses it too
        return
    assert record_bytes(record, menu) == full
    assert len(typed_json._CHECKS) <= typed_json._CHECKS_LIMIT
