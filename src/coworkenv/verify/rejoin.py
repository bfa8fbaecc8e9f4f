"""A multi-stage probe run that begins a later stage where the reference run began it: the rest is the reference's.

A probe of stage k (``<probe>@stage<k>``) plays the reference's own stage oracles from stage
k+1 on. When such a run begins a later stage in the state in which the reference run began
that stage, the rest of its episode is the reference's: the environment and the oracles are
deterministic, and nothing else of the past reaches the future. Its outcome is then its own
past (its transcript so far, its grades of the stages before) followed by the reference's
future (the later stages' grades and messages, the final state), not played again.

"The state" is everything the rest of an episode reads, compared value by value and in order
(:func:`same_future`): the step count; the records of every collection either run changed
(lookups return a table's order whatever the history, so the ordered records are all a tool
reads); the stage's start, index and per-stage call counts; the pending events and what has
fired; the scripted user; tool counts, confirmation and the random generator; and the calls
made so far as the workflow rules and the user's context replies read them (tool, arguments,
success). What the rest never reads is the past's own: earlier messages (a stage oracle reads
only the results of its own calls, and the stage notice it plays by), earlier stages' grades,
answers, replies, violations and check tracking (a later stage is graded on its own steps).
Anything that differs, or a run whose later stages are not the reference's fresh oracles:
played to its end.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from coworkenv.agents.oracle import OracleRun, StagedRun, stage_prefix
from coworkenv.runtime.fork import Snapshot, Trunk, _touched

if TYPE_CHECKING:
    from coworkenv.runtime.environment import Environment
    from coworkenv.trajectory import Grade

_SCHEDULER = ("fired", "times", "pending", "armed", "local", "offset", "by_tool")
"""The event scheduler's state the rest of an episode reads (its events and indexes are the spec's; misses are
read only of the reference run)."""


@dataclass(frozen=True)
class Future:
    """What the reference run did from a stage's start on, as the verifier reads an episode."""

    stage: int
    grades: list[Grade]
    """The grades of this stage and every later one."""
    messages: list[dict[str, Any]]
    """The transcript from the stage's start on."""
    state_hash: str | None
    fired: set[str]
    done_reason: str
    records: int
    fired_at: dict[str, int]
    """Events that first fired after the stage began, and at which step."""
    starts: list[int]
    """The first step of each later stage."""


@dataclass
class Rejoin:
    """Where the reference run began each later stage, and what it did from there."""

    states: dict[int, tuple[Snapshot, Future]]

    @classmethod
    def of(cls, trunk: Trunk, reference: Any) -> Rejoin:
        """The stage starts of ``trunk`` (the reference run, ended as ``reference``, its Played, says)."""
        states: dict[int, tuple[Snapshot, Future]] = {}
        env = trunk.env
        if trunk.error is not None or env.stages is None:
            return cls(states)
        for stage in range(1, len(env.stages.views)):
            j = bisect_left(trunk.stage_at, stage)
            if j >= len(trunk.stage_at):
                break
            state = trunk.states[j]
            shown = len(state.env.values["messages"]) + len(state.components["stages"].values["earlier"])
            future = Future(
                stage=stage,
                grades=list(reference.grade.stages[stage:]),
                messages=reference.messages[shown:],
                state_hash=reference.state_hash,
                fired=reference.fired,
                done_reason=reference.done_reason,
                records=reference.records,
                fired_at={event: step for event, step in reference.fired_at.items() if step > j},
                starts=reference.starts[stage + 1 :],
            )
            states[len(state.env.values["_steps"])] = (state, future)
        return cls(states)

    def stop(self, actor: Any) -> _Stop | None:
        """The ``stop`` of :meth:`Trunk.play` for ``actor``, keeping the future it rejoins in ``found``; None where
        ``actor`` is not a staged run (whose stages may turn out to be the reference's fresh oracles)."""
        if not self.states or not isinstance(actor, StagedRun) or type(actor).act is not StagedRun.act:
            return None
        return _Stop(self, actor)


class _Stop:
    """Asked at each stage start of one run: whether it rejoins the reference there."""

    def __init__(self, rejoin: Rejoin, actor: StagedRun) -> None:
        self.rejoin = rejoin
        self.actor = actor
        self.found: Future | None = None

    def __call__(self, env: Environment) -> bool:
        hit = self.rejoin.states.get(env.step_count)
        if hit is None:
            return False
        state, future = hit
        assert env.stages is not None
        if env.stages.index != future.stage or not _reference_from(self.actor, env, future.stage):
            return False
        if not same_future(env, state):
            return False
        self.found = future
        return True


def _reference_from(actor: StagedRun, env: Environment, stage: int) -> bool:
    """Whether ``actor`` plays every stage from ``stage`` on with a fresh reference oracle of the stage (one that has
    not acted, over the environment's own stage view)."""
    assert env.stages is not None
    views = env.stages.views
    if len(actor.runs) != len(views):
        return False
    for k in range(stage, len(views)):
        run = actor.runs[k]
        if type(run) is not OracleRun or not (run.spec is views[k] or run.spec == views[k]):
            return False
        fresh = {"cursor": 0, "ctx": {"facts": {}}, "pending": None, "retries": 0, "calls": 0}
        if run.call_prefix != stage_prefix(k) or any(not same(getattr(run, a), v) for a, v in fresh.items()):
            return False
    return True


def same_future(env: Environment, state: Snapshot) -> bool:
    """Whether the rest of an episode from ``env`` now is the rest from ``state`` (see the module docstring)."""
    mine = vars(env)
    theirs = state.env.values
    if env.step_count != len(theirs["_steps"]) or env.done or theirs["done"]:
        return False
    for name in ("confirmed", "tool_counts"):
        if not same(mine[name], theirs[name]):
            return False
    if state.rng is not None and env.rng.getstate() != state.rng:
        return False
    if not _same_calls(env.log.calls, state.components["log"].values["calls"]):
        return False
    if type(env.user) is not state.user_type or not same(vars(env.user), state.components["user"].values):
        return False
    scheduler = vars(env.scheduler)
    other = state.components["scheduler"].values
    if any(not same(scheduler[name], other[name]) for name in _SCHEDULER):
        return False
    stages = vars(env.stages)
    staged = state.components["stages"].values
    if any(not same(stages[name], staged[name]) for name in ("index", "first_step", "calls")):
        return False
    return _same_records(env, state) and _same_state(stages["start"], staged["start"])


def _same_calls(mine: list[Any], theirs: list[Any]) -> bool:
    """The calls as rules and the user read them: tool, arguments, success, in order."""
    if len(mine) != len(theirs):
        return False
    for a, b in zip(mine, theirs, strict=True):
        if a is not b and not (a.tool == b.tool and a.ok is b.ok and same(a.args, b.args)):
            return False
    return True


def _same_records(env: Environment, state: Snapshot) -> bool:
    """The live records of every collection either changed, against the snapshot's (or the initial ones)."""
    ws = env.workspace
    saved = state.workspace.tables
    for service, collection in _touched(ws) | saved.keys():
        theirs = saved.get((service, collection), ws.initial[service][collection])
        if not _same_table(ws.state[service][collection], theirs):
            return False
    return True


def _same_state(mine: dict[str, Any] | None, theirs: dict[str, Any] | None) -> bool:
    if mine is None or theirs is None:
        return mine is theirs
    if list(mine) != list(theirs):
        return False
    for service, collections in mine.items():
        other = theirs[service]
        if list(collections) != list(other):
            return False
        if any(not _same_table(collections[c], other[c]) for c in collections):
            return False
    return True


def _same_table(mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    if mine is theirs:
        return True
    if len(mine) != len(theirs) or list(mine) != list(theirs):
        return False
    return all(a is b or same(a, b) for a, b in zip(mine.values(), theirs.values(), strict=True))


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types throughout, containers in the same order (``1 == True == 1.0`` and
    ``0.0 == -0.0`` are not the same value to a tool that prints it)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return len(a) == len(b) and all(
            type(ka) is type(kb) and ka == kb and same(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
        )
    if kind is list or kind is tuple:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if kind is float:
        return repr(a) == repr(b)
    if kind is set or kind is frozenset:
        return len(a) == len(b) and all(type(x) is str for x in a) and a == b
    if kind in (str, int, bool) or a is None:
        return bool(a == b)
    if hasattr(a, "__dict__") and not callable(a):
        return same(vars(a), vars(b))
    return bool(a == b)
