"""The hand-written example environments: solvable by the oracle, failed by a do-nothing agent."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

from coworkenv.agents import OracleTeacher
from coworkenv.grading import PASS_THRESHOLD
from coworkenv.pipeline import run_examples
from coworkenv.runtime import Environment, run_episode
from coworkenv.spec import TaskSpec, load_spec
from coworkenv.spec.checks import StateCheck
from minispec import DoNothing

FOLDER = Path(__file__).parent.parent / "examples"
EXAMPLES = sorted(FOLDER.glob("*.yaml"))
CAPABILITIES = (
    "tool_coordination",
    "multi_turn",
    "dynamic_state",
    "workflow_compliance",
    "robustness",
    "information_synthesis",
    "safety",
)


@pytest.fixture(scope="module")
def specs() -> dict[str, TaskSpec]:
    return {p.stem: load_spec(p) for p in EXAMPLES}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_oracle_solves_and_do_nothing_fails(path: Path) -> None:
    spec = load_spec(path)
    assert spec.id == path.stem
    oracle = run_episode(Environment(spec), OracleTeacher())
    assert oracle.grade is not None
    failed = [c.id for c in oracle.grade.checks if not c.passed]
    assert oracle.grade.score == 1.0, f"oracle failed {failed}, violations {oracle.grade.violations}"
    assert oracle.done_reason == "user_done" and oracle.error is None
    lazy = run_episode(Environment(spec), DoNothing())
    assert lazy.grade is not None and lazy.grade.score < PASS_THRESHOLD


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_is_well_formed(path: Path) -> None:
    spec = load_spec(path)
    assert spec.capabilities and set(spec.capabilities) <= set(CAPABILITIES)
    assert any(c.kind == "unchanged" for c in spec.checks), "guard against collateral damage"
    assert len({c.kind for c in spec.all_checks}) >= 3  # over every stage of a multi-stage example
    for service, collections in spec.services.items():
        for collection, records in collections.items():
            assert 10 <= len(records) <= 30, f"{service}.{collection} has {len(records)} records"
    env = Environment(spec)
    for c in spec.checks:
        if isinstance(c, StateCheck) and not c.guard:
            assert not c.judge(env.workspace)[0], f"check {c.id} already holds before the agent acts"


def test_at_least_fourteen_examples() -> None:
    assert len(EXAMPLES) >= 14


def test_every_capability_is_covered_twice(specs: dict[str, TaskSpec]) -> None:
    counts = Counter(c for spec in specs.values() for c in spec.capabilities)
    assert all(counts[c] >= 2 for c in CAPABILITIES), counts


def test_the_examples_exercise_every_ingredient(specs: dict[str, TaskSpec]) -> None:
    all_specs = list(specs.values())
    assert any(s.user.hidden_facts and s.user.follow_ups for s in all_specs)
    assert any(e.on_tool for s in all_specs for e in s.events)
    assert any(e.after_step is not None for s in all_specs for e in s.events)
    assert {p.rule for s in all_specs for p in s.rules} == {"forbid", "require_confirmation", "require_prior"}
    assert any(s.faults for s in all_specs)
    assert any(c.kind == "answer_number" for s in all_specs for c in s.checks)
    assert any(len(s.services) >= 3 for s in all_specs)
    safety = [s for s in all_specs if "safety" in s.capabilities]
    assert safety and all(any(p.rule == "forbid" for p in s.rules) for s in safety)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_is_admitted_by_the_verifier(path: Path) -> None:
    """Static checks, reference determinism, solvability, and every relevant probe failing."""
    from coworkenv.verify.admission import verify

    report = verify(load_spec(path))
    assert report.admitted, [f"{f.kind} at {f.where}: {f.evidence}" for f in report.findings]


def test_run_examples_rows() -> None:
    rows = run_examples(FOLDER, Console(file=io.StringIO()))
    assert [r["id"] for r in rows] == [p.stem for p in EXAMPLES]
    assert all(r["passed"] and r["score"] == 1.0 and r["turns"] >= r["calls"] > 0 for r in rows)
    assert set(rows[0]) == {"id", "capabilities", "turns", "calls", "score", "passed"}
