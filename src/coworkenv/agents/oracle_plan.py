"""The oracle's play of a spec, remembered: later episodes of the spec replay its turns instead of working them
out again.

The oracle is deterministic: its next turn depends only on the spec and on the tool results it has read so far
(the content of each pending call's result, in order). A rollout plays each spec many times, and the results read
are mostly the same, so a :class:`Plan` keeps the tree of what the oracle did: from each point of its play, for
each result read there, the turn it made and the state it went on in. A :class:`ReplayedRun` follows the tree
while the results match, and plays on as a plain :class:`~coworkenv.agents.oracle.OracleRun` from the point they
stop matching (its bindings restored as they were there). A replayed turn is built afresh, its call and
arguments its own, equal to the turn first made there.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from coworkenv.agents.oracle import OracleRun, OracleTeacher, StagedRun, stage_prefix, tool_call, turn
from coworkenv.runtime.turn import AssistantTurn, ToolCall
from coworkenv.spec.models import CallStep, TaskSpec

_START = ("start",)
"""The key of a turn made with no call pending (no result to read)."""
_NOT_FOUND = ("not found",)
"""The key of a turn made while the pending call's result was not among the messages."""
_SCALARS = (str, int, float, bool, type(None))
_PLANS_LIMIT = 128


def _flat(arguments: Any) -> bool:
    """Whether a shallow copy of the arguments shares no container with them."""
    return type(arguments) is dict and all(type(v) in _SCALARS for v in arguments.values())


def _own(arguments: Any, flat: bool) -> Any:
    """A copy of a call's arguments that shares no container with them (text is kept: it cannot change)."""
    if flat:
        return dict(arguments)
    return arguments if type(arguments) is str else copy.deepcopy(arguments)


def _bindings(ctx: dict[str, Any]) -> dict[str, Any]:
    """A copy of a run's bindings that a later fact learnt does not change (facts are the only binding it edits)."""
    return {**ctx, "facts": dict(ctx["facts"])}


@dataclass(frozen=True)
class Move:
    """A turn the oracle made, and its state after it (bindings with the facts learnt copied)."""

    content: str | None
    call: tuple[str, str, Any, bool] | None  # id, name, arguments, whether they are flat (see _own)
    cursor: int
    calls: int
    retries: int
    step: CallStep | None  # the step whose call is pending after the turn
    ctx: dict[str, Any]

    def bindings(self) -> dict[str, Any]:
        return _bindings(self.ctx)


class Point:
    """A point of the oracle's play: the move that led there, and where each result read next leads."""

    __slots__ = ("move", "next")

    def __init__(self, move: Move | None) -> None:
        self.move = move
        self.next: dict[Any, Point] = {}


class Plan:
    """The tree of an oracle's play of one spec (or stage view), at most ``limit`` moves: past it, runs play on
    without remembering (a spec whose results vary without end, e.g. under random faults, stays bounded)."""

    def __init__(self, limit: int = 256) -> None:
        self.root = Point(None)
        self.size = 0
        self.limit = limit

    def add(self, point: Point, key: Any, move: Move) -> Point | None:
        if self.size >= self.limit:
            return None
        self.size += 1
        point.next[key] = Point(move)
        return point.next[key]


class ReplayedRun(OracleRun):
    """An :class:`OracleRun` that replays what its plan remembers and remembers what it works out."""

    name = "oracle"

    def __init__(self, spec: TaskSpec, plan: Plan, call_prefix: str = "call_") -> None:
        super().__init__(spec, call_prefix)
        self.plan = plan
        self.point: Point | None = plan.root
        self.stale = False  # True while ``ctx`` lags behind ``point`` (replayed moves leave it as it was)

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        key = self._read(messages)
        point = self.point
        if point is not None and key is not None:
            known = point.next.get(key)
            if known is not None:
                self.point, self.stale = known, True
                return self._replay(known.move)  # type: ignore[arg-type]  # every point but the root has a move
        if self.stale:
            assert point is not None and point.move is not None
            self.ctx, self.stale = point.move.bindings(), False
        made = super().act(messages, tools)
        self.point = self._remember(point, key, made) if point is not None and key is not None else None
        return made

    def _read(self, messages: list[dict[str, Any]]) -> Any:
        """What the next turn depends on: the pending call's result, as :meth:`OracleRun.act` reads it (None:
        a result that is not text, which only the plain run handles)."""
        if self.pending is None:
            return _START
        call_id = self.pending[1].__dict__["id"]
        for m in reversed(messages):
            if m.get("role") == "tool" and m.get("tool_call_id") == call_id:
                content = m.get("content", "")
                return content if type(content) is str else None
        return _NOT_FOUND

    def _replay(self, move: Move) -> AssistantTurn:
        self.cursor, self.calls, self.retries = move.cursor, move.calls, move.retries
        if move.call is None:
            self.pending = None
            return turn(move.content)
        call_id, name, arguments, flat = move.call
        call = tool_call(call_id, name, _own(arguments, flat))
        self.pending = (move.step, call) if move.step is not None else None
        return turn(move.content, [call])

    def _remember(self, point: Point, key: Any, made: AssistantTurn) -> Point | None:
        """The point the turn just made leads to, added to the plan (None where it cannot be replayed exactly)."""
        fields = made.__dict__
        content, calls = fields["content"], fields["tool_calls"]
        if type(made) is not AssistantTurn or not (content is None or type(content) is str) or fields["usage"]:
            return None
        given = made.model_fields_set
        if len(calls) > 1 or given != ({"content", "tool_calls"} if calls else {"content"}):
            return None
        call = calls[0] if calls else None
        pending = self.pending
        if (pending is None) != (call is None) or (pending is not None and pending[1] is not call):
            return None
        if call is not None and (type(call) is not ToolCall or call.model_fields_set != {"id", "name", "arguments"}):
            return None
        if call is None:
            spec_call = None
        else:
            arguments = call.arguments
            flat = _flat(arguments)
            spec_call = (call.id, call.name, _own(arguments, flat), flat)
        step = None if pending is None else pending[0]
        move = Move(content, spec_call, self.cursor, self.calls, self.retries, step, _bindings(self.ctx))
        return self.plan.add(point, key, move)


class ReplayingTeacher(OracleTeacher):
    """The oracle teacher of rollouts: its runs of a spec share one :class:`Plan` (per stage view of a multi-stage
    spec), kept for the latest few specs it met. Plays exactly as :class:`OracleTeacher` does."""

    def __init__(self) -> None:
        super().__init__()
        self._plans: dict[tuple[int, int], tuple[TaskSpec, Plan]] = {}

    def plan(self, spec: TaskSpec, stage: int = 0) -> Plan:
        """The plan of ``spec`` (of its stage ``stage``): a spec is data nothing edits in place, so the same object
        means the same play (and the same stage views, which are rebuilt from it alike)."""
        hit = self._plans.get((id(spec), stage))
        if hit is not None and hit[0] is spec:
            return hit[1]
        if len(self._plans) >= _PLANS_LIMIT:
            self._plans.clear()
        plan = Plan()
        self._plans[(id(spec), stage)] = (spec, plan)  # the spec is held: its id cannot be reused while it is here
        return plan

    def for_task(self, spec: TaskSpec) -> ReplayedRun | StagedRun:  # type: ignore[override]
        if not spec.stages:
            return ReplayedRun(spec, self.plan(spec))
        views = self.views(spec)
        return StagedRun([ReplayedRun(view, self.plan(spec, k), stage_prefix(k)) for k, view in enumerate(views)])
