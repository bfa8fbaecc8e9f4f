"""Admission checks that only a multi-stage spec needs, and the single-stage ones applied per stage.

A later stage's checks are judged for vacuity on the state the stage starts from (after the
reference's earlier stages and the changes between), which only a run can show: a check
that already holds then would reward work done the day before. Solvability is judged per
view: in a ``notes`` stage the agent sees only its note, not the earlier conversation.
"""

from __future__ import annotations

from collections.abc import Callable

from coworkenv.runtime.environment import Environment
from coworkenv.runtime.policy import Messages
from coworkenv.spec.models import Event, TaskSpec
from coworkenv.spec.stages import stage_views
from coworkenv.trajectory import view_segments
from coworkenv.verify.findings import Finding, Location


def per_stage(check: Callable[[TaskSpec], list[Finding]], spec: TaskSpec) -> list[Finding]:
    """``check`` on each stage of ``spec`` (on ``spec`` itself without stages), naming the stage in ``where``."""
    if not spec.stages:
        return check(spec)
    out: list[Finding] = []
    for k, view in enumerate(stage_views(spec)):
        found = check(view)
        out += [f.in_stage(k - 1) if k else f for f in found]
    return out


def opening_findings(spec: TaskSpec, env: Environment) -> list[Finding]:
    """Later-stage checks that already held when the reference reached their stage (``env`` has just run it)."""
    if env.stages is None:
        return []
    return [
        Finding(
            kind="vacuous_check",
            where=f"stages[{k}].checks:{check_id}",
            location=Location(section="checks", key=check_id, stage=k),
            evidence=f"check {check_id!r} already holds when stage {k + 2} begins (after the earlier stages' work "
            "and the changes between stages): it rewards nothing this stage does",
            hint="check what this stage must change, or move the check to the stage that does it",
        )
        for k, ids in enumerate(env.stages.openings)
        for check_id in ids
    ]


def views(transcript: Messages, env: Environment) -> list[tuple[str, Messages]]:
    """The transcript cut where a ``notes`` stage started the agent's view over, each with the ``where`` prefix
    of the stage it starts with (empty for the first)."""
    if env.stages is None:
        return [("", transcript)]
    cut = view_segments(env.stages.marks, len(transcript))
    return [(f"stages[{ks[0] - 1}]." if ks and ks[0] else "", transcript[a:b]) for a, b, ks in cut]


def event_places(spec: TaskSpec) -> list[tuple[str, Event]]:
    """Every event with where it is declared: ``events[i]`` (the spec's own) or ``stages[k].events[i]``."""
    out = [(f"events[{i}]", e) for i, e in enumerate(spec.events)]
    for k, stage in enumerate(spec.stages or []):
        out += [(f"stages[{k}].events[{i}]", e) for i, e in enumerate(stage.events or [])]
    return out


def stage_starts(env: Environment) -> list[int]:
    """The first step of each stage of the episode ``env`` has just played ([1] without stages)."""
    return [m.first_step for m in env.stages.marks] if env.stages is not None else [1]


def stage_prefix(run_name: str) -> str:
    """The ``where`` prefix of the stage a per-stage run (``<run>@stage<k>``) played in; empty for the first."""
    _, _, number = run_name.rpartition("@stage")
    return f"stages[{int(number) - 2}]." if number.isdigit() and int(number) > 1 else ""
