"""The admission rule's short ways give what the long ways gave.

- one reference run: a second one, in a fresh environment of another seed, plays the same episode
  (the verifier draws no random faults, so the seed is never read), on every example, broken spec
  and blueprint spec;
- ignore_change branches from the reference run at the step that moves to the changed stage,
  with the turns a replay from a reset in the world without the change gives; and replays from a
  reset where the reference run never got to that stage; ignore_event likewise from the step in
  which an event first fired;
- a multi-stage spec's first-stage vacuity is read from the spec's own environment, as from one of
  its first stage alone;
- a distractor run starts at the first step whose turn its swap changes;
- a multi-stage probe run ends at its first failed stage: the findings, the passing probes and the
  repair's edits are those of runs played to their end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coworkenv.agents.oracle import OracleTeacher, StagedRun
from coworkenv.bank.repair import repair
from coworkenv.grading.score import PASS_THRESHOLD, REQUIRED_CAP
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.fork import Trunk
from coworkenv.spec import TaskSpec, load_spec
from coworkenv.spec.stages import stage_view
from coworkenv.synth.blueprints import BLUEPRINTS
from coworkenv.synth.composer import Recipe, compose, plan
from coworkenv.verify import admission
from coworkenv.verify.admission import Played, outcome, play, verify
from coworkenv.verify.distractors import Swap
from coworkenv.verify.fast_forward import OracleRecorder, ReferenceTrunk, fast_forward
from coworkenv.verify.gaming import Distractor, Redirect
from coworkenv.verify.probes import IgnoreEvent
from coworkenv.verify.stage_probes import IgnoreChange
from coworkenv.verify.static import static_findings
from coworkenv.verify.vacuity import vacuous_findings

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*(ROOT / "examples").glob("*.yaml"), *(ROOT / "tests" / "broken_specs").glob("*.yaml")])


def _blueprint_specs() -> list[TaskSpec]:
    """One composed spec of every blueprint (what bank jobs verify)."""
    return [compose(plan(0, i, [name])) for i, name in enumerate(sorted(BLUEPRINTS))]


def _fields(played: Played) -> tuple[object, ...]:
    return (
        played.grade,
        played.state_change,
        played.messages,
        played.fired,
        played.done_reason,
        played.records,
        played.fired_at,
        played.starts,
    )


def _played(path: Path) -> TaskSpec | None:
    """The spec at ``path`` if the verifier gets as far as its reference run (else None)."""
    try:
        spec = load_spec(path)
    except Exception:  # a broken spec that does not even load never reaches a reference run
        return None
    return None if static_findings(spec) else spec


@pytest.mark.parametrize("source", ["files", "blueprints"])
def test_one_reference_run_is_what_two_would_be(source: str) -> None:
    specs = [s for s in map(_played, FILES) if s is not None] if source == "files" else _blueprint_specs()
    assert len(specs) >= 20
    for spec in specs:
        env = Environment(spec, seed=0)
        ReferenceTrunk.record(env)
        recorded = outcome(env)
        assert env.fault_rate == 0 and env.rng.getstate() == Environment(spec, seed=0).rng.getstate(), spec.id
        again = play(Environment(spec, seed=1), OracleTeacher())
        assert _fields(recorded) == _fields(again), spec.id


def _changing(specs: list[TaskSpec]) -> list[TaskSpec]:
    return [s for s in specs if any(stage.mutations for stage in s.stages or [])]


def test_ignore_change_branches_to_the_turns_a_replay_gives() -> None:
    files = [s for s in map(_played, FILES) if s is not None]
    names = ("hiring_loop", "incident_postmortem", "month_end_close", "vendor_dispute")
    days = [compose(plan(seed, i, [name])) for seed in (0, 1) for i, name in enumerate(names)]
    specs = _changing(files + days)
    assert len(specs) >= 8
    probe = IgnoreChange()
    for spec in specs:
        trunk = ReferenceTrunk.record(Environment(spec))
        branched, replayed = probe.variants(spec, trunk), probe.variants(spec)
        assert [name for name, _ in branched] == [name for name, _ in replayed] != []
        for (name, a), (_, b) in zip(branched, replayed, strict=True):
            assert a.turns == b.turns, f"{spec.id} {name}"
        assert trunk.trunk.shared_steps > 0


def test_ignore_change_replays_where_the_reference_never_reached_the_stage() -> None:
    """A reference run that failed in the first stage: no step moved to a later one, so nothing can be branched."""
    spec = _changing([compose(plan(0, 0, ["hiring_loop"]))])[0]

    class Fails:
        def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            raise RuntimeError("no turn")

    recorder = OracleRecorder(StagedRun([Fails()]))
    trunk = ReferenceTrunk(Trunk.record(Environment(spec), recorder), recorder)
    assert trunk.trunk.error is not None and trunk.trunk.turns == []
    probe = IgnoreChange()
    assert [p.turns for _, p in probe.variants(spec, trunk)] == [p.turns for _, p in probe.variants(spec)]
    assert trunk.trunk.shared_steps == 0


def _eventful() -> list[TaskSpec]:
    files = [s for s in map(_played, FILES) if s is not None]
    composed = [compose(plan(seed, i)) for seed in (0, 3) for i in range(40)]
    return [s for s in files + composed if s.events and not s.stages]


def test_ignore_event_branches_to_the_turns_a_replay_gives() -> None:
    specs = _eventful()
    assert len(specs) >= 10
    probe = IgnoreEvent()
    branched_any = 0
    for spec in specs:
        trunk = ReferenceTrunk.record(Environment(spec))
        [(_, branched)], [(_, replayed)] = probe.variants(spec, trunk), probe.variants(spec)
        assert branched.turns == replayed.turns, spec.id
        branched_any += trunk.trunk.shared_steps > 0
    assert branched_any >= 5


def test_ignore_event_replays_where_an_event_fired_at_the_start() -> None:
    """An ``after_step: 0`` event changed the world before the first step: no step of the trunk is event-free."""
    spec = next(s for s in _eventful() if any(e.after_step for e in s.events))
    early = [e.model_copy(update={"after_step": 0, "on_tool": None}) for e in spec.events]
    spec = spec.model_copy(update={"events": early})
    trunk = ReferenceTrunk.record(Environment(spec))
    assert trunk.trunk.fired[0] > 0
    [(_, branched)], [(_, replayed)] = IgnoreEvent().variants(spec, trunk), IgnoreEvent().variants(spec)
    assert branched.turns == replayed.turns and trunk.trunk.shared_steps == 0


def test_first_stage_vacuity_reads_the_spec_environment_as_a_stage_environment() -> None:
    files = [s for s in map(_played, FILES) if s is not None]
    names = ("hiring_loop", "incident_postmortem", "month_end_close", "vendor_dispute")
    staged = [s for s in files if s.stages] + [compose(plan(0, i, [name])) for i, name in enumerate(names)]
    guards_only = [
        s.model_copy(update={"checks": [c for c in s.checks if c.kind == "unchanged"]})
        for s in staged
        if any(c.kind == "unchanged" for c in s.checks)
    ]
    assert len(staged) >= 6 and guards_only
    for spec in staged + guards_only:
        view = stage_view(spec, 0)
        assert vacuous_findings(view, Environment(spec)) == vacuous_findings(view), spec.id
        assert static_findings(spec, lambda spec=spec: Environment(spec)) == static_findings(spec), spec.id
    assert all(vacuous_findings(stage_view(s, 0), Environment(s)) for s in guards_only)


def test_a_distractor_run_starts_where_its_swap_first_changes_a_turn() -> None:
    """Its oracle moves on to the reference oracle's state there (test_fork compares the forked runs with full
    replays); a swap that changes no turn starts from the beginning, as it would without the shortcut."""
    starts = []
    for i, name in enumerate(("expense_report", "inbox_triage", "access_request", "contract_renewal")):
        spec = compose(plan(0, i, [name]))
        trunk = ReferenceTrunk.record(Environment(spec))
        turns = trunk.trunk.turns
        for _, policy in Distractor().variants(spec):
            changed = next((k for k, turn in enumerate(turns) if policy.departs(turn)), 0)
            starts.append(fast_forward(trunk.recorder, trunk.trunk.stage_at, policy, turns))
            assert starts[-1] == changed, spec.id
        idle = Redirect(spec, Swap(texts={"no such value anywhere": "x"}))
        assert fast_forward(trunk.recorder, trunk.trunk.stage_at, idle, turns) == 0
    assert sum(1 for s in starts if s > 0) >= 3


def _multi_stage() -> list[TaskSpec]:
    files = [s for s in map(_played, FILES) if s is not None and s.stages]
    names = ("hiring_loop", "incident_postmortem", "month_end_close", "vendor_dispute")
    return files + [compose(plan(seed, i, [name])) for seed in (0, 1) for i, name in enumerate(names)]


def test_probe_runs_that_stop_at_a_failed_stage_judge_as_runs_played_to_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    specs = _multi_stage()
    stopped = [verify(spec) for spec in specs]
    full_play = admission.play_from
    monkeypatch.setattr(
        admission, "play_from", lambda trunk, policy, **kw: full_play(trunk, policy, hashed=kw["hashed"])
    )
    full = [verify(spec) for spec in specs]
    ended_early = found = 0
    for spec, a, b in zip(specs, stopped, full, strict=True):
        assert (a.admitted, a.findings) == (b.admitted, b.findings), spec.id
        passing = {n: p for n, p in b.probes.items() if p.score >= PASS_THRESHOLD}
        assert {n: p for n, p in a.probes.items() if p.score >= PASS_THRESHOLD} == passing, spec.id
        assert all(a.probes[n].score <= REQUIRED_CAP for n in b.probes.keys() - passing if n in a.probes), spec.id
        ended_early += sum(a.probes[n] != b.probes[n] for n in a.probes.keys() & b.probes.keys())
        found += len(passing)
        recipe = Recipe(blueprint="x", seed=0)
        assert repair(recipe, spec, a) == repair(recipe, spec, b), spec.id
    assert len(specs) >= 12 and ended_early >= 50 and found >= 3  # runs did stop early; passing ones were kept
