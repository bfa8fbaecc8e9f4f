"""The repair loop: each kind of finding leads to its targeted edit of the recipe."""

from __future__ import annotations

import pytest

from coworkenv.bank.repair import _score, repair, reweight, synthesize
from coworkenv.grading import PASS_THRESHOLD
from coworkenv.synth.composer import Recipe, compose
from coworkenv.verify.admission import ProbeResult, Verification
from coworkenv.verify.findings import Finding, Location

RECIPE = Recipe("meeting_scheduling", 11, ("withhold",))


def _report(*findings: Finding, probes: dict[str, ProbeResult] | None = None) -> Verification:
    return Verification(admitted=False, findings=list(findings), probes=probes or {})


def test_structural_findings_reroll_the_world() -> None:
    spec = compose(RECIPE)
    new = repair(RECIPE, spec, _report(Finding(kind="reference_failed", where="checks:booked", evidence="0 records")))
    assert new.world == RECIPE.world + 1 and new.blueprint == RECIPE.blueprint and new.modifiers == RECIPE.modifiers
    assert compose(new).id != spec.id


def test_a_leak_gets_another_phrasing_first() -> None:
    spec = compose(RECIPE)
    leak = Finding(
        kind="leaked_fact",
        where="user.hidden_facts[date]",
        evidence="in the opening",
        location=Location.hidden_fact("date"),
    )
    new = repair(RECIPE, spec, _report(leak))
    assert new.phrasing == 1 and new.world == RECIPE.world
    assert compose(new).user.opening != spec.user.opening
    assert repair(new, spec, _report(leak)).world == RECIPE.world + 1


def test_a_vacuous_check_is_dropped() -> None:
    spec = compose(RECIPE)
    index = next(i for i, c in enumerate(spec.checks) if c.kind == "count")
    location = Location.check(index, spec.checks[index].id)
    finding = Finding(kind="vacuous_check", where="(text only, never parsed)", evidence="holds", location=location)
    new = repair(RECIPE, spec, _report(finding))
    assert new.drop == (spec.checks[index].id,)
    assert spec.checks[index].id not in {c.id for c in compose(new).checks}


def test_vacuous_checks_as_a_whole_reroll_the_world() -> None:
    """An all-guard spec is vacuous as a whole: no single check to drop (parsing 'checks' used to raise)."""
    finding = Finding(kind="vacuous_check", where="checks", evidence="every check a guard", location=Location.checks())
    assert repair(RECIPE, compose(RECIPE), _report(finding)).world == RECIPE.world + 1


def test_a_finding_the_repair_loop_acts_on_must_be_located() -> None:
    with pytest.raises(ValueError, match="needs a location"):
        Finding(kind="vacuous_check", where="checks[0]", evidence="holds initially")


def test_reweighting_makes_every_probe_fail() -> None:
    spec = compose(RECIPE)
    ids = [c.id for c in spec.checks]
    optional = [c.id for c in spec.checks if not c.required]  # a failed required check caps the score anyway
    probes = {
        "a": ProbeResult(score=0.9, failed=[optional[0]]),
        "b": ProbeResult(score=0.9, failed=[optional[-1]]),
        "c": ProbeResult(score=0.0, safety=0.0, failed=[]),
    }
    weights = reweight(spec, probes)
    assert weights is not None and set(weights) == set(ids)
    assert all(_score(weights, p) < PASS_THRESHOLD for p in probes.values())
    assert reweight(spec, {"x": ProbeResult(score=1.0, failed=[])}) is None, "no weights help a probe no check catches"
    passed = Finding(kind="probe_passed", where="probe:a", evidence="0.9", location=Location.probe("a"))
    assert dict(repair(RECIPE, spec, _report(passed, probes=probes)).weights) == weights


def test_synthesize_counts_every_round() -> None:
    outcome = synthesize(RECIPE, max_rounds=0)
    assert outcome.verification.rounds == 0
    assert outcome.verification.admitted == (outcome.spec is not None)
    assert outcome.verification.reasons == ([] if outcome.spec else outcome.verification.kinds)
