"""What every blueprint's test file checks: a subclass names the blueprint and adds its own cases.

Each blueprint has one test file (``test_<blueprint>.py``) with a ``Test...`` class deriving
from :class:`BlueprintCases`: the shared cases (well-formed drafts, seeds admitted or
rejected with reasons, same seed same bytes) plus the workflow's own.
"""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.bank.repair import synthesize
from coworkenv.runtime.user import CONFIRM_PHRASES
from coworkenv.services import ALL_TOOLS
from coworkenv.spec import canonical_json, content_id
from coworkenv.spec.models import CallStep
from coworkenv.synth.blueprints import BLUEPRINTS, OPTIONS
from coworkenv.synth.composer import compose, plan
from coworkenv.synth.draft import Draft
from coworkenv.synth.world import World
from coworkenv.verify import FINDING_KINDS

SEEDS = 20


def build(name: str, options: frozenset[str] = frozenset(), seed: int = 11) -> Draft:
    """The blueprint's draft for a world seed, with the given options."""
    return BLUEPRINTS[name].build(World(seed), options)


def check(draft: Draft, id: str) -> Any:
    return next(c for c in draft.checks if c.id == id)


def calls(draft: Draft) -> list[str]:
    return [s["call"] for s in draft.reference.calls()]


class BlueprintCases:
    name: ClassVar[str]

    def test_draft_is_well_formed(self) -> None:
        bp = BLUEPRINTS[self.name]
        assert bp.options <= set(OPTIONS) and bp.summary
        draft = bp.build(World(11), bp.options)
        assert len(draft.openings) >= 3
        for fact in draft.facts.values():
            # the scripted user would take such a question for a confirmation request
            assert not any(p in fact.question.lower() for p in CONFIRM_PHRASES)
            assert str(fact.value) in fact.reply or not fact.withholdable
        assert draft.reference.main() is not None and set(calls(draft)) <= set(ALL_TOOLS)

    def test_seeds_are_admitted_or_rejected_with_reasons(self) -> None:
        admitted = 0
        for index in range(SEEDS):
            recipe = plan(7, index, [self.name])
            outcome = synthesize(recipe)
            report = outcome.verification
            if outcome.spec is None:
                assert report.findings and all(f.kind in FINDING_KINDS and f.evidence for f in report.findings)
                assert report.reasons
                continue
            admitted += 1
            spec = outcome.spec
            assert spec.id == content_id(spec)
            assert spec.provenance.blueprint == self.name and spec.provenance.seed == recipe.seed
            assert {s.call for s in spec.reference if isinstance(s, CallStep)} <= set(ALL_TOOLS)
            assert report.reference_score == 1.0 and all(p.score < 0.75 for p in report.probes.values())
        assert admitted >= SEEDS - 2

    def test_same_seed_same_bytes(self) -> None:
        recipe = plan(3, 5, [self.name])
        first, second = compose(recipe), compose(recipe)
        assert canonical_json(first) == canonical_json(second)
        assert canonical_json(compose(plan(3, 6, [self.name]))) != canonical_json(first)
