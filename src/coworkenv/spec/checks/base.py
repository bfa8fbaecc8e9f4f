"""What every check kind shares: its spec fields, its registration, and what checks read.

A check kind is one class. The class holds its spec fields (validated by pydantic), how it is
judged (on the workspace's records, on the episode's log, or on what the agent reported), whether
it is a guard, the names it refers to (for the static checks) and the hooks the verifier asks it
(the record it selects, the calls it bounds). Defining a subclass with a ``kind`` literal registers
it in :data:`KINDS`; the spec's ``Check`` union is built from that registry.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from pydantic import Field

from coworkenv.expr.evaluate import evaluate
from coworkenv.expr.ops import ExprError
from coworkenv.spec.base import SpecModel
from coworkenv.trajectory import ToolCallRecord, UserReply

if TYPE_CHECKING:
    from coworkenv.spec.checks.answers import Prompt

Record = dict[str, object]
Scope = Literal["state", "calls", "user", "answer"]
"""What a check reads: the workspace's records, the tool calls, the user's replies, or the agent's reports."""

KINDS: dict[str, type[CheckModel]] = {}
"""Every check kind by its ``kind`` string, in the order the kinds were defined."""


class Records(Protocol):
    """What state checks read: the live records, and the records as they were at the start (of the episode, or of
    the stage being graded)."""

    def records(self, service: str, collection: str) -> dict[str, Record]: ...

    def initial_records(self, service: str, collection: str) -> dict[str, Record]: ...


@dataclass
class EpisodeLog:
    """The parts of an episode the call, user and answer checks look at."""

    calls: list[ToolCallRecord] = field(default_factory=list)
    replies: list[UserReply] = field(default_factory=list)
    answers: list[tuple[int, str]] = field(default_factory=list)
    last_step: int = 0
    prompt: Prompt | None = None


@dataclass(frozen=True)
class Names:
    """What a check refers to, so the static checks can say that every name resolves."""

    collection: tuple[str, str] | None = None
    tools: tuple[tuple[str, str | None], ...] = ()
    """(spec field, tool name) pairs."""
    expressions: tuple[tuple[str, str | None], ...] = ()
    """(spec field, expression source) pairs."""
    record_id: str | None = None
    field: str | None = None
    slot: str | None = None


@dataclass(frozen=True)
class CallBound:
    """At most ``max`` successful calls of ``tool`` whose arguments match ``where``: what the guarded-action probe
    breaks by calling more often."""

    tool: str
    where: str | None
    max: int


def holds(expr: str, ctx: dict[str, object]) -> bool:
    """Whether an expression is true in ``ctx``; one that fails to evaluate counts as false."""
    try:
        return bool(evaluate(expr, ctx))
    except ExprError:
        return False


def record_matches(where: str, rec: Mapping[str, object]) -> bool:
    """Whether a record satisfies a ``where`` (as ``r``)."""
    return holds(where, {"r": rec})


class CheckModel(SpecModel):
    """The fields every check has. Subclasses set ``kind`` to a literal, which registers them."""

    id: str
    weight: float = Field(1.0, gt=0, le=1_000_000, allow_inf_nan=False)  # bounded: weights are summed
    description: str = ""
    required: bool = Field(
        False, description="the task fails when this check fails, whatever the rest (score capped below the pass mark)"
    )
    kind: str

    reads: ClassVar[Scope]
    guard: ClassVar[bool] = False
    """Says what must not happen: holds until the agent errs, so it may hold at the start."""
    selects_record: ClassVar[bool] = False
    """Picks out a record of the fixtures (a look-alike of it tests that the agent picked the right one)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: object) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        kind = cls.model_fields["kind"].default
        if isinstance(kind, str):
            if kind in KINDS:
                raise TypeError(f"check kind {kind!r} is defined twice ({KINDS[kind].__name__}, {cls.__name__})")
            KINDS[kind] = cls

    def names(self) -> Names:
        """The tools, collection, records, fields, slots and expressions this check refers to."""
        return Names()

    def is_guard(self, holds_at_start: bool) -> bool:
        """Whether the check is a guard in this spec, knowing whether it holds on the initial state."""
        return self.guard

    def call_bound(self) -> CallBound | None:
        """The calls this check bounds, for the probe that makes too many of them."""
        return None

    def forbidden_records(self) -> tuple[str, str, str] | None:
        """(service, collection, where) of the records this check says must not exist, for the probe that makes one."""
        return None

    def collateral_guard(self) -> tuple[str, str, str | None] | None:
        """(service, collection, allow) where this check forbids collateral changes, for the probe that makes one."""
        return None

    def stated_number(self) -> tuple[float, float] | None:
        """(value, tolerance) of a number a record must state, for the probe that writes a look-alike's number."""
        return None


class StateCheck(CheckModel):
    """A check on one collection's records at the end, judged one record at a time.

    Each record either counts toward the check (a *hit*) or not, judged from the record as it was at the start and
    as it is now; the verdict reads the hits. The same two methods judge a whole collection and keep a verdict
    current as records change (:mod:`coworkenv.grading.tracking`)."""

    reads: ClassVar[Scope] = "state"
    service: str
    collection: str

    def names(self) -> Names:
        return Names(collection=(self.service, self.collection), expressions=self.expressions())

    def expressions(self) -> tuple[tuple[str, str | None], ...]:
        return ()

    def hit(self, rid: str, old: Record | None, new: Record | None) -> bool:
        """Whether record ``rid`` counts toward the check (``None``: the record is absent then)."""
        raise NotImplementedError

    def candidates(self, initial: Mapping[str, Record], live: Mapping[str, Record]) -> Iterable[str]:
        """The records that can be hits (by default the records there now)."""
        return live

    def verdict(self, hits: Collection[str], live: Mapping[str, Record]) -> tuple[bool, str]:
        """(passed, detail) from the hits and the live records."""
        raise NotImplementedError

    def judge(self, state: Records) -> tuple[bool, str]:
        """(passed, detail) on the records ``state`` holds.

        Each record's verdict is kept with the two record versions it was judged on: records are replaced, never
        changed in place, so the same versions give the same verdict, and a workspace of hundreds of records pays
        only for those that changed since the last judgement (of any episode of these fixtures)."""
        initial = state.initial_records(self.service, self.collection)
        live = state.records(self.service, self.collection)
        memo = self._memo()
        hits = []
        for rid in self.candidates(initial, live):
            old, new = initial.get(rid), live.get(rid)
            seen = memo.get(rid)
            if seen is None or seen[0] is not old or seen[1] is not new:
                seen = memo[rid] = (old, new, self.hit(rid, old, new))
            if seen[2]:
                hits.append(rid)
        return self.verdict(hits, live)

    def _memo(self) -> dict[str, Verdict]:
        """This check's verdicts by record, kept beside the check (not on it: a check's equality is its fields), and
        dropped when one of its fields was assigned since."""
        hit = _VERDICTS.get(id(self))
        if hit is None or hit[0] is not self or hit[1] != self.__dict__:
            hit = _VERDICTS[id(self)] = (self, dict(self.__dict__), {})
            while len(_VERDICTS) > _VERDICTS_KEPT:
                _VERDICTS.popitem(last=False)
        else:
            _VERDICTS.move_to_end(id(self))
        return hit[2]


Verdict = tuple[Record | None, Record | None, bool]
"""A record's verdict, with the versions of it (at the start, now) it was judged on."""
_VERDICTS: OrderedDict[int, tuple[StateCheck, dict[str, object], dict[str, Verdict]]] = OrderedDict()
_VERDICTS_KEPT = 512
"""The checks whose verdicts are kept (the most recently judged): a bank's worker judges one spec at a time."""


class EpisodeCheck(CheckModel):
    """A check on what happened during the episode: the calls, the user's replies or the agent's reports."""

    def judge(self, log: EpisodeLog) -> tuple[bool, int | None, str]:
        """(passed, the step it first held, detail)."""
        raise NotImplementedError


class Hits(Collection[str]):
    """A check's hits as the records at the start gave them, less and plus what changed since (``delta``: record id
    -> whether it is a hit now, only where that differs from the start)."""

    __slots__ = ("baseline", "count", "delta")

    def __init__(self, baseline: frozenset[str], delta: Mapping[str, bool], count: int) -> None:
        self.baseline = baseline
        self.delta = delta
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __contains__(self, rid: object) -> bool:
        return isinstance(rid, str) and self.delta.get(rid, rid in self.baseline)

    def __iter__(self) -> Iterator[str]:
        yield from (rid for rid in self.baseline if self.delta.get(rid, True))
        yield from (rid for rid, now in self.delta.items() if now and rid not in self.baseline)
