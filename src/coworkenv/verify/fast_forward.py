"""Starting a probe's scripted run where it departs from the reference, in the state the reference's run had there.

Most probes are the oracle over an edited reference: the same steps up to the one the probe
changes. Forking the environment (:mod:`coworkenv.runtime.fork`) saves stepping through that
shared opening; this saves asking the probe for its turns there too. The trunk's oracle is
recorded before every turn; a probe's oracle that starts as the trunk's did (same user, same
call ids, same knowledge) and shares its first j reference steps is given the trunk oracle's
state at the last step before the trunk went past step j, and the fork starts there. The
oracle's turns depend only on that state, the steps and the messages, which are the trunk's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeGuard

from coworkenv.agents.oracle import OracleRun, OracleTeacher, StagedRun
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.fork import Fields, Layout, Trunk
from coworkenv.runtime.policy import Messages, Policy, Tools, actor_for
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec.models import ReferenceStep
from coworkenv.spec.stages import current_stage

_STATE = Layout(nested=("ctx",))  # the bindings, and the facts learnt (a dict the oracle fills in)


class Wrapping(Protocol):
    """A policy around the reference's oracle (``run``) that says whether it changes a turn of that oracle."""

    run: OracleRun

    def departs(self, turn: AssistantTurn) -> bool: ...


def _wraps(policy: object) -> TypeGuard[Wrapping]:
    return hasattr(policy, "departs")


class OracleRecorder:
    """The trunk's policy, with its running oracle's state kept before each of its turns."""

    def __init__(self, actor: Policy) -> None:
        self.actor = actor
        self.name = getattr(actor, "name", "oracle")
        self.states: list[tuple[Policy, Fields]] = []

    def act(self, messages: Messages, tools: Tools) -> AssistantTurn:
        run = _run_in(self.actor, current_stage(messages)) if isinstance(self.actor, StagedRun) else self.actor
        self.states.append((run, Fields.of(vars(run), _STATE)))
        turn: AssistantTurn = self.actor.act(messages, tools)
        return turn


def _run_in(actor: Policy, stage: int) -> Policy:
    """The policy that plays ``stage`` (a staged run's, or the actor itself)."""
    if isinstance(actor, StagedRun):
        run: Policy = actor.runs[min(stage, len(actor.runs) - 1)]
        return run
    return actor


def fast_forward(
    recorder: OracleRecorder, stage_at: list[int], actor: Policy, turns: list[AssistantTurn] | None = None
) -> int:
    """The step a fork of ``actor`` can start at, its oracle moved on to its state there (0: from the start).

    An oracle over an edited reference moves on to the last step before it plays an edited step; a policy that
    wraps the reference's oracle (``run``) and says by ``departs(turn)`` whether it changes the oracle's ``turn``
    (a distractor run's swap) moves on to the first of the trunk's ``turns`` it changes."""
    stage = getattr(actor, "follows_trunk_stages", 0)
    probe = _run_in(actor, stage)
    oracle = probe.run if _wraps(probe) and turns is not None else probe
    if type(oracle) is not OracleRun or stage not in stage_at:
        return 0
    first = stage_at.index(stage)
    trunk, start = recorder.states[first]
    if type(trunk) is not OracleRun or not _same_start(oracle, trunk, start):
        return 0
    if _wraps(probe) and turns is not None:
        return _departure(recorder, stage_at, probe, turns, first)
    shared = _shared_steps(oracle.spec.reference, trunk.spec.reference)
    best = first
    for k in range(first, min(len(stage_at), len(recorder.states))):
        run, state = recorder.states[k]
        if stage_at[k] != stage or run is not trunk or state.values["cursor"] > shared:
            break
        best = k
    if best > first:
        _move(oracle, recorder.states[best][1])
    return best


def _departure(
    recorder: OracleRecorder, stage_at: list[int], probe: Wrapping, turns: list[AssistantTurn], first: int
) -> int:
    """The first step from ``first`` on whose trunk turn ``probe`` changes, its oracle moved on to its state there;
    ``first`` where that is not within the stage's own recorded oracle states."""
    trunk = recorder.states[first][0]
    k = first
    while k < len(turns) and not probe.departs(turns[k]):
        k += 1
    if k == first or k >= len(turns) or stage_at[k] != stage_at[first] or recorder.states[k][0] is not trunk:
        return first
    _move(probe.run, recorder.states[k][1])
    return k


def resume(recorder: OracleRecorder, k: int, run: object) -> bool:
    """Put ``run``, an oracle of a spec whose reference is the trunk's, in the state the trunk's oracle was in before
    step ``k`` of a single-stage trunk; False (``run`` untouched) where it did not start as that oracle did."""
    if type(run) is not OracleRun or not recorder.states or k >= len(recorder.states):
        return False
    trunk, start = recorder.states[0]
    if type(trunk) is not OracleRun or recorder.states[k][0] is not trunk or not _same_start(run, trunk, start):
        return False
    mine, theirs = run.spec.reference, trunk.spec.reference
    if len(mine) != len(theirs) or _shared_steps(mine, theirs) < len(theirs):
        return False
    _move(run, recorder.states[k][1])
    return True


def _move(run: OracleRun, state: Fields) -> None:
    """``run`` in the recorded ``state`` of another oracle, keeping its own spec."""
    spec = run.spec
    state.put(run)
    run.spec = spec


def _same_start(probe: OracleRun, trunk: OracleRun, start: Fields) -> bool:
    """Whether the probe's oracle is now as the trunk's was when it began: nothing played, the same knowledge, the
    same call ids, the same user (whose facts its questions read)."""
    mine = {k: v for k, v in vars(probe).items() if k != "spec"}
    theirs = {k: v for k, v in start.values.items() if k != "spec"}
    return mine == theirs and (probe.spec.user is trunk.spec.user or probe.spec.user == trunk.spec.user)


def _shared_steps(mine: Sequence[ReferenceStep], theirs: Sequence[ReferenceStep]) -> int:
    n = 0
    for a, b in zip(mine, theirs, strict=False):
        if a is not b and a != b:
            break
        n += 1
    return n


@dataclass
class ReferenceTrunk:
    """The reference run recorded for forking, with its oracle's states: what every probe run starts from."""

    trunk: Trunk
    recorder: OracleRecorder

    @classmethod
    def record(cls, env: Environment) -> ReferenceTrunk:
        """Play the reference in ``env`` (which ends the episode as a plain run would leave it)."""
        recorder = OracleRecorder(actor_for(OracleTeacher(), env.spec))
        return cls(Trunk.record(env, recorder), recorder)

    @property
    def env(self) -> Environment:
        return self.trunk.env

    def played_steps(self) -> list[int]:
        """The reference step (index) each episode step played, in order (a retry after an error plays its step
        again); empty for a staged run, whose stages each count their own steps."""
        states = self.recorder.states
        oracles = [run for run, _ in states if type(run) is OracleRun]
        if not states or len(oracles) < len(states):
            return []
        after = [int(state.values["cursor"]) for _, state in states[1:]] + [oracles[-1].cursor]
        return [max(cursor - 1, 0) for cursor in after]

    def play(self, actor: Policy) -> str | None:
        """``actor``'s episode, forked from the reference where it departs (see :meth:`Trunk.play`)."""
        return self.trunk.play(actor, self._start(actor))

    def _start(self, actor: Policy) -> int:
        return fast_forward(self.recorder, self.trunk.stage_at, actor, self.trunk.turns)
