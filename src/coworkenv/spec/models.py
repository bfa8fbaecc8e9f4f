"""The TaskSpec: one environment as data.

Everything an episode needs — fixtures, the scripted user, exposed tools, workflow
rules, scheduled events, injected faults, checks and the executable reference
solution — is a validated pydantic model, so a spec can be written by hand, generated,
serialised, hashed and diffed. Expressions inside a spec use :mod:`coworkenv.expr`.
The parts live in their own modules (rules, events, checks, reference, clock); this
module holds the spec and its stages and re-exports the parts, so
``from coworkenv.spec.models import X`` keeps working for every one of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field, model_validator

from coworkenv.spec.base import SpecModel as _Model
from coworkenv.spec.checks import (
    GUARD_KINDS,
    AnswerContains,
    AnswerCounts,
    AnswerNumber,
    AskedUser,
    Check,
    CheckModel,
    ConfirmedBefore,
    Count,
    FieldEquals,
    FieldMatches,
    FieldNumber,
    MaxCalls,
    Order,
    RecordAbsent,
    RecordExists,
    ToolCalled,
    ToolNotCalled,
    Unchanged,
)
from coworkenv.spec.clock import CLOCK_FORMAT, CLOCK_PATTERN, Advance, parse_clock
from coworkenv.spec.declared import ServiceDecl
from coworkenv.spec.events import TRANSIENT_ERROR, Event, Fault, Mutation, Record
from coworkenv.spec.interface import Interface, ToolRendering
from coworkenv.spec.reference import AnswerStep, AskStep, CallStep, ConfirmStep, ReferenceStep
from coworkenv.spec.rules import Rule
from coworkenv.spec.user import HiddenFact, Request, UserScript

MAX_REFERENCE_STEPS = 200
"""Steps of one reference solution (the spec's or a stage's); the verifier runs each many times (the largest in
the banks has 11)."""
MAX_TURNS = 500
"""A spec's turn limit (the largest in the banks is 50)."""
MAX_TOOL_CALLS = 1000
"""A spec's tool-call limit (the largest in the banks is 60)."""

__all__ = [
    "CLOCK_FORMAT",
    "CLOCK_PATTERN",
    "GUARD_KINDS",
    "TRANSIENT_ERROR",
    "Advance",
    "AnswerContains",
    "AnswerCounts",
    "AnswerNumber",
    "AnswerStep",
    "AskStep",
    "AskedUser",
    "CallStep",
    "Check",
    "CheckModel",
    "ConfirmStep",
    "ConfirmedBefore",
    "Count",
    "Event",
    "Fault",
    "FieldEquals",
    "FieldMatches",
    "FieldNumber",
    "Fixtures",
    "HiddenFact",
    "Interface",
    "MaxCalls",
    "Mutation",
    "Order",
    "Provenance",
    "Record",
    "RecordAbsent",
    "RecordExists",
    "ReferenceStep",
    "Request",
    "Rule",
    "ServiceDecl",
    "Stage",
    "TaskSpec",
    "ToolCalled",
    "ToolNotCalled",
    "ToolRendering",
    "Unchanged",
    "UserScript",
    "parse_clock",
]

Fixtures = dict[str, dict[str, list[Record]]]
"""service name -> collection name -> records (each with a unique ``id``)."""


# --- stages (multi-day workflows) ---------------------------------------------------------


class Stage(_Model):
    """A later stage (day) of a multi-stage workflow; the spec's own request is the first stage.

    Between stages the clock advances and ``mutations`` change the workspace (mail that
    arrived overnight, a meeting someone moved). ``context`` says what the agent still sees:
    ``conversation`` (the chat goes on) or ``notes`` (a fresh chat that shows only the
    document the agent wrote at ``notes`` in the documents service). The stage's own checks
    are graded on the state at its end and on what happened during it. Its own ``events`` and
    ``faults`` happen only during it, counted from its start (the spec's own ones run all along).
    """

    id: str = Field(pattern=r"^[A-Za-z0-9_-]+$")
    advance: Advance
    mutations: list[Mutation] = Field(
        default_factory=list, description="changes made before the stage begins (overnight mail, a moved meeting)"
    )
    notify: str | None = Field(None, description="what the agent is told changed since the last stage")
    context: Literal["conversation", "notes"] = "conversation"
    notes: str | None = Field(
        None, pattern=r"^/[^/]", description="documents path of the note shown when context is 'notes'"
    )
    user: Request
    events: list[Event] | None = Field(
        None, description="events of this stage only: they fire during it, 'after_step' counting from its start"
    )
    faults: list[Fault] | None = Field(
        None, description="faults of this stage only: 'on_call' counts the calls made during it"
    )
    checks: list[Check] = Field(min_length=1)
    reference: list[ReferenceStep] = Field(min_length=1, max_length=MAX_REFERENCE_STEPS)

    @model_validator(mode="after")
    def _notes_path(self) -> Stage:
        if (self.context == "notes") != (self.notes is not None):
            raise ValueError("'notes' (a documents path) goes with context 'notes', and only with it")
        if not isinstance(self.reference[-1], AnswerStep):
            raise ValueError("reference: a stage's reference ends with an answer (the report that ends the stage)")
        return self


# --- the spec -----------------------------------------------------------------------------


class Provenance(_Model):
    source: str = "handwritten"
    blueprint: str | None = None
    seed: int | None = None
    modifiers: list[str] = Field(default_factory=list)
    generator_version: str | None = None
    evaluation_only: Literal[True] | None = Field(
        default=None,
        description="true for imported tasks graded by their source's own rubric: evaluation may run them, "
        "training banks and SFT/RL exports must not take them",
    )


class TaskSpec(_Model):
    """One environment: the workspace (fixtures), the user, the tools, rules, events and faults, the checks
    that grade an episode and the reference solution that passes them."""

    id: str
    title: str
    description: str = ""
    services: Fixtures = Field(description="fixture records per service and collection")
    declared_services: dict[str, ServiceDecl] | None = Field(
        None, description="services declared as data (collections, fields, tools) for services with no built-in class"
    )
    tools: list[str] | None = Field(None, description="exposed tools; None = every tool of the services")
    interface: Interface | None = Field(
        None, description="how the tools look to the agent (names, arguments, results); None = as defined"
    )
    context: str = Field("", description="extra system-prompt text: who the agent works for, the date")
    user: UserScript
    rules: list[Rule] = Field(default_factory=list, description="workflow rules, checked on every tool call")
    events: list[Event] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)
    checks: list[Check] = Field(min_length=1)
    reference: list[ReferenceStep] = Field(min_length=1, max_length=MAX_REFERENCE_STEPS)
    capabilities: list[str] = Field(default_factory=list)
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    max_turns: int = Field(30, ge=1, le=MAX_TURNS)
    max_tool_calls: int = Field(40, ge=1, le=MAX_TOOL_CALLS)
    clock: str | None = Field(None, pattern=CLOCK_PATTERN, description="the workspace time at the start")
    stages: list[Stage] | None = Field(
        None, min_length=1, description="later stages (days); the spec's own request, checks, reference: the first"
    )
    provenance: Provenance = Field(default_factory=Provenance)

    @model_validator(mode="before")
    @classmethod
    def _legacy_rules_key(cls, data: object) -> object:
        """Specs written before the key was ``rules`` name it ``policies``: both load, one of them at most."""
        if isinstance(data, dict) and "policies" in data:
            if "rules" in data:
                raise ValueError("give the workflow rules once, under 'rules' ('policies' is its older name)")
            data = {("rules" if k == "policies" else k): v for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _unique_ids(self) -> TaskSpec:
        stages = self.stages or []
        for label, ids in (
            ("checks", [c.id for c in self.all_checks]),
            ("rules", [p.id for p in self.rules]),
            ("events", [e.id for e in self.all_events]),
            ("user.hidden_facts", [f.slot for f in self.all_facts]),
            ("stages", [s.id for s in stages]),
        ):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            if dupes:
                raise ValueError(f"duplicate ids in {label}: {dupes}")
        undeclared = sorted(set(self.declared_services or {}) - set(self.services))
        if undeclared:
            raise ValueError(
                f"declared_services: {undeclared} have no entry in services (give it fixtures, maybe empty)"
            )
        for service, collections in self.services.items():
            for collection, records in collections.items():
                record_ids = [r.get("id") for r in records]
                if not all(isinstance(i, str) and i for i in record_ids) or len(set(record_ids)) != len(record_ids):
                    raise ValueError(f"services.{service}.{collection}: every record needs a unique text 'id'")
        if self.stages is not None:
            self._check_stages(self.stages)
        return self

    def _check_stages(self, stages: list[Stage]) -> None:
        """A staged spec needs a clock that only moves forward, a first stage that ends with a report, and the
        documents service wherever a stage carries notes."""
        if self.clock is None:
            raise ValueError("clock: a spec with stages needs the workspace time at the start (YYYY-MM-DDTHH:MM)")
        now = parse_clock(self.clock)
        if not isinstance(self.reference[-1], AnswerStep):
            raise ValueError("reference: with stages, the first stage's reference ends with an answer (its report)")
        for i, stage in enumerate(stages):
            try:
                later = stage.advance.apply(now)
            except ValueError as exc:
                raise ValueError(f"stages[{i}].advance: {exc}") from None
            if later <= now:
                raise ValueError(f"stages[{i}].advance: the clock must move forward (from {now:%Y-%m-%dT%H:%M})")
            now = later
            if stage.context == "notes" and "documents" not in self.services:
                raise ValueError(f"stages[{i}].context: 'notes' needs the documents service, where the note lives")

    @property
    def all_checks(self) -> list[CheckModel]:
        """Every check of every stage, the first stage's first."""
        return [*self.checks, *(c for s in self.stages or [] for c in s.checks)]

    @property
    def all_events(self) -> list[Event]:
        """The spec's events and every stage's (ids are unique across them: a trajectory names an event by id)."""
        return [*self.events, *(e for s in self.stages or [] for e in s.events or [])]

    @property
    def all_facts(self) -> list[HiddenFact]:
        """Every hidden fact of every stage's request."""
        return [*self.user.hidden_facts, *(f for s in self.stages or [] for f in s.user.hidden_facts)]

    @property
    def is_multi_turn(self) -> bool:
        """Needs more than one user turn: a clarification, a confirmation, a follow-up or a persona's replies."""
        u = self.user
        if self.stages or u.persona_turns is not None:
            return True
        return bool(u.hidden_facts or u.follow_ups or any(isinstance(s, ConfirmStep) for s in self.reference))


def refuse_evaluation_only(specs: Iterable[TaskSpec], where: str) -> None:
    """Raise ValueError when ``specs`` hold an evaluation-only spec (an imported task graded by its source's own
    rubric): training on it would train on the benchmark. ``where`` names what was asked to take them."""
    imported = [s.id for s in specs if s.provenance.evaluation_only]
    if imported:
        raise ValueError(
            f"{where}: {len(imported)} evaluation-only environment(s) (imported tasks, e.g. {imported[0]}) "
            "cannot be trained on; run them with `coworkenv eval`"
        )
