"""Blueprints: 20 seeds each are admitted or rejected with stated reasons, and are reproducible."""

from __future__ import annotations

import pytest

from coworkenv.runtime.user import CONFIRM_PHRASES
from coworkenv.services import ALL_TOOLS
from coworkenv.spec import canonical_json, content_id
from coworkenv.spec.models import CallStep
from coworkenv.synth.blueprints import BLUEPRINTS, HELD_OUT, OPTIONS
from coworkenv.synth.composer import capabilities_of, compose, plan
from coworkenv.synth.world import World
from coworkenv.verify import FINDING_KINDS
from coworkenv.verify.repair import synthesize

SEEDS = 20


def test_the_bank_has_enough_distinct_workflows() -> None:
    assert len(BLUEPRINTS) >= 16
    assert set(HELD_OUT) <= set(BLUEPRINTS) and len(HELD_OUT) == 4
    for split in (set(HELD_OUT), set(BLUEPRINTS) - set(HELD_OUT)):
        assert all("multi_turn" in capabilities_of(name) for name in split)


@pytest.mark.parametrize("name", sorted(BLUEPRINTS))
def test_blueprint_drafts_are_well_formed(name: str) -> None:
    bp = BLUEPRINTS[name]
    assert bp.options <= set(OPTIONS) and bp.summary
    draft = bp.build(World(11), bp.options)
    assert len(draft.openings) >= 3
    for fact in draft.facts.values():
        # the scripted user would take such a question for a confirmation request
        assert not any(p in fact.question.lower() for p in CONFIRM_PHRASES)
        assert str(fact.value) in fact.reply or not fact.withholdable


@pytest.mark.parametrize("name", sorted(BLUEPRINTS))
def test_blueprint_seeds_are_admitted_or_rejected_with_reasons(name: str) -> None:
    admitted = 0
    for index in range(SEEDS):
        recipe = plan(7, index, [name])
        outcome = synthesize(recipe)
        report = outcome.verification
        if outcome.spec is None:
            assert report.findings and all(f.kind in FINDING_KINDS and f.evidence for f in report.findings)
            assert report.reasons
            continue
        admitted += 1
        spec = outcome.spec
        assert spec.id == content_id(spec)
        assert spec.provenance.blueprint == name and spec.provenance.seed == recipe.seed
        assert {s.call for s in spec.reference if isinstance(s, CallStep)} <= set(ALL_TOOLS)
        assert report.reference_score == 1.0 and all(p.score < 0.75 for p in report.probes.values())
    assert admitted >= SEEDS - 2


@pytest.mark.parametrize("name", sorted(BLUEPRINTS))
def test_same_seed_same_bytes(name: str) -> None:
    recipe = plan(3, 5, [name])
    first, second = compose(recipe), compose(recipe)
    assert canonical_json(first) == canonical_json(second)
    assert canonical_json(compose(plan(3, 6, [name]))) != canonical_json(first)
