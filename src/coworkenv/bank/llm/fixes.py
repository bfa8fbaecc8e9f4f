"""Programmatic repairs, tried before asking the model: cheap, exact edits for local findings.

- a vacuous check is dropped (unless no check on the task's outcome would remain);
- a hidden fact leaked in the opening request is replaced by a mention of its slot
  ("the meeting time"), so the agent has to ask for it;
- a spec that requires no check gets its heaviest outcome check required;
- probes that pass although they fail some checks get those checks weighed up
  (the blueprint repair's exact reweighting).
Structural findings (a failing or unsolvable reference, a policy the reference breaks) are
left to the model: only it knows what the task was meant to be.
"""

from __future__ import annotations

import re

from coworkenv.bank.repair import STRUCTURAL, reweight
from coworkenv.expr import format_value
from coworkenv.spec.models import TaskSpec
from coworkenv.verify.admission import Verification
from coworkenv.verify.findings import Location, vacuous_checks


def _drop_vacuous(spec: TaskSpec, verification: Verification) -> TaskSpec | None:
    drop = set(vacuous_checks(verification.findings) or ())
    keep = [c for c in spec.checks if c.id not in drop]
    if not drop or all(c.guard for c in keep):
        return None
    return spec.model_copy(update={"checks": keep})


def _unleak(spec: TaskSpec, verification: Verification) -> TaskSpec | None:
    opening = spec.user.opening
    leaked = {f.location for f in verification.findings if f.kind == "leaked_fact"}
    for fact in spec.user.hidden_facts:
        if Location.hidden_fact(fact.slot) not in leaked:
            continue
        values = fact.value if isinstance(fact.value, list) else [fact.value]
        for text in (format_value(v).strip() for v in values):
            pattern = rf"(?<![A-Za-z0-9]){re.escape(text)}(?![A-Za-z0-9])"
            opening = re.sub(pattern, f"the {fact.slot.replace('_', ' ')}", opening, flags=re.IGNORECASE)
    if opening == spec.user.opening:
        return None  # leaked through the context, or not verbatim: the model rephrases
    return spec.model_copy(update={"user": spec.user.model_copy(update={"opening": opening})})


def _require_main(spec: TaskSpec, verification: Verification) -> TaskSpec | None:
    """No check is required: the heaviest check on the task's outcome (not a guard) becomes required."""
    if not any(f.kind == "weak_requirement" and f.location == Location.checks() for f in verification.findings):
        return None
    outcome = [c for c in spec.checks if not c.guard]
    if not outcome:
        return None
    main = max(outcome, key=lambda c: c.weight).id
    return spec.model_copy(update={"checks": [c.model_copy(update={"required": c.id == main}) for c in spec.checks]})


def _reweigh(spec: TaskSpec, verification: Verification) -> TaskSpec | None:
    weights = reweight(spec, verification.probes)
    if weights is None:
        return None
    checks = [c.model_copy(update={"weight": weights[c.id]}) for c in spec.checks]
    return spec.model_copy(update={"checks": checks})


FIXES = (
    ("vacuous_check", "drop vacuous checks", _drop_vacuous),
    ("leaked_fact", "rephrase the leak", _unleak),
    ("weak_requirement", "require the main check", _require_main),
    ("probe_passed", "reweigh checks", _reweigh),
)


def programmatic_repair(spec: TaskSpec, verification: Verification) -> tuple[TaskSpec, list[str]] | None:
    """The spec with every applicable local fix, and the fixes' names; None when none applies."""
    if spec.stages:
        return None  # the fixes edit the spec's own request and checks; a multi-stage spec's findings go to the model
    kinds = set(verification.kinds)
    if kinds & STRUCTURAL:
        return None
    done: list[str] = []
    for kind, name, fix in FIXES:
        if kind in kinds and (fixed := fix(spec, verification)) is not None:
            spec, done = fixed, [*done, name]
    return (spec, done) if done else None
