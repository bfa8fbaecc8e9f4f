"""Exact evaluation metrics from graded trajectories.

Numbers read like Claw-Eval's: the average score ×100, pass@1, pass@k and pass^k, all in
percent, overall and per capability, per blueprint and for the multi-turn subset. Every
task counts once whatever its number of samples, so a task sampled more often does not
weigh more. pass@k is the unbiased estimator of Chen et al. (2021), ``1 - C(n-c,k)/C(n,k)``:
the chance that at least one of k samples drawn without replacement from the n passes;
pass^k is its strict twin ``C(c,k)/C(n,k)``: the chance that all k pass (reliability).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from math import comb
from typing import Final, NotRequired, TypedDict

from coworkenv.trajectory import Trajectory

MULTI_TURN: Final = "multi_turn"

Summary = TypedDict(
    "Summary",
    {"tasks": int, "samples": int, "k": int, "score": float, "pass@1": float, "pass@k": float, "pass^k": float},
)
"""The headline numbers of a set of tasks, in percent (:func:`summarize`)."""


class Metrics(TypedDict):
    """An evaluation's ``metrics.json`` payload (:func:`compute_metrics`, then what the command adds)."""

    overall: Summary
    multi_turn: Summary
    by_capability: dict[str, Summary]
    by_blueprint: dict[str, Summary]
    behaviour: dict[str, float]
    errors: NotRequired[int]
    claw_eval: NotRequired[dict[str, object]]


@dataclass(frozen=True)
class GradedSample:
    """What metrics need from one graded episode."""

    spec_id: str
    score: float
    passed: bool
    capabilities: tuple[str, ...] = ()
    blueprint: str | None = None
    multi_turn: bool = False

    @classmethod
    def of(cls, traj: Trajectory) -> GradedSample:
        """From a trajectory; an ungraded episode scores 0."""
        grade = traj.grade
        return cls(
            spec_id=traj.spec_id,
            score=grade.score if grade else 0.0,
            passed=grade.passed if grade else False,
            capabilities=tuple(traj.capabilities),
            blueprint=traj.blueprint,
            multi_turn=traj.multi_turn,
        )


@dataclass
class TaskSamples:
    """All samples of one task."""

    spec_id: str
    scores: list[float] = field(default_factory=list)
    passes: list[bool] = field(default_factory=list)
    capabilities: tuple[str, ...] = ()
    blueprint: str | None = None
    multi_turn: bool = False

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def c(self) -> int:
        return sum(self.passes)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased probability that at least one of k samples (of n, c correct) passes."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased probability that all k samples (of n, c correct) pass."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")


def group_tasks(outcomes: Iterable[GradedSample]) -> list[TaskSamples]:
    """Samples grouped by task, in first-seen order."""
    tasks: dict[str, TaskSamples] = {}
    for o in outcomes:
        task = tasks.get(o.spec_id)
        if task is None:
            task = tasks[o.spec_id] = TaskSamples(
                o.spec_id, capabilities=o.capabilities, blueprint=o.blueprint, multi_turn=o.multi_turn
            )
        task.scores.append(o.score)
        task.passes.append(o.passed)
    return list(tasks.values())


def summarize(tasks: list[TaskSamples], k: int) -> Summary:
    """The headline numbers of a set of tasks, in percent; k is capped at the fewest samples."""
    if not tasks:
        return {"tasks": 0, "samples": 0, "k": k, "score": 0.0, "pass@1": 0.0, "pass@k": 0.0, "pass^k": 0.0}
    kk = max(1, min(k, min(t.n for t in tasks)))

    def mean(xs: list[float]) -> float:
        return 100.0 * sum(xs) / len(xs)

    return {
        "tasks": len(tasks),
        "samples": sum(t.n for t in tasks),
        "k": kk,
        "score": round(mean([sum(t.scores) / t.n for t in tasks]), 4),
        "pass@1": round(mean([t.c / t.n for t in tasks]), 4),
        "pass@k": round(mean([pass_at_k(t.n, t.c, kk) for t in tasks]), 4),
        "pass^k": round(mean([pass_hat_k(t.n, t.c, kk) for t in tasks]), 4),
    }


def behaviour(trajectories: list[Trajectory]) -> dict[str, float]:
    """How the agent acted, whatever the grade: turns and tool calls per episode, % of calls that ran.

    A model that learns the tool-call format but not yet the task shows up here first.
    """
    calls = [c for t in trajectories for c in t.calls]
    n = max(1, len(trajectories))
    return {
        "turns_per_episode": round(sum(len(t.steps) for t in trajectories) / n, 3),
        "calls_per_episode": round(len(calls) / n, 3),
        "valid_calls": round(100.0 * sum(c.ok for c in calls) / len(calls), 2) if calls else 0.0,
    }


def compute_metrics(trajectories: Iterable[Trajectory], k: int = 1) -> Metrics:
    """Overall, per-capability, per-blueprint and multi-turn metrics of graded trajectories."""
    trajectories = list(trajectories)
    tasks = group_tasks(GradedSample.of(t) for t in trajectories)
    by_cap: dict[str, list[TaskSamples]] = defaultdict(list)
    by_bp: dict[str, list[TaskSamples]] = defaultdict(list)
    for t in tasks:
        for cap in t.capabilities:
            by_cap[cap].append(t)
        by_bp[t.blueprint or "(none)"].append(t)
    return {
        "overall": summarize(tasks, k),
        MULTI_TURN: summarize([t for t in tasks if t.multi_turn], k),
        "by_capability": {cap: summarize(ts, k) for cap, ts in sorted(by_cap.items())},
        "by_blueprint": {bp: summarize(ts, k) for bp, ts in sorted(by_bp.items())},
        "behaviour": behaviour(trajectories),
    }
