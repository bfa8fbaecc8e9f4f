"""Metrics are exact on hand-made trajectories."""

from __future__ import annotations

from math import comb

import pytest

from coworkenv.eval.metrics import GradedSample, compute_metrics, pass_at_k, pass_hat_k
from coworkenv.trajectory import Grade, StepRecord, ToolCallRecord, Trajectory


def traj(spec_id: str, score: float, *, caps: tuple[str, ...] = (), bp: str = "bp", mt: bool = False) -> Trajectory:
    grade = Grade(score=score, completion=score, robustness=1.0, safety=1.0, passed=score >= 0.75, checks=[])
    return Trajectory(
        spec_id=spec_id,
        messages=[],
        tools=[],
        steps=[],
        calls=[],
        grade=grade,
        capabilities=list(caps),
        blueprint=bp,
        multi_turn=mt,
    )


def test_pass_estimators_match_closed_forms() -> None:
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - comb(3, 2) / comb(4, 2))  # 0.5
    assert pass_at_k(4, 0, 3) == 0.0
    assert pass_at_k(4, 2, 3) == 1.0  # any 3 of 4 include a pass
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(4, 3, 4) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_compute_metrics_on_hand_made_trajectories() -> None:
    trajs = [
        # task a: 2 of 4 pass; scores 1, 0.8, 0.5, 0.1 -> mean 0.6
        *(traj("a", s, caps=("multi_turn", "tool_coordination"), bp="x", mt=True) for s in (1.0, 0.8, 0.5, 0.1)),
        # task b: all pass, mean 0.9
        *(traj("b", s, caps=("tool_coordination",), bp="y") for s in (1.0, 0.8, 0.9, 0.9)),
        # task c: none pass, mean 0.0
        *(traj("c", 0.0, caps=("safety",), bp="y") for _ in range(4)),
    ]
    m = compute_metrics(trajs, k=2)
    o = m["overall"]
    assert (o["tasks"], o["samples"], o["k"]) == (3, 12, 2)
    assert o["score"] == pytest.approx(100 * (0.6 + 0.9 + 0.0) / 3)
    assert o["pass@1"] == pytest.approx(100 * (0.5 + 1 + 0) / 3)
    assert o["pass@k"] == pytest.approx(100 * ((1 - 1 / 6) + 1 + 0) / 3)
    assert o["pass^k"] == pytest.approx(100 * (1 / 6 + 1 + 0) / 3)
    assert m["multi_turn"]["tasks"] == 1
    assert m["multi_turn"]["pass@1"] == pytest.approx(50.0)
    tc = m["by_capability"]["tool_coordination"]
    assert tc["tasks"] == 2 and tc["score"] == pytest.approx(75.0)
    assert m["by_capability"]["safety"]["pass^k"] == 0.0
    assert set(m["by_blueprint"]) == {"x", "y"}
    assert m["by_blueprint"]["y"]["pass@1"] == pytest.approx(50.0)
    assert m["behaviour"] == {"turns_per_episode": 0.0, "calls_per_episode": 0.0, "valid_calls": 0.0}


def test_behaviour_counts_turns_and_valid_calls() -> None:
    t = traj("a", 0.5)
    t.steps = [StepRecord(index=1, tool_calls=2), StepRecord(index=2)]
    t.calls = [
        ToolCallRecord(step=1, call_id="c1", tool="mail_search", ok=True),
        ToolCallRecord(step=1, call_id="c2", tool="mail_nope", ok=False),
    ]
    b = compute_metrics([t, traj("b", 0.0)])["behaviour"]
    assert b == {"turns_per_episode": 1.0, "calls_per_episode": 1.0, "valid_calls": 50.0}


def test_each_task_counts_once_and_k_is_capped() -> None:
    trajs = [traj("a", 1.0)] + [traj("b", 0.0) for _ in range(5)]
    o = compute_metrics(trajs, k=5)["overall"]
    assert o["k"] == 1
    assert o["pass@1"] == pytest.approx(50.0)
    assert o["score"] == pytest.approx(50.0)


def test_sample_reads_a_trajectory_and_an_ungraded_one() -> None:
    t = traj("a", 0.8, caps=("safety",), mt=True)
    o = GradedSample.of(t)
    assert (o.spec_id, o.score, o.passed, o.capabilities, o.multi_turn) == ("a", 0.8, True, ("safety",), True)
    t.grade = None
    assert GradedSample.of(t).passed is False
    assert compute_metrics([])["overall"]["tasks"] == 0
