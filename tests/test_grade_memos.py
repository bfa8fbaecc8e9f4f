"""What grading and the store line remember across episodes, attacked: matches kept per stored record object
equal a fresh evaluation (also when a record is replaced or the memo overflows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coworkenv.agents import OracleTeacher
from coworkenv.bank.sources import load_specs
from coworkenv.grading import checks
from coworkenv.grading.checks import _Matches, record_matches
from coworkenv.runtime import Environment, run_episode

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
