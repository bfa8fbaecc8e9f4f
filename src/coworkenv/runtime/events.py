"""The event scheduler: when a spec's events fire, and what exactly they change.

``after_step`` events fire once that many steps are done. ``on_tool`` events fire right
after a successful call of their tool whose arguments satisfy ``when``, or ``after`` steps
later; their mutations and notice are rendered from that call's arguments
(``"${args.thread_id}"``, the project's one template form), so an event can reply in the
thread the agent wrote to, to the person it wrote to. A call whose arguments lack a value a
template reads triggers nothing (a reply to no thread is no reply), and neither does one
whose ``when`` cannot be evaluated. An event fires once unless ``once: false``; a repeated
event's k-th firing (k ≥ 2) inserts its record under the id suffixed ``-k``, so it never
overwrites what an earlier firing added.

A later stage's own events are live only during that stage: ``begin_stage`` swaps them in,
counts their ``after_step`` from the stage's start, and drops the delayed firings of the
stage that ended. The spec's own events stay live all along.

A mutation that names its record by ``where`` is resolved when its event fires, against
the live workspace (so a record the agent created earlier can be changed): the first
match in the collection's order is changed; none, nothing. Each selector that found no
record or several is noted in ``missed``, which the verifier reads after the reference run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from coworkenv.expr import Context, ExprError, evaluate, format_value, references, render
from coworkenv.services.base import Record
from coworkenv.spec.checks import record_matches
from coworkenv.spec.models import Event, Mutation

Records = Callable[[str, str], Mapping[str, Record]]
"""The live records of a service's collection, in the collection's order (``Workspace.records``)."""


@dataclass
class Firing:
    """One firing of an event: its mutations and notice, rendered, and the step after which it happens."""

    event: Event
    mutations: list[Mutation]
    notify: str | None
    due: int


@dataclass(frozen=True)
class Miss:
    """A change by ``where`` that found no record, or several, when it was made."""

    owner: str
    """The id of the event that made it (of the stage, for a change between stages)."""
    index: int
    """Its place in the owner's mutations."""
    matches: int


def target(mutation: Mutation, records: Records) -> tuple[Mutation | None, int]:
    """``mutation`` with its ``where`` resolved to the first live record that matches (None when none does),
    and how many matched."""
    if mutation.where is None:
        return mutation, 1
    where = mutation.where
    found = [rid for rid, rec in records(mutation.service, mutation.collection).items() if record_matches(where, rec)]
    if not found:
        return None, 0
    return mutation.model_copy(update={"id": found[0], "where": None}), len(found)


def targets(owner: str, mutations: list[Mutation], records: Records, missed: list[Miss]) -> list[Mutation]:
    """The mutations with their selectors resolved, those that found nothing left out; misses noted in ``missed``."""
    out: list[Mutation] = []
    for j, mutation in enumerate(mutations):
        resolved, matches = target(mutation, records)
        if matches != 1:
            missed.append(Miss(owner, j, matches))
        if resolved is not None:
            out.append(resolved)
    return out


def _nothing(service: str, collection: str) -> Mapping[str, Record]:
    return {}


def _resolved(template: object, ctx: Context) -> bool:
    """Whether every ``${...}`` in ``template`` evaluates to a value (not null, no error)."""
    try:
        return all(evaluate(ref, ctx) is not None for ref in references(template))
    except ExprError:
        return False


def _when(event: Event, args: Mapping[str, object]) -> bool:
    if event.when is None:
        return True
    try:
        return bool(evaluate(event.when, {"args": args}))
    except ExprError:
        return False


class EventScheduler:
    """Decides which events fire at each step and on each call; the Environment applies them."""

    def __init__(
        self, events: list[Event], stage_events: Sequence[list[Event]] = (), records: Records = _nothing
    ) -> None:
        self.events = events
        self.stage_events = list(stage_events)
        """Per later stage (``spec.stages[k - 1]`` is stage ``k``): the events of that stage only."""
        self.records = records
        everyone = [*events, *(e for es in self.stage_events for e in es)]
        self.selecting = frozenset(e.id for e in everyone if any(m.where for m in e.mutations))
        """The events with a change by ``where`` (resolved as they fire); frozen, so a fork snapshot shares it."""
        self.by_step: dict[int, list[Event]] = {}  # the spec's own after_step events, in spec order: most steps none
        for event in events:
            if event.after_step is not None:
                self.by_step.setdefault(event.after_step, []).append(event)
        self.reset()

    def reset(self) -> None:
        self.fired: set[str] = set()
        self.times: dict[str, int] = {}
        self.pending: list[Firing] = []
        self.armed: set[str] = set()
        """Events that fire once and wait (``after``) for their step: a second trigger changes nothing."""
        self.missed: list[Miss] = []
        self._use_stage([], 0)

    def begin_stage(self, k: int, offset: int) -> None:
        """Stage ``k`` starts after ``offset`` steps: its events go live, the ended stage's delayed ones lapse."""
        ended = {e.id for e in self.local}
        self.pending = [f for f in self.pending if f.event.id not in ended]
        self.armed -= ended
        self._use_stage(self.stage_events[k - 1], offset)

    def _use_stage(self, local: list[Event], offset: int) -> None:
        self.local = local
        self.offset = offset
        self.by_tool: dict[str, list[Event]] = {}
        for event in [*self.events, *local]:
            if event.on_tool is not None:
                self.by_tool.setdefault(event.on_tool, []).append(event)

    def due(self, step: int) -> bool:
        """Whether :meth:`at_step` may fire anything at ``step`` (most steps: no; a stage's own events are looked
        at while it has some)."""
        return step in self.by_step or bool(self.pending) or bool(self.local)

    def at_step(self, step: int) -> list[Firing]:
        """The firings due once ``step`` steps are done: ``after_step`` events and delayed ``on_tool`` ones."""
        due = [
            Firing(e, list(e.mutations), e.notify, step) for e in self.by_step.get(step, ()) if e.id not in self.fired
        ]
        if self.local:
            here = step - self.offset  # steps done in the current stage
            due += [
                Firing(e, list(e.mutations), e.notify, step)
                for e in self.local
                if e.after_step == here and e.id not in self.fired
            ]
        due += [f for f in self.pending if f.due <= step]
        self.pending = [f for f in self.pending if f.due > step]
        return [self._fire(f) for f in due]

    def on_call(self, tool: str, args: Mapping[str, object], step: int) -> list[Firing]:
        """The firings a successful call triggers now; delayed ones are kept until their step."""
        now: list[Firing] = []
        ctx = {"args": args}
        for event in self.by_tool.get(tool, ()):
            if not event.repeats and (event.id in self.fired or event.id in self.armed):
                continue
            template = [event.notify, [m.model_dump() for m in event.mutations]]
            if not _when(event, args) or not _resolved(template, ctx):
                continue
            mutations = [
                m.model_copy(update={"record": render(m.record, ctx), "id": render(m.id, ctx)}) for m in event.mutations
            ]
            firing = Firing(
                event,
                mutations,
                format_value(render(event.notify, ctx)) if event.notify else None,
                step + (event.after or 0),
            )
            if event.after:
                self.pending.append(firing)
                self.armed.add(event.id)
            else:
                now.append(self._fire(firing))
        return now

    def _fire(self, firing: Firing) -> Firing:
        event = firing.event
        self.fired.add(event.id)
        self.armed.discard(event.id)
        times = self.times[event.id] = self.times.get(event.id, 0) + 1
        if times > 1:
            firing.mutations = [_suffixed(m, times) for m in firing.mutations]
        if event.id in self.selecting:
            firing.mutations = targets(event.id, firing.mutations, self.records, self.missed)
        return firing


def _suffixed(mutation: Mutation, times: int) -> Mutation:
    """An insert of a repeated event, under a fresh id (``msg-reply`` → ``msg-reply-2``)."""
    if mutation.op != "insert" or not mutation.record:
        return mutation
    return mutation.model_copy(update={"record": {**mutation.record, "id": f"{mutation.record['id']}-{times}"}})
