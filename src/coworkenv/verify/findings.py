"""Structured verifier findings: what failed, where in the spec, the evidence, and a repair hint.

Findings are data so the repair loop can act on them (procedural generators re-roll the
part named by ``location``; an LLM generator gets them in its repair prompt) and the bank
manifest can count rejection reasons by ``kind``. ``where`` is the same place as text, for
people and prompts; code that acts on a finding reads ``location``, never ``where``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

FindingKind = Literal[
    "schema",  # the spec does not validate, or a fixture record does not fit its service
    "unresolved_reference",  # a tool, service, collection, record, slot or result name that does not exist
    "leaked_fact",  # a hidden fact's value is already in the opening request (in any form: "2pm" leaks "14:00")
    "answer_in_prompt",  # an answer check a reply restating the prompt satisfies: it cannot discriminate
    "vacuous_check",  # a check that holds on the initial state
    "missing_ingredient",  # tagged with a capability the task cannot exercise
    "reference_failed",  # the reference solution does not score 1.0
    "reference_violation",  # the reference solution breaks a workflow policy
    "nondeterministic",  # an event that may not fire, or a grade that depends on the agent's pace around an event
    "probe_passed",  # a wrong behaviour scores at or above the pass threshold
    "weak_requirement",  # no check is required, or the task passes with a required check failing
    "unsolvable",  # the reference uses a value the agent cannot learn from the tools or the user
    "generator_error",  # the generator failed to build a spec at all
    "evaluation_only",  # an imported task graded by its source's rubric: evaluation may run it, training may not
]
FINDING_KINDS: tuple[str, ...] = FindingKind.__args__  # type: ignore[attr-defined]


class Location(BaseModel):
    """The part of a spec (or of its verification) a finding points at, as data."""

    model_config = ConfigDict(frozen=True)

    section: Literal["checks", "user.hidden_facts", "probe"]
    index: int | None = Field(None, description="position in the section's list; None: the section as a whole")
    key: str | None = Field(None, description="the item's name: a check id, a hidden fact's slot, a probe's name")
    stage: int | None = Field(
        None, description="a later stage's section (its index in spec.stages); None: the spec's own (the first stage)"
    )

    @classmethod
    def check(cls, index: int, check_id: str, stage: int | None = None) -> Location:
        return cls(section="checks", index=index, key=check_id, stage=stage)

    @classmethod
    def checks(cls, stage: int | None = None) -> Location:
        """Every check (of a stage) together (no single one is at fault)."""
        return cls(section="checks", stage=stage)

    @classmethod
    def hidden_fact(cls, slot: str) -> Location:
        return cls(section="user.hidden_facts", key=slot)

    @classmethod
    def probe(cls, name: str) -> Location:
        return cls(section="probe", key=name)


LOCATED: frozenset[str] = frozenset(
    {"vacuous_check", "leaked_fact", "answer_in_prompt", "weak_requirement", "probe_passed"}
)
"""Kinds the repair loops act on: a finding of these kinds must carry a location."""


class Finding(BaseModel):
    kind: FindingKind
    where: str = Field(description="the spec field at fault as text, e.g. 'checks[2]' or 'probe:do_nothing'")
    evidence: str
    hint: str = ""
    location: Location | None = Field(None, description="the same place as data, for the repair loops")

    @model_validator(mode="after")
    def _located(self) -> Finding:
        if self.location is None and self.kind in LOCATED:
            raise ValueError(f"a {self.kind} finding needs a location (the repair loop acts on it)")
        return self

    def in_stage(self, stage: int) -> Finding:
        """This finding of a stage view, placed in later stage ``stage`` (its index in spec.stages)."""
        location = None if self.location is None else self.location.model_copy(update={"stage": stage})
        return self.model_copy(update={"where": f"stages[{stage}].{self.where}", "location": location})

    def line(self) -> str:
        return f"{self.kind} at {self.where}: {self.evidence}" + (f" (hint: {self.hint})" if self.hint else "")


def vacuous_checks(findings: list[Finding]) -> list[str] | None:
    """The ids of the checks found vacuous; None when the checks as a whole are (no single one to drop)."""
    ids = []
    for f in findings:
        if f.kind == "vacuous_check":
            if f.location is None or f.location.key is None:
                return None
            ids.append(f.location.key)
    return ids
