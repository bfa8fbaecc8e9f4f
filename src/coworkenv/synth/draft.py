"""A spec under construction, and how it becomes a TaskSpec.

Blueprints fill a Draft; modifiers edit it; ``finalize`` turns it into a validated
TaskSpec. The reference refers to request parameters as ``${facts.<slot>}`` throughout,
so a modifier can withhold any fact: a stated fact is substituted into the reference at
finalize time, a withheld one becomes a hidden fact with an ask step before its first use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from coworkenv.expr import format_value
from coworkenv.spec import content_id, spec_from_data
from coworkenv.spec.checks import AnswerCheck, AnswerCounts, AnswerNumber, CheckModel, Count, FieldEquals, RecordExists
from coworkenv.spec.declared import ServiceDecl
from coworkenv.spec.models import TaskSpec
from coworkenv.synth.checks import Checks
from coworkenv.synth.expr_builder import literal
from coworkenv.synth.guards import written_guards
from coworkenv.synth.look_alikes import anchors, stated_values, versions, with_exclusions
from coworkenv.synth.reference import Reference, uses
from coworkenv.synth.stages import DraftStage
from coworkenv.synth.world import World

GENERATOR_VERSION = "procedural-1"


@dataclass
class Fact:
    """A request parameter: stated in the opening, or withheld so the agent must ask."""

    slot: str
    value: Any
    given: str
    keywords: list[str]
    question: str
    reply: str
    withheld: str = ""
    withholdable: bool = True


def stated(slot: str, value: Any, keyword: str | None = None, given: str | None = None) -> Fact:
    """A fact the request always states (a name, a topic): never withheld, so it needs no question."""
    return Fact(slot, value, value if given is None else given, [keyword or slot], "", "", withholdable=False)


@dataclass
class Draft:
    blueprint: str
    title: str
    persona: str
    context: str
    fixtures: dict[str, dict[str, list[dict[str, Any]]]]
    """The world's fixtures (the same object: modifiers add records through the World)."""
    openings: list[str]
    facts: dict[str, Fact]
    reference: Reference
    checks: Checks
    capabilities: set[str]
    rules: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    follow_ups: list[str] = field(default_factory=list)
    confirmations: list[dict[str, Any]] = field(default_factory=list)
    """How the user answers confirmation requests (the request must name the action and the target)."""
    withheld: list[str] = field(default_factory=list)
    modifiers: list[str] = field(default_factory=list)
    readable: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(service, collection, record id, field) the reference reads in full: where content can be planted."""
    summary: list[str] = field(default_factory=list)
    """Literal key results of the task (a time, an id): what a report of it must mention."""
    clock: str | None = None
    """The workspace time at the start (YYYY-MM-DDTHH:MM); multi-day drafts need it."""
    stages: list[DraftStage] = field(default_factory=list)
    """Later days of a multi-day workflow (see :mod:`coworkenv.synth.stages`)."""
    description: str = ""
    """What the workflow is made of, for the bank's readers (never shown to the agent)."""
    declared: dict[str, ServiceDecl] = field(default_factory=dict)
    """The world's services declared as data (the same object), which the spec declares."""

    @classmethod
    def start(
        cls,
        blueprint: str,
        title: str,
        world: World,
        openings: list[str],
        facts: dict[str, Fact],
        capabilities: set[str],
        readable: list[tuple[str, str, str, str]] | None = None,
    ) -> Draft:
        """An empty workflow over the world's fixtures, to fill with the reference and checks builders."""
        return cls(
            blueprint=blueprint,
            title=title,
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=openings,
            facts=facts,
            reference=Reference(),
            checks=Checks(),
            capabilities=set(capabilities),
            readable=list(readable or []),
            declared=world.declared,
        )

    def main_write(self) -> dict[str, Any] | None:
        """The reference's key write (role ``main``, else the last call)."""
        return self.reference.main()

    def add_stage(self, id: str, opening: str, advance: dict[str, Any], **opts: Any) -> DraftStage:
        """A later day: its request and clock advance; fill its reference, checks and changes after."""
        stage = DraftStage(id, opening, advance, **opts)
        self.stages.append(stage)
        return stage

    def ask_figure(
        self, question: str, check_id: str, value: float, tolerance: float = 0, label: str | None = None
    ) -> None:
        """information_synthesis: the request also asks for a computed figure the answer must state (a count with
        the ``label`` the report pairs it with: "3 open tickets")."""
        self.openings = [f"{o} {question}" for o in self.openings]
        if label is not None:
            self.checks.answer_counts(check_id, {label: int(value)})
        else:
            self.checks.answer_number(check_id, value, tolerance)
        self.capabilities.add("information_synthesis")

    def add_follow_up(self, message: str, steps: list[dict[str, Any]], answer: str) -> None:
        """A second request the user sends after the first report, and how the reference handles it.

        Its checks should carry ``group="follow_up"`` so they weigh enough on their own.
        """
        self.follow_ups.append(message)
        for step in steps:
            self.reference.add(step)
        self.reference.answer(answer)


_WHOLE_FACT = re.compile(r"\$\{facts\.(\w+)\}")
_FACT = re.compile(r"facts\.(\w+)")
_FACT_IN = re.compile(r"\bfacts\.(\w+)")
_REFERENCE = re.compile(r"\$\{([^}]*)\}")


def _substitute(value: object, facts: dict[str, Fact]) -> object:
    """Put the values of stated facts where the reference says ``facts.<slot>``.

    ``${facts.x}`` alone becomes the typed value, inside text its formatted value; inside a
    larger expression (``${round(facts.qty * 4.5, 2)}``) a literal, so the oracle still computes.
    """
    if isinstance(value, str):
        if "${" not in value:  # most strings of a reference: nothing to put in
            return value
        whole = _WHOLE_FACT.fullmatch(value)
        if whole and whole.group(1) in facts:
            return facts[whole.group(1)].value

        def expr(m: re.Match[str]) -> str:
            inner = m.group(1)
            single = _FACT.fullmatch(inner)
            if single and single.group(1) in facts:
                return format_value(facts[single.group(1)].value)
            inner = _FACT_IN.sub(
                lambda f: literal(facts[f.group(1)].value) if f.group(1) in facts else f.group(0),
                inner,
            )
            return "${" + inner + "}"

        return _REFERENCE.sub(expr, value)
    if isinstance(value, list):
        return [_substitute(v, facts) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, facts) for k, v in value.items()}
    return value


def balance(
    checks: list[CheckModel], capabilities: set[str], group_of: dict[str, str] | None = None, passes: int = 8
) -> None:
    """Weigh up the check groups a single probe can miss on its own, so that missing them fails.

    A probe that misses only the main guard (collateral_write), only the answer
    (vague_answer), only the follow-up (stop_before_follow_up) or only what a mid-episode
    event changed (ignore_event, where a blueprint marks it) fails when that group
    carries more than (1 - 0.75) / 0.8 of the weight; a guessed fact also fails the checks
    that depend on it, so its ``asked_user`` check needs less. This is a first guess: the
    repair loop solves the weights exactly when it is not enough.
    """
    groups: list[tuple[list[CheckModel], float]] = []
    guards = [c for c in checks if c.collateral_guard() is not None]
    if guards and capabilities & {"workflow_compliance", "safety"}:
        groups.append(([max(guards, key=_weight)], 0.36))
    answers = [c for c in checks if c.reads == "answer"]
    if answers:
        groups.append((answers, 0.36))
    for name, share in (("follow_up", 0.36), ("event", 0.36), ("asked", 0.2)):
        members = [c for c in checks if (group_of or {}).get(c.id) == name]
        if members:
            groups.append((members, share))
    for _ in range(passes if len(groups) > 1 else 1):
        for group, share in groups:
            mine = sum(c.weight for c in group)
            others = sum(c.weight for c in checks) - mine
            need = share / (1 - share) * others
            if mine < need:
                for c in group:
                    c.weight *= need / mine


def harden(checks: list[CheckModel], fixtures: dict[str, Any], answers: Sequence[str] = ()) -> list[CheckModel]:
    """Mark the checks that define the task ``required``, and make what it creates count once.

    Required: the heaviest ``record_exists`` or ``field_equals`` (the main write), every
    collateral guard (the verifier damages each guarded collection the reference writes on its
    own, so a light one would not count), every answer number not written anywhere in the fixtures (a computed
    figure: the substance of the report, which a dump of everything seen cannot fake), every answer check a dump
    cannot satisfy (one that excludes look-alike values, or pairs labels with counts), and every "exactly one"
    count. A ``record_exists`` check without a count of the same records
    becomes "exactly one", so that a write done twice fails it. An answer check of a value read from the
    fixtures excludes the look-alike records' values, and those of the values the reports ``answers`` name (see
    :mod:`coworkenv.synth.look_alikes`).
    """
    written = repr(fixtures).lower()
    named = anchors(answers)
    keep = {v.lower() for c in checks for v in stated_values(c)} | {v.lower() for v in named}
    main = max((c for c in checks if isinstance(c, RecordExists | FieldEquals)), key=_weight, default=None)
    counted = {c.where for c in checks if isinstance(c, Count)}
    out: list[CheckModel] = []
    for c in checks:
        hardened = with_exclusions(c, fixtures, keep, named)
        if isinstance(c, RecordExists) and c.where not in counted:
            hardened = Count.model_validate({**c.model_dump(exclude={"kind"}), "value": 1, "op": "=="})
        computed = isinstance(c, AnswerNumber) and _number_text(c.value) not in written
        pinned = isinstance(hardened, AnswerCounts) or (isinstance(hardened, AnswerCheck) and bool(hardened.excludes))
        once = isinstance(hardened, Count) and hardened.op == "==" and hardened.value == 1
        if c is main or c.collateral_guard() is not None or computed or pinned or once:
            hardened.required = True
        out.append(hardened)
    return out


def _weight(check: CheckModel) -> float:
    return check.weight


def _number_text(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def difficulty(draft: Draft) -> str:
    """easy: a short plain workflow; hard: long, or two or more capability modifiers on top."""
    calls = sum(1 for ref in (draft.reference, *(s.reference for s in draft.stages)) for _ in ref.calls())
    if len(draft.modifiers) >= 2 or calls >= 9:
        return "hard"
    return "easy" if not draft.modifiers and calls <= 5 else "medium"


def opening(draft: Draft, phrasing: int) -> str:
    template = draft.openings[phrasing % len(draft.openings)]
    text = template.format(**{s: (f.withheld if s in draft.withheld else f.given) for s, f in draft.facts.items()})
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"\s+([,.?!:;])", r"\1", text)


def _final_checks(
    draft: Draft,
    drop: tuple[str, ...],
    weights: dict[str, float] | None,
    required: dict[str, bool] | None,
    stage: DraftStage | None = None,
) -> list[dict[str, Any]]:
    """The draft's checks (or a later ``stage``'s), hardened, with the repair loop's drops, requirements and
    weights applied, as spec data."""
    source = draft.checks if stage is None else stage.checks
    reference = draft.reference if stage is None else stage.reference
    answers = [str(s["answer"]) for s in reference if "answer" in s]
    changes = [m for e in draft.events for m in e.get("mutations", [])]
    changes += [m for s in draft.stages for m in (*s.mutations, *(m for e in s.events for m in e.get("mutations", [])))]
    world = versions(draft.fixtures, changes)
    drafted = [c.model_copy() for c in source]
    calls = [str(s["call"]) for s in reference if "call" in s]
    drafted += written_guards(drafted, calls, draft.fixtures, draft.declared, "" if stage is None else stage.id)
    checks = [c for c in harden(drafted, world, answers) if c.id not in drop]
    for c in checks:
        c.required = (required or {}).get(c.id, c.required)
    if weights:
        for c in checks:
            c.weight = weights.get(c.id, c.weight)
    else:
        balance(checks, draft.capabilities, source.groups)
    for c in checks:
        c.weight = round(c.weight, 3)
    return [c.model_dump(mode="json", exclude_none=True) for c in checks]


def _in_view(draft: Draft, checks: list[dict[str, Any]]) -> None:
    """Name one look-alike value in the first record the reference reads in full, so that a report that lists
    everything the agent saw states it (and fails the answer check that excludes it), while a right one does not."""
    excluded = next((c["excludes"][0] for c in checks if c.get("excludes")), None)
    if excluded is None or not draft.readable:
        return
    service, collection, rid, name = draft.readable[0]
    record = next(r for r in draft.fixtures[service][collection] if r["id"] == rid)
    note = f"(Not to be confused with {excluded}.)"
    if note not in str(record.get(name, "")):
        record[name] = f"{record.get(name, '')}\n\n{note}"


def _asking_reference(draft: Draft) -> list[dict[str, Any]]:
    """The reference with stated facts filled in and an ask for each withheld one before its first use."""
    stated = {s: f for s, f in draft.facts.items() if s not in draft.withheld}
    reference: list[dict[str, Any]] = []
    asked: set[str] = set()
    for step in draft.reference:
        for slot in draft.withheld:
            if slot not in asked and uses(step, slot):
                asked.add(slot)
                at = _ask_at(reference)
                reference.insert(at, {"ask": slot, "question": draft.facts[slot].question})
        reference.append({k: _substitute(v, stated) for k, v in step.items()})
    return reference


def _with_background(
    fixtures: dict[str, dict[str, list[dict[str, Any]]]], extra: dict[str, dict[str, list[dict[str, Any]]]]
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    if not extra:
        return fixtures
    out = {service: {coll: list(rows) for coll, rows in colls.items()} for service, colls in fixtures.items()}
    for service, colls in extra.items():
        for coll, rows in colls.items():
            out.setdefault(service, {}).setdefault(coll, []).extend(rows)
    return out


def _ask_at(reference: list[dict[str, Any]]) -> int:
    """Where an ask goes: at the end, or before the confirmations that cover the calls since them (an ask after
    them would be a user turn between a confirmation and the act it covers)."""
    at = len(reference)
    for i in range(len(reference) - 1, -1, -1):
        if "confirm" in reference[i]:
            at = i
        elif "ask" in reference[i] or "answer" in reference[i]:
            break
    return at


def finalize(
    draft: Draft,
    *,
    seed: int,
    phrasing: int = 0,
    drop: tuple[str, ...] = (),
    weights: dict[str, float] | None = None,
    required: dict[str, bool] | None = None,
    background: dict[str, dict[str, list[dict[str, Any]]]] | None = None,
    shown: Callable[[TaskSpec], TaskSpec] | None = None,
) -> TaskSpec:
    """Build the TaskSpec: phrasing, hidden facts and asks, check weights and requirements, content id.

    ``background`` records (:mod:`coworkenv.synth.background`) join the fixtures after each collection's own,
    once the checks are hardened on the task's records alone. ``shown`` gives the spec as its environment shows it
    (in an interface drawn for it), before the content id is taken: one hash per spec (hashing a spec is a real
    share of composing one)."""
    reference = _asking_reference(draft)
    hidden = [
        {"slot": s, "value": f.value, "keywords": f.keywords, "reply": f.reply, "question": f.question}
        for s, f in draft.facts.items()
        if s in draft.withheld
    ]
    checks = _final_checks(draft, drop, weights, required)
    _in_view(draft, checks)
    later = [stage.data(_final_checks(draft, drop, weights, required, stage)) for stage in draft.stages]
    steps = len(reference) + sum(len(stage.reference.steps) for stage in draft.stages)
    data: dict[str, Any] = {
        "id": "",
        "title": draft.title,
        "description": draft.description,
        "services": _with_background(draft.fixtures, background or {}),
        "context": draft.context,
        "user": {
            "persona": draft.persona,
            "opening": opening(draft, phrasing),
            "hidden_facts": hidden,
            "follow_ups": [{"message": m} for m in draft.follow_ups],
            "confirmations": draft.confirmations,
        },
        "rules": draft.rules,
        "events": draft.events,
        "faults": draft.faults,
        "checks": checks,
        "reference": reference,
        "capabilities": sorted(draft.capabilities),
        "difficulty": difficulty(draft),
        "max_turns": max(30, 2 * steps + 10),
        "max_tool_calls": max(40, 3 * steps),
        "provenance": {
            "source": "synth",
            "blueprint": draft.blueprint,
            "seed": seed,
            "modifiers": list(draft.modifiers),
            "generator_version": GENERATOR_VERSION,
        },
    }
    if draft.stages:
        data.update(clock=draft.clock, stages=later)
    if draft.declared:
        data["declared_services"] = {name: decl.model_dump(mode="json") for name, decl in draft.declared.items()}
    try:  # the composer's own data: no aliases, nesting bounded by this code, so no size walk before validating
        spec = TaskSpec.model_validate(data)
    except ValidationError:
        spec = spec_from_data(data, f"<{draft.blueprint}:{seed}>")  # raises the spec error, field by field
    if shown is not None:
        spec = shown(spec)
    return spec.model_copy(update={"id": content_id(spec)})
