"""Composed workflows: the seeded chain grammar, its openings, a small bank, the held-out split and the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmark_modules import load_benchmark
from coworkenv.bank.diversity import measure
from coworkenv.bank.store import load_bank, synthesize_bank
from coworkenv.cli import app
from coworkenv.spec import canonical_json
from coworkenv.synth.chains import COMPOSED, HELD_OUT_COMPOSED, MAX_STEPS
from coworkenv.synth.composer import FAMILIES, compose, plan, workflows
from coworkenv.synth.world import World


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("composed") / "bank"
    synthesize_bank(out, 48, seed=2, generator="composed")
    return out


def test_same_job_same_bytes_and_another_job_another_workflow() -> None:
    recipe = plan(4, 9, generator="composed")
    assert canonical_json(compose(recipe)) == canonical_json(compose(recipe))
    assert canonical_json(compose(plan(4, 10, generator="composed"))) != canonical_json(compose(recipe))


def test_chains_run_two_to_eight_steps_over_two_services_or_more() -> None:
    lengths = set()
    for seed in range(120):
        family = list(COMPOSED.values())[seed % len(COMPOSED)]
        draft = family.build(World(seed), frozenset())
        steps = draft.description.removeprefix("composed: ").split(" > ")
        assert 2 <= len(steps) <= MAX_STEPS and steps[-1] == "report"
        assert steps[0].startswith("locate_" if len(steps) > 2 else "start_") or steps[0].startswith("start_")
        lengths.add(len(steps))
        services = {s["call"].split("_", 1)[0] for s in draft.reference.calls()}
        assert len(services) >= 2
        assert any(s.startswith(("act_", "start_")) for s in steps)
    assert lengths == set(range(2, MAX_STEPS + 1))


def test_every_family_names_its_subject_and_the_report_names_what_was_found() -> None:
    for i, family in enumerate(COMPOSED.values()):
        spec = compose(plan(8, i, blueprints=[family.name]))
        assert spec.title.startswith("Follow-up on ") and "Follow-up on ." not in spec.title
        told = [c for c in spec.checks if c.id in ("told_subject", "told_found")]
        assert len(told) == 1, family.name


def test_openings_read_like_a_request_not_a_list_of_steps() -> None:
    for seed in range(30):
        spec = compose(plan(6, seed, generator="composed"))
        text = spec.user.opening
        assert not re.search(r"\bstep\b", text, re.I) and "{" not in text and "${" not in text  # Stephens may
        assert text[0].isupper() and text.rstrip()[-1] in ".?"
        assert "  " not in text


def test_the_mix_interleaves_blueprints_and_composed_families() -> None:
    names = workflows("mix")
    assert set(COMPOSED) <= set(names) and "customer_followup" in names
    with pytest.raises(ValueError, match="unknown generator"):
        workflows("bogus")


def test_a_composed_bank_is_admitted_split_and_diverse(bank: Path) -> None:
    manifest = json.loads((bank / "manifest.json").read_text())
    assert manifest["admitted"] == 48 and manifest["yield"] >= 0.9
    assert set(HELD_OUT_COMPOSED) <= set(manifest["config"]["held_out"])
    for family, row in manifest["per_blueprint"].items():
        assert row["split"] == ("heldout" if family in HELD_OUT_COMPOSED else "train")
    for spec, verification in load_bank(bank):
        assert spec.provenance.blueprint in FAMILIES and verification.admitted
        assert all(p.score < 0.75 for p in verification.probes.values())
    tallies = measure(bank)
    composed = tallies["composed"]
    assert composed.envs == 48 and len(composed.sequences) >= 30 and composed.wide >= 10
    assert "blueprints" not in tallies


def test_held_out_families_call_only_tools_the_training_families_call() -> None:
    tools: dict[bool, set[str]] = {True: set(), False: set()}
    for name, family in COMPOSED.items():
        for seed in range(150):
            draft = family.build(World(seed), frozenset())
            tools[name in HELD_OUT_COMPOSED] |= {s["call"] for s in draft.reference.calls()}
    assert tools[True] and tools[True] <= tools[False]


def test_cli_generator_flag(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["synth", "--n", "2", "--out", str(tmp_path / "b"), "--generator", "bogus"])
    assert bad.exit_code == 2 and "unknown generator" in bad.output
    ok = runner.invoke(app, ["synth", "--n", "4", "--out", str(tmp_path / "c"), "--generator", "mix", "--seed", "1"])
    assert ok.exit_code == 0, ok.output
    config = json.loads((tmp_path / "c" / "manifest.json").read_text())["config"]
    assert config["generator"] == "mix"


def test_information_synthesis_makes_the_chain_derive_a_figure_the_report_states() -> None:
    recipes = [plan(3, i, generator="composed", capabilities=["information_synthesis"]) for i in range(12)]
    for recipe in recipes:
        spec = compose(recipe)
        assert "information_synthesis" in spec.capabilities
        if "aggregate" in recipe.modifiers:
            assert "derive_sum" in spec.description or "derive_count" in spec.description
            assert any(c.kind in ("answer_number", "answer_counts") for c in spec.checks)
    assert any("aggregate" in r.modifiers for r in recipes)


def test_scripted_cheats_fail_on_the_composed_bank(bank: Path) -> None:
    cheats = load_benchmark("cheats")
    tally = cheats.measure(bank, limit=16)["composed"]
    assert tally["bare 'Done' as the report"][0] == 16 and tally["write argument of the look-alike"][0] > 0
    assert tally["report dumps every value seen"][0] == 16
    for name, (applies, passed, ids) in tally.items():
        assert passed == 0, (name, applies, ids)
