"""Static admission check on vacuity: no check may hold before the agent does anything.

Guards (``unchanged``, ``tool_not_called``, ``max_calls`` and ``record_absent``) say what must
*not* happen, so they hold until the agent errs; but a spec made only of guards is vacuous, and a
``record_absent`` is a guard only where an agent can break it.
"""

from __future__ import annotations

from coworkenv.runtime.environment import Environment
from coworkenv.spec.checks import GUARD_KINDS, CheckModel, EpisodeCheck, EpisodeLog, StateCheck
from coworkenv.spec.models import TaskSpec
from coworkenv.verify.findings import Finding, Location
from coworkenv.verify.perturb import absent_breaker, exposed


def vacuous_findings(spec: TaskSpec, initial: Environment | None = None) -> list[Finding]:
    """Checks that already hold before the agent does anything (on the state after reset).

    A ``record_absent`` that does not hold at the start asks for a removal, not a guard; one that
    holds is a guard only where the guarded_action probe can break it (else it is free weight).
    ``initial``: an environment of ``spec`` just reset, which the caller plays next (read here, never stepped).
    """
    env = initial if initial is not None else Environment(spec)
    log = EpisodeLog()
    holds = [_holds_at_start(c, env, log) for c in spec.checks]
    guards = [c.is_guard(h) for c, h in zip(spec.checks, holds, strict=True)]
    if all(guards):
        return [
            Finding(
                kind="vacuous_check",
                where="checks",
                location=Location.checks(),
                evidence=f"every check is a guard ({' / '.join(GUARD_KINDS)}): doing nothing satisfies them all",
                hint="add a check on what the task must achieve",
            )
        ]
    tools = exposed(spec)
    out = []
    for i, c in enumerate(spec.checks):
        forbidden = c.forbidden_records()
        if not holds[i] or (guards[i] and (forbidden is None or absent_breaker(spec, forbidden, tools) is not None)):
            continue
        out.append(
            Finding(
                kind="vacuous_check",
                where=f"checks[{i}]",
                location=Location.check(i, c.id),
                evidence=f"{c.kind} check {c.id!r} already holds on the initial state",
                hint="check something the task must change, guard against something an agent can do, or drop the check",
            )
        )
    return out


def _holds_at_start(check: CheckModel, env: Environment, log: EpisodeLog) -> bool:
    if isinstance(check, StateCheck):  # the environment judged its checks on the initial records when it was made
        return env.tracker.result(check)[0]
    assert isinstance(check, EpisodeCheck)
    return check.judge(log)[0]
