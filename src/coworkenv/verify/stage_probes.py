"""Probes of multi-stage specs: wrong behaviours across stages, and every other probe within one stage.

- ``stop_after_stage``: the reference through stage k, then only "done" for the rest;
- ``ignore_change``: the turns the reference makes in a world where the changes before
  stage k never happened (a plan made yesterday, replayed today);
- every single-stage probe applied to each stage in turn (``<probe>@stage<k>``): the
  reference in the other stages, the probe's run in stage k, on the real state of that day.
A multi-stage task passes only when every stage passes, so each of these must fail.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator

from coworkenv.agents.oracle import OracleTeacher, StagedRun, stage_oracle
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.episode import play_out
from coworkenv.runtime.fork import Trunk
from coworkenv.runtime.policy import Policy
from coworkenv.spec.models import Stage, TaskSpec
from coworkenv.spec.stages import stage_views
from coworkenv.verify.fast_forward import ReferenceTrunk
from coworkenv.verify.probe_base import Branching, Fixed, Probe, Replay, Variant, VariantProbe

DONE = "Everything you asked for is done."


class AfterReference(StagedRun):
    """A staged run that plays the reference in its first stages: a fork from the reference run does not ask it
    for those stages' turns (they are the trunk's), only from the stage where it may differ."""

    def __init__(self, runs: list[Policy], follows_trunk_stages: int) -> None:
        super().__init__(runs)
        self.follows_trunk_stages = follows_trunk_stages
        """How many stages at the start are the reference's own runs (see :meth:`Trunk.play`)."""


def with_stage(spec: TaskSpec, k: int, policy: Policy, views: list[TaskSpec] | None = None) -> StagedRun:
    """The reference in every stage but ``k``, where ``policy`` plays (``views``: the spec's stage views, made
    once by a caller that builds many of these)."""
    views = views or stage_views(spec)
    runs: list[Policy] = [stage_oracle(spec, i, view) for i, view in enumerate(views)]
    runs[k] = policy
    return AfterReference(runs, k)


class StopAfterStage(VariantProbe):
    """Does the first k stages right, then reports the rest done without doing them."""

    name = "stop_after_stage"

    def variants(self, spec: TaskSpec) -> list[Variant]:
        views = stage_views(spec)
        n = len(views)
        out: list[Variant] = []
        for k in range(1, n):
            runs: list[Policy] = [stage_oracle(spec, i, views[i]) for i in range(k)]
            runs += [Fixed(self.name, lambda _messages: DONE)] * (n - k)
            out.append((f"{self.name}[{k}]", AfterReference(runs, k)))
        return out


class IgnoreChange(VariantProbe, Branching):
    """Acts on yesterday's picture: replays the reference's turns from a world without one stage's changes."""

    name = "ignore_change"

    def variants(self, spec: TaskSpec, trunk: ReferenceTrunk | None = None) -> list[Variant]:
        """One run per stage with changes; ``trunk``: the reference run of ``spec``, whose opening the world without
        a stage's changes shares up to the step that moves to that stage (taken from it, not played again)."""
        return [
            (f"{self.name}[{stage.id}]", self._replay(spec, i, trunk.trunk if trunk is not None else None))
            for i, stage in enumerate(spec.stages or [])
            if stage.mutations
        ]

    def _replay(self, spec: TaskSpec, i: int, trunk: Trunk | None) -> Replay:
        stages = list(spec.stages or [])
        stages[i] = stages[i].model_copy(update={"mutations": [], "notify": None})
        unchanged = spec.model_copy(update={"stages": stages})
        actor = OracleTeacher().for_task(unchanged)
        at = _moves_to(trunk, i + 1) if trunk is not None else None
        if trunk is not None and at is not None:
            turns, error = trunk.branch(at, lambda env: _replace_stages(env, stages), actor)
        else:
            turns = []
            error = play_out(Environment(unchanged), actor, lambda t, _: turns.append(t))
        if error is not None:
            raise RuntimeError(f"ignore_change: the reference failed without the changes: {error}")
        return Replay(turns)


def _moves_to(trunk: Trunk, stage: int) -> int | None:
    """The step at which the trunk's episode moved to ``stage`` (None if it never got there)."""
    j = bisect_left(trunk.stage_at, stage)
    return j - 1 if j < len(trunk.stage_at) and trunk.stage_at[j] == stage and j - 1 < len(trunk.turns) else None


def _replace_stages(env: Environment, stages: list[Stage]) -> None:
    """The stages ``env`` moves through from now on (a new list: the snapshots share the old one)."""
    assert env.stages is not None
    env.stages.stages = stages


STAGE_PROBES: tuple[Probe, ...] = (StopAfterStage(), IgnoreChange())


def staged_variants(
    spec: TaskSpec, probes: Iterable[Probe], trunk: ReferenceTrunk | None = None
) -> Iterator[tuple[Probe, str, Policy]]:
    """(probe, run name, policy) of every probe run on ``spec``: a probe of stages runs on the whole spec, any
    other on each stage of a multi-stage spec (named ``<run>@stage<k>``), or on the spec when it has no stages.
    ``trunk``: the reference run of ``spec``, which the replays of a changed world branch from (ignore_change;
    ignore_event on a single-stage spec)."""
    views = stage_views(spec) if spec.stages else []
    for probe in probes:
        if not views or isinstance(probe, StopAfterStage | IgnoreChange):
            for name, policy in probe.variants(spec, trunk) if isinstance(probe, Branching) else probe.variants(spec):
                yield probe, name, policy
            continue
        for k, view in enumerate(views):
            for name, policy in probe.variants(view):
                yield probe, f"{name}@stage{k + 1}", with_stage(spec, k, policy, views)
