"""What a probe is: a scripted wrong behaviour, and the runs it makes of one spec."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from coworkenv.agents.oracle import OracleRun
from coworkenv.runtime.policy import Messages, Policy, Tools
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec.models import AnswerStep, CallStep, ReferenceStep, TaskSpec

if TYPE_CHECKING:
    from coworkenv.verify.fast_forward import ReferenceTrunk

Variant = tuple[str, Policy]
"""One run a probe makes: its name, and the policy that plays it."""


class Fixed:
    """A policy that says the same kind of thing every turn and calls no tool."""

    def __init__(self, name: str, reply: Callable[[Messages], str]) -> None:
        self.name = name
        self.reply = reply

    def act(self, messages: Messages, tools: Tools) -> AssistantTurn:
        return AssistantTurn(content=self.reply(messages))


class Replay:
    """Replays a fixed list of turns, then only says it is done."""

    name = "replay"

    def __init__(self, turns: list[AssistantTurn]) -> None:
        self.turns = list(turns)

    def act(self, messages: Messages, tools: Tools) -> AssistantTurn:
        return self.turns.pop(0) if self.turns else AssistantTurn(content="Everything you asked for is done.")


def scripted(spec: TaskSpec, steps: Sequence[ReferenceStep], facts: Mapping[str, object] | None = None) -> OracleRun:
    """An oracle run over an edited reference, optionally knowing (or guessing) facts up front."""
    run = OracleRun(spec.model_copy(update={"reference": list(steps)}))
    if facts:
        run.ctx["facts"].update(facts)
    return run


class Probe(ABC):
    """Base of the probes: a name, whether it applies to a spec, and a run for the spec."""

    name = ""

    harmless_if_same_state = False
    """A run ending in the reference's exact final state did nothing wrong after all."""

    def applies(self, spec: TaskSpec) -> bool:
        return True

    def variants(self, spec: TaskSpec) -> list[Variant]:
        """(name, policy) for each run this probe makes of ``spec``; none when it has nothing to perturb."""
        return [(self.name, self.for_task(spec))] if self.applies(spec) else []

    @abstractmethod
    def for_task(self, spec: TaskSpec) -> Policy:
        """A fresh policy that plays this wrong behaviour on ``spec``."""


class Branching(Probe):
    """A probe whose runs replay a changed world: given the reference run, they branch from it where the world
    changes instead of replaying from a reset (the same turns)."""

    @abstractmethod
    def variants(self, spec: TaskSpec, trunk: ReferenceTrunk | None = None) -> list[Variant]:
        """(name, policy) per run; ``trunk``: the reference run of ``spec``, to branch from."""


class VariantProbe(Probe):
    """A probe that makes one run per thing it finds (each write, rule, event...) in the spec."""

    @abstractmethod
    def variants(self, spec: TaskSpec) -> list[Variant]:
        """(name, policy) per run; see ``Probe.variants``."""

    def for_task(self, spec: TaskSpec) -> Policy:
        """The first run (as ``--policy probe:<name>``); the plain reference where nothing applies."""
        return next((policy for _, policy in self.variants(spec)), OracleRun(spec))


def before_last_answer(steps: list[ReferenceStep], extra: list[CallStep]) -> list[ReferenceStep]:
    """``steps`` with ``extra`` calls inserted before the final report."""
    last = max((i for i, s in enumerate(steps) if isinstance(s, AnswerStep)), default=len(steps))
    return steps[:last] + list(extra) + steps[last:]
