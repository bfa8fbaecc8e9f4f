"""The repair loop: verify, turn findings into a targeted edit of the recipe, try again.

Edits, from the most local to the most drastic:
- a vacuous check is dropped;
- a leaked hidden fact, or an answer check the request already answers, gets another
  phrasing of the request (then a re-rolled world);
- a probe that passes although the grader caught it somewhere (it failed some checks) gets
  those checks weighed up, solved over all probes at once (probe outcomes per check do not
  depend on the weights, so this is exact); where no weights do, the heaviest check each
  passing probe fails becomes required;
- where a dump of every value seen passes, the answer checks it fails become required (where
  it fails none, no weight or requirement can tell a report from a list of everything: the
  world is re-rolled);
- a spec with no required check gets its heaviest non-guard check required;
- anything structural (a failing or unsolvable reference, a bad event, a probe no check
  catches) re-rolls the world: new fixtures and values, same blueprint and modifiers.
Rounds are bounded; every round's finding kinds are kept as rejection reasons.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from coworkenv.grading.score import PASS_THRESHOLD, REQUIRED_CAP, combine
from coworkenv.spec.models import TaskSpec
from coworkenv.synth.composer import Recipe, compose
from coworkenv.verify.admission import ProbeResult, Verification, verify
from coworkenv.verify.findings import Finding, vacuous_checks

MAX_ROUNDS = 3
REPHRASE = frozenset({"leaked_fact", "answer_in_prompt"})
"""Findings about what the request says: another phrasing may not say it."""
MARGIN = 0.01
"""Reweighted probes must end this far below the pass threshold (rounding must not tip them over)."""
PHRASINGS_TRIED = 2
STRUCTURAL = frozenset(
    {
        "schema",
        "unresolved_reference",
        "missing_ingredient",
        "reference_failed",
        "reference_violation",
        "nondeterministic",
        "unsolvable",
        "generator_error",
    }
)


@dataclass
class SynthesisResult:
    recipe: Recipe
    spec: TaskSpec | None
    verification: Verification


def attempt(recipe: Recipe) -> tuple[TaskSpec | None, Verification]:
    """Compose and verify once; a generator crash becomes a finding, not an exception."""
    try:
        spec = compose(recipe)
    except Exception as exc:  # a generator bug on one seed must not stop a bank
        finding = Finding(
            kind="generator_error",
            where=f"blueprint:{recipe.blueprint}",
            evidence=f"{type(exc).__name__}: {exc}",
            hint="fix the blueprint or modifier",
        )
        return None, Verification(admitted=False, findings=[finding])
    return spec, verify(spec)


def synthesize(recipe: Recipe, max_rounds: int = MAX_ROUNDS) -> SynthesisResult:
    """Verify and repair until admitted or out of rounds."""
    reasons: list[str] = []
    rounds = 0
    while True:
        spec, verification = attempt(recipe)
        if verification.admitted:
            break
        reasons += verification.kinds
        if rounds == max_rounds:
            break
        recipe = repair(recipe, spec, verification)
        rounds += 1
    verification.rounds = rounds
    verification.reasons = reasons
    return SynthesisResult(recipe, spec if verification.admitted else None, verification)


def repair(recipe: Recipe, spec: TaskSpec | None, verification: Verification) -> Recipe:
    """The next recipe to try, given what the verifier found."""
    kinds = set(verification.kinds)
    if spec is None or kinds & STRUCTURAL:
        return recipe.reroll()
    new = recipe
    if kinds & REPHRASE:
        if recipe.phrasing + 1 >= PHRASINGS_TRIED:
            return recipe.reroll()
        new = replace(new, phrasing=recipe.phrasing + 1)
    if "vacuous_check" in kinds:
        vacuous = vacuous_checks(verification.findings)
        if vacuous is None or len(vacuous) >= len([c for c in spec.all_checks if c.collateral_guard() is None]):
            return recipe.reroll()  # the checks as a whole are vacuous, or every one is: nothing to drop
        new = replace(new, drop=(*new.drop, *vacuous))
    if "weak_requirement" in kinds:  # in the stage each finding names (its location's stage; None: the first)
        weak = {f.location.stage for f in verification.findings if f.kind == "weak_requirement" and f.location}
        new = _require(new, [_main_check(spec, k) for k in sorted(weak, key=lambda k: -1 if k is None else k)])
    if "probe_passed" in kinds:
        new = _fix_probes(new, spec, dict(verification.probes))
    return new


HARD_PROBES = ("duplicate_write", "distractor", "collateral_write", "guarded_action")
"""Wrong behaviours that fail the task whatever else went right: the checks they fail become required."""


def _fix_probes(recipe: Recipe, spec: TaskSpec, probes: dict[str, ProbeResult]) -> Recipe:
    """Requirements for the hard probes and for the answer checks a dump fails, weights for the rest."""
    dump = probes.pop("report_dump", None)
    if dump is not None and dump.score >= PASS_THRESHOLD:
        answers = [c.id for c in spec.all_checks if c.reads == "answer" and c.id in dump.failed]
        if not answers:
            return recipe.reroll()  # every answer check takes a dump for a report: no weight or requirement helps
        recipe = _require(recipe, answers)
    hard = {n: p for n, p in probes.items() if n.split("[")[0] in HARD_PROBES}
    needed = _requirements(spec, hard)
    if needed is None:
        return recipe.reroll()
    required = {c.id for c in spec.all_checks if c.required} | set(needed)
    rest = {n: p for n, p in probes.items() if n not in hard and not required & set(p.failed)}
    weights = None if spec.stages else reweight(spec, rest)  # stages are scored apart: one pool of weights can't say
    if weights is None:
        more = _requirements(spec, rest)
        if more is None:
            return recipe.reroll()
        needed += more
    else:
        recipe = replace(recipe, weights=tuple(sorted(weights.items())))
    return _require(recipe, needed)


def _require(recipe: Recipe, ids: list[str], required: bool = True) -> Recipe:
    edits = dict(recipe.required) | dict.fromkeys(ids, required)
    return replace(recipe, required=tuple(sorted(edits.items())))


def _main_check(spec: TaskSpec, stage: int | None = None) -> str:
    """The heaviest check that is not a guard (of later stage ``stage``): what the task is mainly about."""
    checks = spec.checks if stage is None else (spec.stages or [])[stage].checks
    return max((c for c in checks if c.collateral_guard() is None), key=lambda c: c.weight, default=checks[0]).id


def _requirements(spec: TaskSpec, probes: dict[str, ProbeResult]) -> list[str] | None:
    """For each probe that passes: the heaviest check it fails, to be made required; None if one fails none."""
    weight = {c.id: c.weight for c in spec.all_checks}
    answers = {c.id for c in spec.all_checks if c.reads == "answer"}  # a dump may satisfy them: weigh instead
    needed: list[str] = []
    for p in probes.values():
        if p.score < PASS_THRESHOLD or p.score <= REQUIRED_CAP:
            continue
        if not p.failed:
            return None
        kept = [cid for cid in p.failed if cid not in answers] or p.failed
        needed.append(max(kept, key=lambda cid: weight.get(cid, 0.0)))
    return needed


def _score(weights: dict[str, float], probe: ProbeResult) -> float:
    """What the grader would score ``probe`` under ``weights`` (required checks aside: those probes are left out)."""
    total = sum(weights.values())
    completion = 1 - sum(weights[c] for c in probe.failed if c in weights) / total
    return combine(completion, probe.robustness, probe.safety)


def reweight(spec: TaskSpec, probes: dict[str, ProbeResult], steps: int = 600) -> dict[str, float] | None:
    """Check weights under which every probe scores below the threshold, or None if none found.

    Multiplicative updates: each round, the checks failed by a probe that still passes
    weigh more. Probes that fail no check at all cannot be fixed by weights.
    """
    weights = {c.id: c.weight for c in spec.all_checks}
    target = PASS_THRESHOLD - MARGIN
    required = {c.id for c in spec.all_checks if c.required}
    probes = {n: p for n, p in probes.items() if not required & set(p.failed)}  # capped whatever the weights
    for _ in range(steps):
        passing = [p for p in probes.values() if _score(weights, p) >= target]
        if not passing:
            low = min(weights.values())
            return {cid: round(w / low, 3) for cid, w in weights.items()}
        if any(not p.failed for p in passing):
            return None
        for p in passing:
            for cid in p.failed:
                weights[cid] *= 1.05
    return None
