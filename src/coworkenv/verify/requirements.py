"""Hard requirements: a task must say what it cannot be passed without.

Weights alone let any check lighter than about 31 % of the total fail while the task
still passes (0.8 × 0.69 + 0.2 = 0.75), so the checks that define a task (its main write,
its guard against collateral damage, the substance of its report) are marked
``required``, which caps the score below the pass mark when they fail. This finds specs
with no required check, and required checks whose failure the score would still pass.
"""

from __future__ import annotations

from coworkenv.grading.score import PASS_THRESHOLD, combine
from coworkenv.spec.models import TaskSpec
from coworkenv.verify.findings import Finding, Location


def requirement_findings(spec: TaskSpec) -> list[Finding]:
    """The ``weak_requirement`` findings of a spec."""
    if not any(c.required for c in spec.checks):
        share = max(c.weight for c in spec.checks) / sum(c.weight for c in spec.checks)
        return [
            Finding(
                kind="weak_requirement",
                where="checks",
                location=Location.checks(),
                evidence=f"no check is required: failing any one (the heaviest weighs {share:.0%}) can still pass",
                hint="mark the checks that define the task required: the main write, the guard, the report",
            )
        ]
    total = sum(c.weight for c in spec.checks)
    out = []
    for i, check in enumerate(spec.checks):
        if check.required and combine(1 - check.weight / total, 1.0, 1.0, True) >= PASS_THRESHOLD:
            out.append(
                Finding(
                    kind="weak_requirement",
                    where=f"checks[{i}]",
                    location=Location.check(i, check.id),
                    evidence=f"the task passes with required check {check.id!r} failing",
                    hint="the score must cap a failed required check below the pass mark",
                )
            )
    return out
