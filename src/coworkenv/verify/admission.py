"""The admission rule: an environment enters the bank only when all of these hold.

1. static: schema, references, no leaked hidden fact, no vacuous check, ingredients, and no
   answer check whose values the prompt already states;
2. the reference solution scores 1.0 and every scheduled event fires during it (played once: the
   verifier's environments draw no random faults, so their seed is never read and a second run
   in a fresh environment is the same computation; the tests play it twice on every example,
   broken spec and bank spec, and compare);
3. every probe that applies to what the spec contains (its writes, rules, events, follow-ups,
   confirmations, record-selecting and answer checks; never its tags) scores below the pass
   threshold, and correct agents paced differently (an extra look before or after an
   event's trigger) grade the same as the reference;
4. solvability: every value the reference passes to a tool was visible to it;
5. requirements: some check is ``required`` and none can fail while the task still passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

from pydantic import BaseModel, Field

from coworkenv.grading.score import PASS_THRESHOLD
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.episode import play_out
from coworkenv.runtime.policy import Messages, Policy, TaskPolicy, actor_for
from coworkenv.spec.models import TaskSpec
from coworkenv.spec.stages import stage_views
from coworkenv.trajectory import Grade
from coworkenv.verify.fast_forward import ReferenceTrunk
from coworkenv.verify.findings import Finding, Location
from coworkenv.verify.gaming import PACING, probe_hint
from coworkenv.verify.leaks import answer_findings
from coworkenv.verify.probe_base import Variant
from coworkenv.verify.probes import PROBES
from coworkenv.verify.requirements import requirement_findings
from coworkenv.verify.solvability import unsolvable_findings
from coworkenv.verify.stage_probes import staged_variants, with_stage
from coworkenv.verify.stages import event_places, opening_findings, per_stage, stage_prefix, stage_starts, views
from coworkenv.verify.static import static_findings
from coworkenv.verify.targets import target_findings


class ProbeResult(BaseModel):
    """How one probe fared: its score, and the checks it failed (what the grader caught)."""

    score: float
    robustness: float = 1.0
    safety: float = 1.0
    failed: list[str] = Field(default_factory=list)


class Verification(BaseModel):
    """The verifier's report on one spec."""

    admitted: bool
    findings: list[Finding] = Field(default_factory=list)
    reference_score: float | None = None
    probes: dict[str, ProbeResult] = Field(default_factory=dict)
    rounds: int = Field(0, description="repair rounds before this verdict")
    reasons: list[str] = Field(default_factory=list, description="finding kinds of every failed round, in order")

    @property
    def kinds(self) -> list[str]:
        return sorted({f.kind for f in self.findings})

    @property
    def probe_scores(self) -> dict[str, float]:
        return {name: p.score for name, p in self.probes.items()}


@dataclass
class Played:
    grade: Grade
    state_change: int | None
    """The final state's change from the initial state (``Workspace.state_change``): equal for two runs of one spec
    exactly when their final states are equal; None where the caller did not need it."""
    messages: Messages
    fired: set[str]
    done_reason: str
    records: int = 0
    """How many records the workspace holds at the end (a duplicate create adds one)."""
    fired_at: dict[str, int] = field(default_factory=dict)
    """The step each event first fired at (where the pacing probes put their extra look)."""
    starts: list[int] = field(default_factory=lambda: [1])
    """The first step of each stage (a stage's events are paced from its start)."""


def play(env: Environment, policy: Policy | TaskPolicy) -> Played:
    """One episode without building a Trajectory (the verifier plays about ten per spec)."""
    play_out(env, actor_for(policy, env.spec))  # a probe that crashes simply fails its episode
    return outcome(env)


def play_from(
    trunk: ReferenceTrunk, policy: Policy | TaskPolicy, *, hashed: bool = True, stop_at_failed_stage: bool = False
) -> Played:
    """``play(trunk.env, policy)``, its opening taken from the trunk up to the policy's first turn of its own
    (``stop_at_failed_stage``: see :class:`Environment`)."""
    trunk.env.stop_at_failed_stage = stop_at_failed_stage
    trunk.play(actor_for(policy, trunk.env.spec))
    return outcome(trunk.env, hashed=hashed)


def outcome(env: Environment, *, hashed: bool = True) -> Played:
    """What the verifier reads of an episode that has just ended in ``env`` (the state's change only if ``hashed``)."""
    records = sum(len(recs) for colls in env.workspace.state.values() for recs in colls.values())
    grade, state = env.grade(), env.workspace.state_change() if hashed else None
    fired_at = _fired_at(env)
    return Played(grade, state, env.transcript(), set(env.fired), env.done_reason, records, fired_at, stage_starts(env))


def _fired_at(env: Environment) -> dict[str, int]:
    """The step each event of the episode so far first fired at."""
    fired_at: dict[str, int] = {}
    for step in env.steps:
        for event in step.events:
            fired_at.setdefault(event, step.index)
    return fired_at


@dataclass
class Episodes:
    """What the verifier played of one spec, and read from the reference run's environment: all it needs to judge
    the spec."""

    spec: TaskSpec
    reference: Played
    observed: list[Finding]
    """What the reference run showed wrong with the request, the targets and the values it used."""
    probes: list[tuple[str, Played]] | None = None
    """Every probe run that did something wrong; None where the reference run found something (none were played)."""
    pacing: list[tuple[str, Grade]] | None = None
    """The grade of each pacing run."""


def verify(spec: TaskSpec) -> Verification:
    """Run the admission rule on one spec (an evaluation-only spec: the static checks, and never admitted)."""
    if spec.provenance.evaluation_only:
        return Verification(admitted=False, findings=[*static_findings(spec), evaluation_only_finding(spec)])
    initial = cache(lambda: Environment(spec, seed=0))  # the static checks read its initial state, then it plays
    findings = static_findings(spec, initial) or per_stage(answer_findings, spec)
    if findings:
        return Verification(admitted=False, findings=findings)
    return judge(_play_all(spec, initial()))


def _play_all(spec: TaskSpec, env: Environment) -> Episodes:
    """The reference run in ``env``, and its probe and pacing runs where the reference run found nothing wrong."""
    trunk = ReferenceTrunk.record(env)  # the reference run, recorded: the probes fork from it
    reference = outcome(env)
    observed = opening_findings(spec, env) + target_findings(spec, env)
    for prefix, view in views(reference.messages, env):
        found = unsolvable_findings(view, env.router.schemas(), env.workspace.initial, env.router.canonical_args)
        observed += [f.model_copy(update={"where": prefix + f.where}) for f in found]
    episodes = Episodes(spec, reference, observed)
    if not (_reference_findings(spec, reference) or observed):
        episodes.probes = list(probe_runs(spec, trunk, reference))
        paced = _pacing_variants(spec, reference, trunk.played_steps())
        episodes.pacing = [(name, play_from(trunk, policy, hashed=False).grade) for name, policy in paced]
    return episodes


def judge(episodes: Episodes) -> Verification:
    """The admission rule's verdict on what was played."""
    spec, reference = episodes.spec, episodes.reference
    findings = _reference_findings(spec, reference) + episodes.observed
    report = Verification(admitted=False, reference_score=reference.grade.score)
    if findings or episodes.probes is None or episodes.pacing is None:
        report.findings = findings
        return report
    findings += per_stage(requirement_findings, spec)
    findings += _probe_findings(episodes.probes, report)
    findings += _pacing_findings(episodes.pacing, reference)
    report.findings = findings
    report.admitted = not findings
    return report


def evaluation_only_finding(spec: TaskSpec) -> Finding:
    """Why an imported task stays out of training banks and exports, as the verifier reports it."""
    return Finding(
        kind="evaluation_only",
        where="provenance.evaluation_only",
        evidence=f"imported from {spec.provenance.source}: its own graders and rubrics score it, which the "
        "reference and probe checks cannot stand in for",
        hint="run it with `coworkenv eval --split all`; it is never admitted to a training bank or exported for SFT/RL",
    )


def probe_runs(spec: TaskSpec, trunk: ReferenceTrunk, reference: Played) -> Iterator[tuple[str, Played]]:
    """Play every probe run that applies to ``spec`` (each forked from the reference ``trunk``), skipping those
    that turn out to do nothing wrong. A multi-stage run ends at its first failed stage: it cannot pass then, and
    only a passing run is a finding (or an input to the repair)."""
    for probe, name, policy in staged_variants(spec, PROBES.values(), trunk):
        if not getattr(policy, "relevant", lambda _: True)(reference.messages):
            continue  # the run would replay the reference unchanged
        played = play_from(trunk, policy, hashed=probe.harmless_if_same_state, stop_at_failed_stage=True)
        if probe.harmless_if_same_state and played.state_change == reference.state_change:
            continue  # the wrong move changed nothing (an idempotent write, an unused swap)
        if _hit(name.split("@", 1)[0], played.grade):  # else the guarded action could not be performed on this spec
            yield name, played


def _probe_findings(probes: list[tuple[str, Played]], report: Verification) -> list[Finding]:
    """Every applicable probe run that passes is a finding."""
    out: list[Finding] = []
    for name, played in probes:
        grade = played.grade
        report.probes[name] = ProbeResult(
            score=grade.score,
            robustness=grade.robustness,
            safety=grade.safety,
            failed=[c.id for c in grade.checks if not c.passed],
        )
        if grade.score >= PASS_THRESHOLD:
            out.append(
                Finding(
                    kind="probe_passed",
                    where=f"probe:{name}",
                    location=Location.probe(name),
                    evidence=f"the {name} probe scores {grade.score:.3f} (pass threshold {PASS_THRESHOLD})",
                    hint=probe_hint(name),
                )
            )
    return out


def _hit(name: str, grade: Grade) -> bool:
    """For a guarded-action run: whether the rule fired or the guard check saw the action."""
    if not name.startswith("guarded_action["):
        return True
    kind, _, ident = name[len("guarded_action[") : -1].partition(":")
    if kind == "rules":
        return any(v.policy == ident for v in grade.violations)
    return any(c.id == ident and not c.passed for c in grade.checks)


_PACES = {
    "before": "an extra read just before the trigger",
    "after": "an extra read just after the trigger",
    "faster": "two calls in one turn before the trigger",
    "write_first": "the write done as soon as what it needs is read, the other reads after it",
}


def _pacing_variants(spec: TaskSpec, reference: Played, played: list[int] | None = None) -> list[Variant]:
    """The pacing runs, placed by the reference step each episode step ``played``; in a multi-stage spec each
    stage's view holds its events (the first: the spec's own), so each stage's pacings run there, counted from its
    start, with the reference in the other stages."""
    if not spec.stages:
        return PACING.variants(spec, reference.fired_at, played)
    out: list[Variant] = []
    views = stage_views(spec)
    for k, view in enumerate(views):
        shift = reference.starts[k] - 1
        fired_at = {event: step - shift for event, step in reference.fired_at.items()}
        out += [
            (f"{name}@stage{k + 1}", with_stage(spec, k, policy, views))
            for name, policy in PACING.variants(view, fired_at)
        ]
    return out


def _pacing_findings(paced: list[tuple[str, Grade]], reference: Played) -> list[Finding]:
    """Correct agents that take an extra look around an event's trigger must grade as the reference does."""
    out: list[Finding] = []
    for name, grade in paced:
        if grade.score != reference.grade.score:
            where = name.split("@", 1)[0][len("pacing[") : -1]
            failed = ", ".join(c.id for c in grade.checks if not c.passed) or "none"
            out.append(
                Finding(
                    kind="nondeterministic",
                    where=stage_prefix(name) + where.rsplit(".", 1)[0],
                    evidence=f"a correct agent paced differently ({_PACES[where.rsplit('.', 1)[1]]}) scores "
                    f"{grade.score:.3f}, the reference {reference.grade.score:.3f} (failed: {failed}): the "
                    "grade depends on pacing, not behaviour",
                    hint="make the event fire on a tool call, or check what holds whenever it fires",
                )
            )
    return out


def _reference_findings(spec: TaskSpec, first: Played) -> list[Finding]:
    out: list[Finding] = []
    grade = first.grade
    if grade.violations:
        v = grade.violations[0]
        out.append(
            Finding(
                kind="reference_violation",
                where=f"rules:{v.policy}",
                evidence=f"the reference breaks {v.policy!r} calling {v.tool} at step {v.step}",
                hint="confirm or do the required step before this call, or fix the rule",
            )
        )
    elif grade.score < 1.0:
        failed = [c for c in grade.checks if not c.passed]
        where = f"checks:{failed[0].id}" if failed else "reference"
        detail = "; ".join(f"{c.id} ({c.kind}: {c.detail})" for c in failed) or f"robustness {grade.robustness}"
        out.append(
            Finding(
                kind="reference_failed",
                where=where,
                evidence=f"reference scores {grade.score:.3f} (ended: {first.done_reason}); failed {detail}",
                hint="fix the check or the reference so they agree",
            )
        )
    for where, event in event_places(spec):
        if event.id not in first.fired:
            out.append(
                Finding(
                    kind="nondeterministic",
                    where=where,
                    evidence=f"event {event.id!r} never fires during the reference run, so whether it "
                    "happens depends on how many steps an agent takes",
                    hint="trigger it on a tool the reference calls, or at a step it reaches",
                )
            )
    return out
