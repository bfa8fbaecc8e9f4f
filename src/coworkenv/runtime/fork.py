"""Forking an environment: snapshots between steps, and episodes that start from a recorded one.

The verifier plays a dozen probes per spec, and most replay the reference's opening
unchanged before they do their one wrong thing. A :class:`Trunk` plays the reference once,
keeping a :class:`Snapshot` of the environment before every step; :meth:`Trunk.play` then
asks a probe for its turns on the trunk's views while they equal the trunk's turns, and
only from the first turn that differs restores that step's snapshot and steps for real. The
environment is deterministic in its state and the turn, so the result equals a full replay
(the tests compare every field of the environment after both, on every example and bank).

A snapshot copies what a step can change and shares what it never changes: records, step
and call records, messages and firings already made are replaced, never edited, so the
copies are one level deep (the changed collections, the lists and dicts that hold them).
A snapshot restores only into the environment it was taken from.

:meth:`Trunk.branch` plays the same episode in a world changed from some step on (a
stage's changes, or the events, left out): the world is the trunk's up to that step, so it
starts from the trunk's snapshot there, changed.
"""

from __future__ import annotations

import copy
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from coworkenv.grading.tracking import SNAPSHOT_NESTED, SNAPSHOT_SHARED

if TYPE_CHECKING:
    from coworkenv.runtime.environment import Environment
    from coworkenv.runtime.policy import Policy
    from coworkenv.runtime.turn import AssistantTurn
    from coworkenv.runtime.user import ScriptedUser
    from coworkenv.runtime.workspace import Workspace
    from coworkenv.services.base import Record

COMPONENTS = ("workspace", "tracker", "scheduler", "user", "log", "stages", "_rng", "fired")
"""Environment attributes snapshotted on their own; every other attribute is copied one level."""
SETTINGS = ("stop_at_failed_stage",)
"""Environment attributes that say how its caller runs episodes, not where one stands: a restore keeps them."""
_KEPT = (*COMPONENTS, *SETTINGS)
"""What a restore keeps of the environment as it is (the components are then put back in place)."""
_CONTAINERS = (list, dict, set)
T = TypeVar("T")


class Layout:
    """How a component's attributes are copied: all containers one level, except these."""

    __slots__ = ("nested", "shared", "skip")

    def __init__(self, nested: tuple[str, ...] = (), shared: frozenset[str] = frozenset()) -> None:
        self.nested = nested
        """Containers whose items change after they are made (copied two levels)."""
        self.shared = shared
        """Containers made with the component and never changed after (kept, not copied)."""
        self.skip = shared.union(nested)


_PLAIN = Layout()
LAYOUTS = {
    "tracker": Layout(SNAPSHOT_NESTED, SNAPSHOT_SHARED),
    "scheduler": Layout(("pending",), frozenset({"events", "by_tool"})),  # a firing's mutations change as it fires
    "stages": Layout(shared=frozenset({"stages", "views", "times", "clocks"})),
    "log": _PLAIN,
    "user": _PLAIN,
}


class Fields:
    """An object's attributes at one moment, kept apart from the object's later changes.

    A plain slotted class, not a dataclass: the verifier takes several per step of every reference run."""

    __slots__ = ("copied", "nested", "values")

    def __init__(self, values: dict[str, Any], copied: tuple[str, ...] = (), nested: tuple[str, ...] = ()) -> None:
        self.values = values
        self.copied = copied
        self.nested = nested

    @classmethod
    def of(cls, values: dict[str, Any], layout: Layout = _PLAIN) -> Fields:
        """The attributes ``values`` (an object's ``vars``), copied where later changes would reach them."""
        skip = layout.skip
        copied = tuple([k for k, v in values.items() if isinstance(v, _CONTAINERS) and k not in skip])
        nested = tuple([k for k in layout.nested if values.get(k) is not None])
        return cls(_fresh(values, copied, nested), copied, nested)

    def fresh(self) -> dict[str, Any]:
        """The attributes, with new copies of the containers (the snapshot stays as it was for the next restore)."""
        return _fresh(self.values, self.copied, self.nested)

    def put(self, obj: object) -> None:
        """Give ``obj`` these attributes (a new attribute dict: nothing holds on to an object's ``vars``)."""
        obj.__dict__ = _fresh(self.values, self.copied, self.nested)

    def make(self, cls: type[T]) -> T:
        """A new object of ``cls`` with these attributes (for components the environment replaces, e.g. the user)."""
        obj = object.__new__(cls)
        self.put(obj)
        return obj


def _fresh(values: dict[str, Any], copied: tuple[str, ...], nested: tuple[str, ...]) -> dict[str, Any]:
    """``values`` with new copies of the ``copied`` containers and of the containers inside the ``nested`` ones."""
    out = values.copy()
    for key in copied:
        out[key] = out[key].copy()
    for key in nested:
        value = out[key]
        if isinstance(value, dict):
            out[key] = {k: v.copy() if isinstance(v, _CONTAINERS) else v for k, v in value.items()}
        else:  # firings: their mutations are replaced when they fire
            out[key] = [copy.copy(v) for v in value]
    return out


@dataclass(frozen=True)
class WorkspaceState:
    """The records changed since the workspace's reset (whole collections: their order matters), the lookup
    indexes over those collections and the ranks that keep their buckets in the table's order, the change log
    and the running state hash."""

    tables: dict[tuple[str, str], dict[str, Record]]
    indexes: dict[tuple[str, str], dict[tuple[str, str, bool], dict[object, dict[str, None]]]]
    positions: dict[tuple[str, str], dict[str, int]]
    changes: tuple[tuple[str, str, str], ...]
    reordered: frozenset[tuple[str, str]]
    digest: Fields
    hashed: int

    @classmethod
    def of(cls, ws: Workspace) -> WorkspaceState:
        touched = _touched(ws)
        return cls(
            tables={(s, c): dict(ws.state[s][c]) for s, c in touched},
            indexes={(s, c): _indexes(ws, s, c) for s, c in touched},
            positions={(s, c): dict(p) for s, c in touched if (p := ws.services[s]._positions.get(c)) is not None},
            changes=tuple(ws.changes),
            reordered=frozenset(ws._reordered),
            digest=Fields.of(vars(ws._digest)),
            hashed=ws._hashed,
        )

    def put(self, ws: Workspace) -> None:
        """Back to this state: collections changed now but not then go back to their initial records, those changed
        then get their records and indexes of then; untouched collections are as they were."""
        for service, collection in _touched(ws) - self.tables.keys():
            ws.services[service].restore(collection, ws.initial[service][collection])
        for (service, collection), records in self.tables.items():
            svc = ws.services[service]
            svc.restore(collection, records)
            for key, index in self.indexes[(service, collection)].items():
                svc._indexes[key] = {value: dict(bucket) for value, bucket in index.items()}
            positions = self.positions.get((service, collection))
            if positions is not None:
                svc._positions[collection] = dict(positions)
        ws.changes[:] = self.changes
        ws._reordered.clear()
        ws._reordered.update(self.reordered)
        self.digest.put(ws._digest)
        ws._hashed = self.hashed
        ws.epoch += 1  # readers of the change log (the check tracker) start over, as after a reset


def _touched(ws: Workspace) -> set[tuple[str, str]]:
    return {(s, c) for s, c, _ in ws.changes} | ws._reordered


def _indexes(
    ws: Workspace, service: str, collection: str
) -> dict[tuple[str, str, bool], dict[object, dict[str, None]]]:
    """Copies of the lookup indexes over one collection: a bucket's order is the order lookups return."""
    return {
        key: {value: dict(bucket) for value, bucket in index.items()}
        for key, index in ws.services[service]._indexes.items()
        if key[0] == collection
    }


@dataclass(frozen=True)
class Snapshot:
    """An environment between two steps: enough to put it back exactly there."""

    env: Fields
    workspace: WorkspaceState
    components: dict[str, Fields]
    user_type: type[ScriptedUser]
    rng: tuple[object, ...] | None

    @classmethod
    def of(cls, env: Environment) -> Snapshot:
        values = {k: v for k, v in vars(env).items() if k not in _KEPT}
        names = ("tracker", "scheduler", "log", "user") if env.stages is None else LAYOUTS
        parts = {name: Fields.of(vars(getattr(env, name)), LAYOUTS[name]) for name in names}
        return cls(Fields.of(values), WorkspaceState.of(env.workspace), parts, type(env.user), _rng_state(env))

    def put(self, env: Environment) -> None:
        """Put ``env`` (the environment this was taken from) back into this state."""
        values = self.env.fresh()
        mine = env.__dict__
        for name in _KEPT:  # the same components: the services and the tracker hold on to them
            values[name] = mine[name]
        env.__dict__ = values
        self.workspace.put(env.workspace)
        for name in ("tracker", "scheduler", "log"):
            self.components[name].put(getattr(env, name))
        env.tracker.epoch = env.workspace.epoch  # the tracker's copy of the change log is the snapshot's
        env.user = self.components["user"].make(self.user_type)  # a new stage replaces the user: no one holds it
        if env.stages is not None:
            self.components["stages"].put(env.stages)
        env.fired = env.scheduler.fired
        if self.rng is not None:
            env.rng.setstate(self.rng)


def _rng_state(env: Environment) -> tuple[object, ...] | None:
    """The generator's state; None where nothing draws from it (it draws only for random faults), so that it is
    still as the reset seeded it, in the trunk and in every fork alike."""
    return env.rng.getstate() if env.fault_rate else None


@dataclass
class Trunk:
    """One episode recorded for forking: before each step, what the agent saw, its turn, and the environment."""

    env: Environment
    views: list[tuple[list[dict[str, object]], list[dict[str, object]]]] = field(default_factory=list)
    turns: list[AssistantTurn] = field(default_factory=list)
    states: list[Snapshot] = field(default_factory=list)
    """``states[k]``: the environment after k steps, up to the last step (one more than ``turns``)."""
    stage_at: list[int] = field(default_factory=list)
    """The stage each step acts in (and the stage of the failed ask, after a policy error)."""
    fired: list[int] = field(default_factory=list)
    """How many events had fired before each step (``fired[k]``: after k steps)."""
    error: str | None = None
    shared_steps: int = 0
    """Steps that forks took from the trunk instead of playing them (what forking saved)."""

    @classmethod
    def record(cls, env: Environment, actor: Policy) -> Trunk:
        """Play ``actor`` in ``env`` from a reset, as :func:`~coworkenv.runtime.episode.play_out` does, keeping
        what forks need; ``env`` ends the episode as play_out leaves it."""
        trunk = cls(env)
        obs = env.reset()
        while not obs.done:
            trunk.states.append(Snapshot.of(env))
            trunk.stage_at.append(env.stages.index if env.stages is not None else 0)
            trunk.fired.append(len(env.fired))
            messages = list(env.messages)
            trunk.views.append((messages, obs.tools))
            try:
                turn = actor.act(list(messages), obs.tools)
            except Exception as exc:  # a crashing policy ends its episode, as in play_out
                trunk.views.pop()
                trunk.error = f"{type(exc).__name__}: {exc}"
                env.end("policy_error")
                return trunk
            trunk.turns.append(turn)
            obs = env.step(turn)
        trunk.states.append(Snapshot.of(env))
        return trunk

    def play(self, actor: Policy, start: int = 0) -> str | None:
        """Play ``actor`` in the trunk's environment: the episode play_out would play from a reset, with every
        step before the first turn that differs from the trunk's taken from the trunk. The policy's error, if any.

        ``start``: the caller vouches that the actor's turns before that step are the trunk's and that it is
        already in the state it would be in there. An actor with ``follows_trunk_stages = n`` is one whose first
        n stages are the trunk's policy (a staged run consults each stage's policy only in that stage)."""
        env = self.env
        start = max(start, bisect_left(self.stage_at, getattr(actor, "follows_trunk_stages", 0)))
        if start > len(self.views):  # the trunk's policy failed in a stage where this actor is that policy
            self.states[-1].put(env)
            env.end("policy_error")
            return self.error
        for k in range(start, len(self.views)):
            messages, tools = self.views[k]
            try:
                turn = actor.act(list(messages), tools)
            except Exception as exc:
                self.states[k].put(env)
                env.end("policy_error")
                return f"{type(exc).__name__}: {exc}"
            if turn != self.turns[k]:
                self.states[k].put(env)
                self.shared_steps += k
                env.step(turn)
                return _finish(env, actor)
        self.states[len(self.views)].put(env)
        self.shared_steps += len(self.views)
        return _finish(env, actor)

    def branch(
        self, k: int, change: Callable[[Environment], None], actor: Policy, *, trunk_turn: bool = True
    ) -> tuple[list[AssistantTurn], str | None]:
        """The turns of an episode in a world that is the trunk's up to step ``k`` and is then changed by
        ``change``: the trunk's turns before step ``k``, then ``actor``'s, in the trunk's environment (and the
        policy's error, if any). ``trunk_turn``: the turn at step ``k`` is the trunk's too (for an actor that only
        starts after it, e.g. a stage's fresh oracle), and the change takes effect within that step.

        ``change`` may only replace attributes that a snapshot puts back (the next fork undoes it), never edit what
        the snapshots share."""
        env = self.env
        self.states[k].put(env)
        self.shared_steps += k
        change(env)
        turns = self.turns[:k]
        if trunk_turn:
            turns.append(self.turns[k])
            env.step(self.turns[k])
        return turns, _finish(env, actor, turns)


def _finish(env: Environment, actor: Policy, turns: list[AssistantTurn] | None = None) -> str | None:
    """The rest of the episode from where ``env`` stands (play_out's loop), its turns added to ``turns``."""
    tools = env.router.schemas()
    while not env.done:
        try:
            turn = actor.act(list(env.messages), tools)
        except Exception as exc:
            env.end("policy_error")
            return f"{type(exc).__name__}: {exc}"
        if turns is not None:
            turns.append(turn)
        env.step(turn)
    return None
