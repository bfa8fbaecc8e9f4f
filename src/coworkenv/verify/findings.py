"""Structured verifier findings: what failed, where in the spec, the evidence, and a repair hint.

Findings are data so the repair loop can act on them (procedural generators re-roll the
part named by ``where``; an LLM generator gets them in its repair prompt) and the bank
manifest can count rejection reasons by ``kind``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

FindingKind = Literal[
    "schema",  # the spec does not validate, or a fixture record does not fit its service
    "unresolved_reference",  # a tool, service, collection, record, slot or result name that does not exist
    "leaked_fact",  # a hidden fact's value is already in the opening request (in any form: "2pm" leaks "14:00")
    "answer_in_prompt",  # an answer check a reply restating the prompt satisfies: it cannot discriminate
    "vacuous_check",  # a check that holds on the initial state
    "missing_ingredient",  # tagged with a capability the task cannot exercise
    "reference_failed",  # the reference solution does not score 1.0
    "reference_violation",  # the reference solution breaks a workflow policy
    "nondeterministic",  # two reference runs differ, or the grade depends on the agent's pace around an event
    "probe_passed",  # a wrong behaviour scores at or above the pass threshold
    "weak_requirement",  # no check is required, or the task passes with a required check failing
    "unsolvable",  # the reference uses a value the agent cannot learn from the tools or the user
    "generator_error",  # the generator failed to build a spec at all
    "evaluation_only",  # an imported task graded by its source's rubric: evaluation may run it, training may not
]
FINDING_KINDS: tuple[str, ...] = FindingKind.__args__  # type: ignore[attr-defined]


class Finding(BaseModel):
    kind: FindingKind
    where: str = Field(description="the spec field at fault, e.g. 'checks[2]' or 'probe:do_nothing'")
    evidence: str
    hint: str = ""

    def line(self) -> str:
        return f"{self.kind} at {self.where}: {self.evidence}" + (f" (hint: {self.hint})" if self.hint else "")
