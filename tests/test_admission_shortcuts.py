"""The admission rule's short ways give what the long ways gave.

- one reference run: a second one, in a fresh environment of another seed, plays the same episode
  (the verifier draws no random faults, so the seed is never read), on every example, broken spec
  and blueprint spec;
- re-scored episodes: a spec that only reweighs checks or marks them required is judged from the
  episodes recorded for the spec before it, with the verdict a full verification gives; and
  never where the edit changes anything else, changes which probes run, or a grade cannot be
  re-scored exactly;
- ignore_change branches from the reference run at the step that moves to the changed stage,
  with the turns a replay from a reset in the world without the change gives; and replays from a
  reset where the reference run never got to that stage; ignore_event likewise from the step in
  which an event first fired;
- a multi-stage spec's first-stage vacuity is read from the spec's own environment, as from one of
  its first stage alone;
- a distractor run starts at the first step whose turn its swap changes.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from coworkenv.agents.oracle import OracleTeacher, StagedRun
from coworkenv.bank.repair import synthesize
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.fork import Trunk
from coworkenv.spec import TaskSpec, load_spec
from coworkenv.spec.stages import stage_view
from coworkenv.synth.blueprints import BLUEPRINTS
from coworkenv.synth.composer import compose, plan
from coworkenv.verify.admission import Episodes, Played, examine, judge, outcome, play, verify
from coworkenv.verify.distractors import Swap
from coworkenv.verify.fast_forward import OracleRecorder, ReferenceTrunk, fast_forward
from coworkenv.verify.gaming import Distractor, Redirect
from coworkenv.verify.perturb import collateral_steps
from coworkenv.verify.probes import IgnoreEvent
from coworkenv.verify.regrade import regrade
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
        played.state_hash,
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


MULTI_DAY = ("hiring_loop", "month_end_close")
SOME = ("expense_report", "inbox_triage", "notes_to_tickets", "access_request", "meeting_scheduling", *MULTI_DAY)


def _reweighed(spec: TaskSpec, rng: random.Random, required: bool = True) -> TaskSpec:
    """``spec`` with random check weights (the guards' too, and random required flags, with ``required``: those
    may change which probes run)."""

    def edit(checks: list[Any]) -> list[Any]:
        out = []
        for c in checks:
            weight = c.weight if c.kind == "unchanged" and not required else round(rng.uniform(0.2, 4.0), 3)
            out.append(
                c.model_copy(update={"weight": weight, "required": rng.random() < 0.4 if required else c.required})
            )
        return out

    update: dict[str, Any] = {"checks": edit(spec.checks)}
    if spec.stages:
        update["stages"] = [stage.model_copy(update={"checks": edit(stage.checks)}) for stage in spec.stages]
    return spec.model_copy(update=update)


def _recorded(spec: TaskSpec) -> Episodes:
    verification, episodes = examine(spec)
    assert episodes is not None and episodes.probes is not None, verification.findings
    return episodes


@pytest.mark.parametrize("name", SOME)
def test_a_reweighed_spec_is_judged_as_verifying_it_would(name: str) -> None:
    spec = compose(plan(0, 0, [name]))
    episodes = _recorded(spec)
    rng = random.Random(name)
    rescored = 0
    for k in range(6):
        new = _reweighed(spec, rng, required=k % 2 == 1)
        short = episodes.regraded(new)
        if k % 2 == 0:
            assert short is not None  # the guards' order and the required flags choose the probes: they are kept
        if short is not None:
            rescored += 1
            assert judge(short).model_dump() == verify(new).model_dump()
            assert examine(new, episodes)[0].model_dump() == verify(new).model_dump()
    assert rescored >= 3


def test_an_edit_beyond_weights_is_played_again() -> None:
    spec = compose(plan(0, 0, ["expense_report"]))
    episodes = _recorded(spec)
    user = spec.user.model_copy(update={"opening": spec.user.opening + " Thanks!"})
    assert episodes.regraded(spec.model_copy(update={"user": user})) is None
    other = spec.model_copy(update={"reference": spec.reference[:-1]})
    assert episodes.regraded(other) is None


def test_an_edit_that_changes_which_probes_run_is_played_again() -> None:
    """Marking an answer check required makes the report-dump probe run; reordering the guards' weights makes the
    collateral write damage another collection first."""
    for name in SOME:
        spec = compose(plan(0, 0, [name]))
        answers = [c for c in spec.checks if c.kind in ("answer_contains", "answer_number")]
        if answers and not any(c.required for c in answers):
            break
    else:
        pytest.fail("no blueprint spec with an optional answer check")
    episodes = _recorded(spec)
    marked = [c.model_copy(update={"required": True}) if c is answers[0] else c for c in spec.checks]
    assert episodes.regraded(spec.model_copy(update={"checks": marked})) is None
    guarded = compose(plan(0, 0, ["travel_request"]))
    heavier = [c.model_copy(update={"weight": 100.0}) if c.id == "calendar_guard" else c for c in guarded.checks]
    reordered = guarded.model_copy(update={"checks": heavier})
    assert collateral_steps(reordered) != collateral_steps(guarded)
    assert _recorded(guarded).regraded(reordered) is None


def test_a_grade_whose_robustness_is_rounded_is_not_rescored() -> None:
    spec = compose(plan(0, 0, ["expense_report"]))
    grade = _recorded(spec).reference.grade
    assert regrade(grade, spec) == grade
    assert regrade(grade.model_copy(update={"robustness": round(2 / 3, 6)}), spec) is None
    assert regrade(grade.model_copy(update={"robustness": 0.5}), spec) is not None


@pytest.mark.parametrize("name", ["wrong_record", "unsolvable", "nondeterministic_event"])
def test_episodes_of_a_reference_run_with_findings_are_not_rescored(name: str) -> None:
    """No probe ran (the reference run found something): re-scoring cannot say what they would have scored."""
    spec = load_spec(ROOT / "tests" / "broken_specs" / f"{name}.yaml")
    verification, episodes = examine(spec)
    assert not verification.admitted and episodes is not None and episodes.probes is None
    assert episodes.regraded(_reweighed(spec, random.Random(0), required=False)) is None


def test_the_repair_loop_rescores_and_gets_the_verdict_it_got_by_playing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Job 1 of the default bank is admitted after one round that only reweighs checks."""
    recipe = plan(0, 1)
    calls: list[bool] = []
    regraded = Episodes.regraded

    def spy(self: Episodes, spec: TaskSpec) -> Episodes | None:
        out = regraded(self, spec)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(Episodes, "regraded", spy)
    short = synthesize(recipe)
    assert calls == [True] and short.verification.rounds == 1
    monkeypatch.setattr(Episodes, "regraded", lambda self, spec: None)
    long = synthesize(recipe)
    assert short.spec == long.spec and short.verification.model_dump() == long.verification.model_dump()


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
