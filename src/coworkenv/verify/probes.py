"""Probe policies: scripted wrong behaviours a well-made task must fail.

Each probe is a TaskPolicy (``for_task(spec)`` starts a run) with ``applies(spec)``
saying whether the task has what the probe perturbs, judged from what the spec contains
(its follow-ups, writes, rules, events, checks), never from its capability tags; the
probes in :mod:`coworkenv.verify.gaming` make one run per thing they find. Most probes
replay the reference solution with one thing changed (a step dropped, a value guessed, a
write added), so that a probe that passes shows exactly which part of the grader is missing.
"""

from __future__ import annotations

from coworkenv.agents.oracle import OracleRun, OracleTeacher, is_transient
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.episode import play_out
from coworkenv.runtime.events import EventScheduler
from coworkenv.runtime.fork import Trunk
from coworkenv.runtime.policy import Messages, Tools
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec.models import AnswerStep, AskStep, CallStep, ConfirmStep, TaskSpec
from coworkenv.verify.fast_forward import ReferenceTrunk, resume
from coworkenv.verify.gaming import GAMING_PROBES
from coworkenv.verify.perturb import collateral_steps, guess, injected_calls, is_write, written_collateral
from coworkenv.verify.probe_base import Branching, Fixed, Probe, Replay, Variant, before_last_answer, scripted
from coworkenv.verify.stage_probes import STAGE_PROBES


class GiveUp:
    """Follows the reference until a tool call fails transiently, then stops trying."""

    name = "give_up_on_error"

    def __init__(self, run: OracleRun) -> None:
        self.run = run
        self.stopped = False

    def act(self, messages: Messages, tools: Tools) -> AssistantTurn:
        last = messages[-1] if messages else {}
        if last.get("role") == "tool" and is_transient(str(last.get("content", ""))):
            self.stopped = True
        if self.stopped:
            return AssistantTurn(content="The tools returned an error, so I stopped here.")
        return self.run.act(messages, tools)


class DoNothing(Probe):
    """Declines the request and touches nothing: every task must fail without any work done."""

    name = "do_nothing"

    def for_task(self, spec: TaskSpec) -> Fixed:
        return Fixed(self.name, lambda messages: "Sorry, I can't help with that right now.")


class AnswerWithoutActing(Probe):
    """Claims the request is done by restating it, without a single tool call."""

    name = "answer_without_acting"

    def for_task(self, spec: TaskSpec) -> Fixed:
        def restate(messages: Messages) -> str:
            asked = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
            return "Done. I took care of it: " + str(asked).replace("?", ".")

        return Fixed(self.name, restate)


class GuessWithoutAsking(Probe):
    """Never asks for a hidden fact; uses a plausible wrong value instead."""

    name = "guess_without_asking"

    def applies(self, spec: TaskSpec) -> bool:
        return bool(spec.user.hidden_facts) and any(isinstance(s, AskStep) for s in spec.reference)

    def for_task(self, spec: TaskSpec) -> OracleRun:
        steps = [s for s in spec.reference if not isinstance(s, AskStep)]
        return scripted(spec, steps, {f.slot: guess(f.value) for f in spec.user.hidden_facts})


class ViolatePolicy(Probe):
    """Skips the confirmations and the required prior steps."""

    name = "violate_policy"

    def _priors(self, spec: TaskSpec) -> set[str]:
        return {p.prior_tool for p in spec.rules if p.rule == "require_prior" and p.prior_tool}

    def applies(self, spec: TaskSpec) -> bool:
        priors = self._priors(spec)
        return any(isinstance(s, ConfirmStep) or (isinstance(s, CallStep) and s.call in priors) for s in spec.reference)

    def for_task(self, spec: TaskSpec) -> OracleRun:
        priors = self._priors(spec)
        steps = [
            s
            for s in spec.reference
            if not isinstance(s, ConfirmStep) and not (isinstance(s, CallStep) and s.call in priors)
        ]
        return scripted(spec, steps)


class ClaimWithoutWrite(Probe):
    """Does the reads and reports success, but skips every write."""

    name = "claim_without_write"

    def applies(self, spec: TaskSpec) -> bool:
        return any(isinstance(s, CallStep) and is_write(s.call) for s in spec.reference)

    def for_task(self, spec: TaskSpec) -> OracleRun:
        return scripted(spec, [s for s in spec.reference if not (isinstance(s, CallStep) and is_write(s.call))])


class StopBeforeFollowUp(Probe):
    """Handles the first request, then does nothing about the follow-ups."""

    name = "stop_before_follow_up"

    def applies(self, spec: TaskSpec) -> bool:
        return bool(spec.user.follow_ups) and any(isinstance(s, AnswerStep) for s in spec.reference)

    def for_task(self, spec: TaskSpec) -> OracleRun:
        first = next(i for i, s in enumerate(spec.reference) if isinstance(s, AnswerStep))
        return scripted(spec, list(spec.reference[: first + 1]))


class IgnoreEvent(Branching):
    """Plans as if the workspace never changed: replays the reference's turns from an event-free world."""

    name = "ignore_event"

    def applies(self, spec: TaskSpec) -> bool:
        return bool(spec.events)

    def variants(self, spec: TaskSpec, trunk: ReferenceTrunk | None = None) -> list[Variant]:
        """The run; ``trunk``: the reference run of ``spec`` (single-stage), whose opening the event-free world shares
        up to the step in which an event first fired (taken from it, not played again)."""
        return [(self.name, self.for_task(spec, trunk))] if self.applies(spec) else []

    def for_task(self, spec: TaskSpec, trunk: ReferenceTrunk | None = None) -> Replay:
        quiet = spec.model_copy(update={"events": []})
        run = OracleTeacher().for_task(quiet)
        k = _first_firing(trunk.trunk) if trunk is not None and not spec.stages else None
        if trunk is not None and k is not None and resume(trunk.recorder, k, run):
            turns, error = trunk.trunk.branch(k, _without_events, run, trunk_turn=False)
        else:
            turns = []
            error = play_out(Environment(quiet), run, lambda turn, _obs: turns.append(turn))
        if error is not None:  # the reference itself failed: no event-free plan to replay
            raise RuntimeError(f"ignore_event: the reference failed without events: {error}")
        return Replay(turns)


def _first_firing(trunk: Trunk) -> int | None:
    """The step in which the trunk's first event fired (None if one fired at the start, or none before its end)."""
    if trunk.error is not None or not trunk.fired or trunk.fired[0]:
        return None
    return next((k for k in range(len(trunk.turns) - 1) if trunk.fired[k + 1]), None)


def _without_events(env: Environment) -> None:
    """No event fires in ``env`` from now on (a single-stage one, where none has fired yet): its scheduler gets the
    attributes of one without events (new ones: the next fork puts the snapshot's back)."""
    env.scheduler.__dict__ = vars(EventScheduler([], (), env.workspace.records))
    env.fired = env.scheduler.fired


class GiveUpOnError(Probe):
    """Stops at the first injected tool error instead of trying again (specs with faults)."""

    name = "give_up_on_error"

    def applies(self, spec: TaskSpec) -> bool:
        return bool(spec.faults)

    def for_task(self, spec: TaskSpec) -> GiveUp:
        return GiveUp(OracleRun(spec))


class VagueAnswer(Probe):
    """Does all the work but reports a bare "Done", without any of the facts or figures."""

    name = "vague_answer"

    def applies(self, spec: TaskSpec) -> bool:
        answers = any(c.reads == "answer" for c in spec.checks)
        return answers and any(isinstance(s, AnswerStep) for s in spec.reference)

    def for_task(self, spec: TaskSpec) -> OracleRun:
        steps = [AnswerStep(answer="Done.") if isinstance(s, AnswerStep) else s for s in spec.reference]
        return scripted(spec, steps)


class FollowInjection(Probe):
    """Does the job and also obeys the instructions planted in workspace content."""

    name = "follow_injection"

    def applies(self, spec: TaskSpec) -> bool:
        return bool(injected_calls(spec))

    def for_task(self, spec: TaskSpec) -> OracleRun:
        return scripted(spec, before_last_answer(list(spec.reference), injected_calls(spec)))


class CollateralWrite(Probe):
    """Does the job plus a damaging write on a record the task is not about, in every service it exposes; and the
    job plus one such write on another record of each guarded collection of a service the reference writes, one
    run each (named ``collateral_write[service.collection]``).

    A run that ends in the reference's own final state damaged nothing the reference did not change itself.
    """

    name = "collateral_write"
    harmless_if_same_state = True

    def applies(self, spec: TaskSpec) -> bool:
        return bool(collateral_steps(spec))

    def variants(self, spec: TaskSpec) -> list[Variant]:
        steps = collateral_steps(spec)  # found once: finding them is a share of building the probes
        out: list[Variant] = [(self.name, self._run(spec, steps))] if steps else []
        for where, step in written_collateral(spec):
            if len(steps) != 1 or step != steps[0]:  # the combined run makes this one write alone already
                out.append((f"{self.name}[{where}]", self._run(spec, [step])))
        return out

    def for_task(self, spec: TaskSpec) -> OracleRun:
        return self._run(spec, collateral_steps(spec))

    def _run(self, spec: TaskSpec, steps: list[CallStep]) -> OracleRun:
        return scripted(spec, before_last_answer(list(spec.reference), steps))


PROBES: dict[str, Probe] = {
    p.name: p
    for p in (
        *GAMING_PROBES,
        DoNothing(),
        AnswerWithoutActing(),
        GuessWithoutAsking(),
        ViolatePolicy(),
        CollateralWrite(),
        ClaimWithoutWrite(),
        StopBeforeFollowUp(),
        IgnoreEvent(),
        GiveUpOnError(),
        VagueAnswer(),
        FollowInjection(),
        *STAGE_PROBES,
    )
}
"""Every probe, in the order the verifier runs them; which apply is decided by what the spec contains."""


def make_probe(name: str) -> Probe:
    """The probe called ``name`` (a TaskPolicy), for ``--policy probe:<name>``."""
    try:
        return PROBES[name]
    except KeyError:
        raise ValueError(f"unknown probe {name!r}; known: {', '.join(PROBES)}") from None
