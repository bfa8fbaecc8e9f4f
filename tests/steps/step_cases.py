"""Helpers of the step tests: build a chain of named steps, its spec, and score scripted agents on it."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from coworkenv.runtime.environment import Environment
from coworkenv.spec.models import AnswerStep, CallStep, TaskSpec
from coworkenv.synth.chains import phrase
from coworkenv.synth.draft import finalize
from coworkenv.synth.steps import STEPS, Chain
from coworkenv.synth.world import World
from coworkenv.verify.admission import play, verify
from coworkenv.verify.probe_base import scripted

PASS = 0.75


def chain_of(seed: int, *names: str) -> Chain:
    """A chain of the named steps, applied in order on a fresh world."""
    chain = Chain(World(seed))
    for name in names:
        STEPS[name].apply(chain)
    return chain


def spec_of(seed: int, *names: str) -> TaskSpec:
    """The finalized spec of a chain of the named steps."""
    chain = chain_of(seed, *names)
    opening = phrase(random.Random(seed), chain.clauses)
    return finalize(chain.draft("composed:test", "test", [opening]), seed=seed)


def admitted(seed: int, *names: str) -> TaskSpec:
    """The chain's spec, which the verifier must admit as it is."""
    spec = spec_of(seed, *names)
    report = verify(spec)
    assert report.admitted, [(f.kind, f.where, f.evidence) for f in report.findings]
    return spec


def score(spec: TaskSpec, steps: list[Any] | None = None) -> float:
    """The score of an agent that plays ``steps`` (default: the reference)."""
    return play(Environment(spec), scripted(spec, spec.reference if steps is None else steps)).grade.score


def edit_call(spec: TaskSpec, tool: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> list[Any]:
    """The reference with the arguments of every call of ``tool`` changed."""
    out: list[Any] = []
    for step in spec.reference:
        if isinstance(step, CallStep) and step.call == tool:
            step = step.model_copy(update={"args": change(dict(step.args or {}))})
        out.append(step)
    assert any(isinstance(s, CallStep) and s.call == tool for s in out), f"no {tool} call"
    return out


def without(spec: TaskSpec, tool: str) -> list[Any]:
    """The reference without the calls of ``tool``."""
    return [s for s in spec.reference if not (isinstance(s, CallStep) and s.call == tool)]


def answered(spec: TaskSpec, text: str) -> list[Any]:
    """The reference with its report replaced by ``text``."""
    return [AnswerStep(answer=text) if isinstance(s, AnswerStep) else s for s in spec.reference]


def reads(spec: TaskSpec) -> str:
    """Everything the reference's calls return, as text: what an agent that plays it sees."""
    run = play(Environment(spec), scripted(spec, spec.reference))
    return " ".join(str(m.get("content", "")) for m in run.messages if m.get("role") == "tool")


def twice(spec: TaskSpec, tool: str) -> list[Any]:
    """The reference with every call of ``tool`` made twice."""
    out: list[Any] = []
    for step in spec.reference:
        out.append(step)
        if isinstance(step, CallStep) and step.call == tool:
            out.append(step)
    return out


def records(spec: TaskSpec, service: str, collection: str) -> list[dict[str, Any]]:
    return spec.services[service][collection]
