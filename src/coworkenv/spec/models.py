"""The TaskSpec: one environment as data.

Everything an episode needs — fixtures, the scripted user, exposed tools, workflow
policies, scheduled events, injected faults, checks and the executable reference
solution — is a validated pydantic model, so a spec can be written by hand, generated,
serialised, hashed and diffed. Expressions inside a spec use :mod:`coworkenv.expr`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from coworkenv.patterns import pattern_problem
from coworkenv.spec.base import SpecModel as _Model
from coworkenv.spec.declared import ServiceDecl
from coworkenv.spec.user import HiddenFact, Request, UserScript

Record = dict[str, Any]
Fixtures = dict[str, dict[str, list[Record]]]
"""service name -> collection name -> records (each with a unique ``id``)."""


# --- workflow rules, events, faults ---------------------------------------------------------


class Rule(_Model):
    """A workflow rule checked on every tool call.

    ``when`` is an expression over ``args`` (the call's arguments) and ``state`` (the
    workspace); the rule applies only where it is true.
    - ``forbid``: the call is not allowed at all;
    - ``require_confirmation``: the user must have confirmed since the agent last spoke;
    - ``require_prior``: an earlier successful call of ``prior_tool`` must exist whose
      arguments satisfy ``prior_when`` (an expression over ``args`` and ``prior``).
    """

    id: str
    description: str
    tool: str
    rule: Literal["forbid", "require_confirmation", "require_prior"]
    when: str | None = None
    prior_tool: str | None = None
    prior_when: str | None = None

    @model_validator(mode="after")
    def _prior_needs_tool(self) -> Rule:
        if self.rule == "require_prior" and not self.prior_tool:
            raise ValueError("rule 'require_prior' needs 'prior_tool'")
        return self


class Mutation(_Model):
    """A direct change of the workspace made by an event."""

    service: str
    collection: str
    op: Literal["insert", "update", "delete"]
    record: Record | None = Field(None, description="the new record (insert) or changed fields (update)")
    id: str | None = Field(None, description="the record changed or deleted")

    @model_validator(mode="after")
    def _shape(self) -> Mutation:
        if self.op == "insert" and not (self.record and "id" in self.record):
            raise ValueError("insert needs 'record' with an 'id'")
        if self.op in ("update", "delete") and not self.id:
            raise ValueError(f"{self.op} needs 'id'")
        if self.op == "update" and not self.record:
            raise ValueError("update needs 'record' with the changed fields")
        return self


class Event(_Model):
    """A scheduled change of the workspace during the episode.

    An ``on_tool`` event may filter the triggering calls (``when``), wait ``after`` steps,
    fire again on every matching call (``once: false``), and template its mutations and
    notice from the triggering call's arguments (``${args.thread_id}``).
    """

    id: str
    after_step: int | None = Field(None, ge=0, description="fire once this many steps are done")
    on_tool: str | None = Field(None, description="fire right after the first successful call of this tool")
    when: str | None = Field(
        None, description="on_tool only: an expression over the call's 'args'; other calls don't trigger"
    )
    after: int | None = Field(None, ge=1, le=1000, description="on_tool only: fire this many steps after the trigger")
    once: bool | None = Field(None, description="fire at most once (the default); false: on every matching call")
    mutations: list[Mutation] = Field(min_length=1)
    notify: str | None = Field(None, description="a notice shown to the agent when it fires")

    @model_validator(mode="after")
    def _one_trigger(self) -> Event:
        if (self.after_step is None) == (self.on_tool is None):
            raise ValueError("give exactly one trigger: 'after_step' or 'on_tool'")
        if self.on_tool is None:
            given = [n for n in ("when", "after") if getattr(self, n) is not None] + (
                ["once"] if self.once is False else []
            )
            if given:
                raise ValueError(
                    f"'{given[0]}' needs an 'on_tool' trigger (an after_step event has no triggering call)"
                )
            if _templated([self.notify, [m.model_dump() for m in self.mutations]]):
                raise ValueError("templated values ('${...}') need an 'on_tool' trigger: there is no call to read")
        return self

    @property
    def repeats(self) -> bool:
        return self.once is False


def _templated(value: Any) -> bool:
    """Whether a value holds a ``${...}`` reference anywhere (strings inside lists and dicts)."""
    if isinstance(value, str):
        return "${" in value
    if isinstance(value, list):
        return any(_templated(v) for v in value)
    if isinstance(value, dict):
        return any(_templated(v) for v in value.values())
    return False


TRANSIENT_ERROR = "503 Service Unavailable: temporary failure, please retry"


class Fault(_Model):
    """A transient tool error injected on the n-th call of a tool."""

    tool: str
    on_call: int = Field(1, ge=1)
    message: str = TRANSIENT_ERROR


# --- checks -------------------------------------------------------------------------------


class _Check(_Model):
    id: str
    weight: float = Field(1.0, gt=0, allow_inf_nan=False)
    description: str = ""
    required: bool = Field(
        False, description="the task fails when this check fails, whatever the rest (score capped below the pass mark)"
    )


class RecordExists(_Check):
    kind: Literal["record_exists"] = "record_exists"
    service: str
    collection: str
    where: str = Field(description="expression over the record as 'r'")


class RecordAbsent(_Check):
    kind: Literal["record_absent"] = "record_absent"
    service: str
    collection: str
    where: str


class FieldEquals(_Check):
    kind: Literal["field_equals"] = "field_equals"
    service: str
    collection: str
    record_id: str
    field: str
    value: Any


class Count(_Check):
    kind: Literal["count"] = "count"
    service: str
    collection: str
    where: str = "true"
    op: Literal["==", "!=", "<", "<=", ">", ">="] = "=="
    value: int


class FieldMatches(_Check):
    """Some record (matching ``where``) has a text ``field`` the regular expression ``pattern`` finds.

    Patterns run on RE2 (linear time, no backtracking); see :mod:`coworkenv.patterns`.
    """

    kind: Literal["field_matches"] = "field_matches"
    service: str
    collection: str
    where: str = Field("true", description="expression over the record as 'r'")
    field: str
    pattern: str = Field(min_length=1, description="RE2 syntax, searched case-insensitively")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        problem = pattern_problem(pattern)
        if problem:
            raise ValueError(problem)
        return pattern


class FieldNumber(_Check):
    """Some record (matching ``where``) has a text ``field`` that states ``value`` within ``tolerance``."""

    kind: Literal["field_number"] = "field_number"
    service: str
    collection: str
    where: str = Field("true", description="expression over the record as 'r'")
    field: str
    value: float = Field(allow_inf_nan=False)
    tolerance: float = Field(0.01, ge=0, allow_inf_nan=False)


class Unchanged(_Check):
    """No collateral damage: records not matched by ``allow`` are as they started."""

    kind: Literal["unchanged"] = "unchanged"
    service: str
    collection: str
    allow: str | None = Field(None, description="records (as 'r', old or new) that may change")


class ToolCalled(_Check):
    kind: Literal["tool_called"] = "tool_called"
    tool: str
    where: str | None = Field(None, description="expression over the call's 'args'")
    min_times: int = Field(1, ge=1)


class ToolNotCalled(_Check):
    kind: Literal["tool_not_called"] = "tool_not_called"
    tool: str
    where: str | None = None


class MaxCalls(_Check):
    """An upper bound: at most ``max`` successful calls of ``tool`` (matching ``where``). A guard."""

    kind: Literal["max_calls"] = "max_calls"
    tool: str
    where: str | None = Field(None, description="expression over the call's 'args'")
    max: int = Field(ge=0, le=1000)


class Order(_Check):
    """The first successful call of ``first`` precedes the first of ``then``."""

    kind: Literal["order"] = "order"
    first: str
    then: str


class AskedUser(_Check):
    kind: Literal["asked_user"] = "asked_user"
    slot: str


class ConfirmedBefore(_Check):
    """Every successful call of ``tool`` came after a user confirmation."""

    kind: Literal["confirmed_before"] = "confirmed_before"
    tool: str


class AnswerContains(_Check):
    kind: Literal["answer_contains"] = "answer_contains"
    values: list[str | list[str]] = Field(
        min_length=1, description="each item must be stated; a list is an any-of group: one of its alternatives"
    )
    scope: Literal["final", "any"] = "any"

    @field_validator("values")
    @classmethod
    def _groups(cls, values: list[str | list[str]]) -> list[str | list[str]]:
        for i, group in enumerate(values):
            if isinstance(group, list) and not group:
                raise ValueError(f"item {i}: an any-of group needs at least one alternative")
        return values

    @property
    def groups(self) -> list[list[str]]:
        """Every item as a group of alternatives (a plain value is a group of one)."""
        return [g if isinstance(g, list) else [g] for g in self.values]


class AnswerNumber(_Check):
    kind: Literal["answer_number"] = "answer_number"
    value: float
    tolerance: float = Field(0.01, ge=0)
    scope: Literal["final", "any"] = "any"


Check = Annotated[
    RecordExists
    | RecordAbsent
    | FieldEquals
    | Count
    | FieldMatches
    | FieldNumber
    | Unchanged
    | ToolCalled
    | ToolNotCalled
    | MaxCalls
    | Order
    | AskedUser
    | ConfirmedBefore
    | AnswerContains
    | AnswerNumber,
    Field(discriminator="kind"),
]
STATE_CHECKS = ("record_exists", "record_absent", "field_equals", "count", "field_matches", "field_number", "unchanged")
GUARD_CHECKS = ("unchanged", "tool_not_called", "max_calls", "record_absent")
"""Checks that say what must *not* happen: they hold until the agent errs, so may hold at the start."""


# --- the reference solution ---------------------------------------------------------------


class CallStep(_Model):
    """Call a tool; ``args`` may reference earlier results (``${r1.items[0].id}``) and facts."""

    call: str
    args: dict[str, Any] = Field(default_factory=dict)
    save_as: str | None = None
    say: str | None = Field(None, description="assistant text sent with the call")


class AskStep(_Model):
    """Ask the user about a hidden slot; its value is then ``${facts.<slot>}``."""

    ask: str
    question: str | None = None


class ConfirmStep(_Model):
    """Ask the user to confirm before an irreversible write."""

    confirm: str


class AnswerStep(_Model):
    """Report to the user; ends the current request (the next follow-up may come)."""

    answer: str


ReferenceStep = CallStep | AskStep | ConfirmStep | AnswerStep


# --- stages (multi-day workflows) ---------------------------------------------------------

CLOCK_FORMAT = "%Y-%m-%dT%H:%M"
CLOCK_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$"


def parse_clock(text: str) -> datetime:
    """A workspace time, ``YYYY-MM-DDTHH:MM``; ValueError naming the expected form otherwise."""
    try:
        return datetime.strptime(text, CLOCK_FORMAT)
    except ValueError:
        raise ValueError(f"{text!r} is not a time of the form YYYY-MM-DDTHH:MM") from None


class Advance(_Model):
    """How the workspace clock moves before a stage: ``to`` a time, or by ``days``/``hours`` (then ``at`` a time
    of day). "Next morning 09:00" is ``{days: 1, at: "09:00"}``."""

    to: str | None = Field(None, pattern=CLOCK_PATTERN, description="the new time, YYYY-MM-DDTHH:MM")
    days: int = Field(0, ge=0, le=366)
    hours: int = Field(0, ge=0, le=24 * 366)
    at: str | None = Field(None, pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$", description="time of day, HH:MM")

    @model_validator(mode="after")
    def _one_form(self) -> Advance:
        if self.to is not None:
            if self.days or self.hours or self.at:
                raise ValueError("give either 'to' or 'days'/'hours'/'at', not both")
            parse_clock(self.to)
        elif not (self.days or self.hours or self.at):
            raise ValueError("give 'to', or move by 'days'/'hours' (and optionally 'at')")
        return self

    def apply(self, now: datetime) -> datetime:
        """The time after this advance from ``now``."""
        if self.to is not None:
            return parse_clock(self.to)
        moved = now + timedelta(days=self.days, hours=self.hours)
        if self.at is not None:
            hour, minute = (int(x) for x in self.at.split(":"))
            moved = moved.replace(hour=hour, minute=minute)
        return moved


class Stage(_Model):
    """A later stage (day) of a multi-stage workflow; the spec's own request is the first stage.

    Between stages the clock advances and ``mutations`` change the workspace (mail that
    arrived overnight, a meeting someone moved). ``context`` says what the agent still sees:
    ``conversation`` (the chat goes on) or ``notes`` (a fresh chat that shows only the
    document the agent wrote at ``notes`` in the documents service). The stage's own checks
    are graded on the state at its end and on what happened during it.
    """

    id: str = Field(pattern=r"^[A-Za-z0-9_-]+$")
    advance: Advance
    mutations: list[Mutation] = Field(default_factory=list)
    notify: str | None = Field(None, description="what the agent is told changed since the last stage")
    context: Literal["conversation", "notes"] = "conversation"
    notes: str | None = Field(
        None, pattern=r"^/[^/]", description="documents path of the note shown when context is 'notes'"
    )
    user: Request
    checks: list[Check] = Field(min_length=1)
    reference: list[ReferenceStep] = Field(min_length=1)

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
    id: str
    title: str
    description: str = ""
    services: Fixtures = Field(description="fixture records per service and collection")
    declared_services: dict[str, ServiceDecl] | None = Field(
        None, description="services declared as data (collections, fields, tools) for services with no built-in class"
    )
    tools: list[str] | None = Field(None, description="exposed tools; None = every tool of the services")
    context: str = Field("", description="extra system-prompt text: who the agent works for, the date")
    user: UserScript
    policies: list[Rule] = Field(default_factory=list, description="workflow rules (the key keeps its name)")
    events: list[Event] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)
    checks: list[Check] = Field(min_length=1)
    reference: list[ReferenceStep] = Field(min_length=1)
    capabilities: list[str] = Field(default_factory=list)
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    max_turns: int = Field(30, ge=1)
    max_tool_calls: int = Field(40, ge=1)
    clock: str | None = Field(None, pattern=CLOCK_PATTERN, description="the workspace time at the start")
    stages: list[Stage] | None = Field(
        None, min_length=1, description="later stages (days); the spec's own request, checks, reference: the first"
    )
    provenance: Provenance = Field(default_factory=Provenance)

    @model_validator(mode="after")
    def _unique_ids(self) -> TaskSpec:
        stages = self.stages or []
        for label, ids in (
            ("checks", [c.id for c in self.all_checks]),
            ("policies", [p.id for p in self.policies]),
            ("events", [e.id for e in self.events]),
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
            later = stage.advance.apply(now)
            if later <= now:
                raise ValueError(f"stages[{i}].advance: the clock must move forward (from {now:%Y-%m-%dT%H:%M})")
            now = later
            if stage.context == "notes" and "documents" not in self.services:
                raise ValueError(f"stages[{i}].context: 'notes' needs the documents service, where the note lives")

    @property
    def all_checks(self) -> list[Any]:
        """Every check of every stage, the first stage's first."""
        return [*self.checks, *(c for s in self.stages or [] for c in s.checks)]

    @property
    def all_facts(self) -> list[HiddenFact]:
        """Every hidden fact of every stage's request."""
        return [*self.user.hidden_facts, *(f for s in self.stages or [] for f in s.user.hidden_facts)]

    @property
    def is_multi_turn(self) -> bool:
        """Needs more than one user turn: a clarification, a confirmation or a follow-up."""
        u = self.user
        if self.stages:
            return True
        return bool(u.hidden_facts or u.follow_ups or any(isinstance(s, ConfirmStep) for s in self.reference))
