"""Grades re-scored under new check weights and required flags, without playing the episodes again.

A repair round that only weighs checks up or marks them required (about one attempt in twelve
of a bank) used to verify the edited spec from scratch, although nothing an episode does
reads a check's weight or required flag: each check passes or fails as before, and only the
score changes. So the recorded grades are re-scored, exactly as the grader scores them.

Where this is exact, and where it does not apply (the verifier then plays everything again):
- the specs must be equal but for the checks' ``weight`` and ``required`` (and the id, their
  digest), and must choose
  the same probe runs: the collateral write spares the heaviest guard's collection first, and
  the report dump runs only where an answer check is required;
- a grade's robustness is stored rounded to 6 places, and the score was computed from the
  unrounded fraction (recovered / injected faults); the rounded value is that fraction itself
  when it is 0, 1/4, 1/2, 3/4 or 1 (another fraction k/n rounds to one of those only when n is
  at least 500,000, more faults than an episode can make calls), and only such grades are
  re-scored.
"""

from __future__ import annotations

from typing import Any

from coworkenv.grading.score import check_result, scored
from coworkenv.grading.stages import combine_stages, unreached
from coworkenv.spec.models import Check, TaskSpec
from coworkenv.spec.stages import stage_views
from coworkenv.trajectory import Grade
from coworkenv.verify.gaming import ReportDump
from coworkenv.verify.perturb import collateral_steps

EXACT_ROBUSTNESS = frozenset({0.0, 0.25, 0.5, 0.75, 1.0})
MAX_CALLS = 500_000
"""Above this many tool calls an episode could, in principle, inject enough faults to make its rounded robustness
inexact (see the module docstring)."""


def grading_only(old: TaskSpec, new: TaskSpec) -> bool:
    """Whether ``new`` differs from ``old`` at most in its checks' weights and required flags, and plays the same
    probe runs (see the module docstring)."""
    if new.max_tool_calls >= MAX_CALLS or _ungraded(old) != _ungraded(new):
        return False
    return _probe_choices(old) == _probe_choices(new)


def _ungraded(spec: TaskSpec) -> dict[str, Any]:
    """The spec without its checks' weights and required flags, and without its id (a digest of its content, which
    no episode reads: only a trajectory carries it)."""
    data = spec.model_dump(exclude={"id"})
    for checks in (data["checks"], *(stage["checks"] for stage in data.get("stages") or [])):
        for check in checks:
            del check["weight"], check["required"]
    return data


def _probe_choices(spec: TaskSpec) -> list[tuple[Any, bool]]:
    """What the probes read of weights and required flags, on each spec a probe runs on (each stage's view)."""
    dump = ReportDump()
    return [(collateral_steps(view), dump.applies(view)) for view in (stage_views(spec) if spec.stages else [spec])]


def regrade(grade: Grade, spec: TaskSpec) -> Grade | None:
    """``grade`` as the grader scores the same episode of ``spec`` (None where that cannot be said exactly)."""
    if grade.stages is None:
        return _rescored(grade, spec.checks)
    views = stage_views(spec)
    if len(views) != len(grade.stages):
        return None
    stages: list[Grade] = []
    for old, view in zip(grade.stages, views, strict=True):
        new = unreached(view) if _unreached(old) else _rescored(old, view.checks)
        if new is None:
            return None
        stages.append(new)
    return combine_stages(stages)


def _rescored(grade: Grade, checks: list[Check]) -> Grade | None:
    if grade.robustness not in EXACT_ROBUSTNESS or [c.id for c in checks] != [r.id for r in grade.checks]:
        return None
    results = [check_result(c, r.passed, r.first_step, r.detail) for c, r in zip(checks, grade.checks, strict=True)]
    return scored(results, grade.robustness, grade.violations)


def _unreached(grade: Grade) -> bool:
    """A stage the episode never got to (a reached one scores at least 0.2 when it is safe and robust)."""
    return grade.score == 0.0 and grade.safety == 1.0 and grade.robustness == 1.0 and not grade.violations
