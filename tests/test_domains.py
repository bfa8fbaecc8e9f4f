"""The domain catalogue: every domain loads and becomes a declared service, broken files are named, and
composed workflows over each domain are admitted, deterministic and hard to game."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from coworkenv.bank.store import synthesize_bank
from coworkenv.runtime.environment import Environment
from coworkenv.services.registry import SERVICES, service_class
from coworkenv.spec import canonical_json
from coworkenv.spec.models import CallStep, TaskSpec
from coworkenv.synth.composer import Recipe, compose, plan, workflows
from coworkenv.synth.domain_chains import DOMAIN_WORKFLOWS, DomainWorkflow
from coworkenv.synth.domains import FOLDER, DomainError, catalogue, load_catalogue, load_domain
from coworkenv.synth.draft import finalize
from coworkenv.synth.steps.domain import LOCATE_ITEM
from coworkenv.synth.world import World
from coworkenv.verify.admission import play, verify
from coworkenv.verify.perturb import collateral_steps
from coworkenv.verify.probe_base import scripted

PASS = 0.75
DOMAINS = sorted(catalogue())


def domain_spec(domain: str, seed: int, locate: int = 0) -> TaskSpec:
    """A composed workflow over ``domain``, finding its record the ``locate``-th way."""
    family = DomainWorkflow(LOCATE_ITEM[locate % len(LOCATE_ITEM)], domains=(domain,))
    return finalize(family.build(World(seed), frozenset()), seed=seed)


def score(spec: TaskSpec, steps: list[object] | None = None) -> float:
    return play(Environment(spec), scripted(spec, spec.reference if steps is None else steps)).grade.score


def test_the_catalogue_holds_thirty_domains_beyond_the_built_in_services() -> None:
    assert len(DOMAINS) >= 30
    assert not set(DOMAINS) & set(SERVICES)
    own_keys = [d for d in catalogue().values() if d.key != "id"]
    assert len(own_keys) >= 10, "domains whose records are named by a key of their own (a tag, a SKU)"
    for name, domain in catalogue().items():
        decl = domain.service_decl()
        cls = service_class(name, {name: decl})
        assert len(cls.tools()) == 8 and all(t.startswith(f"{name}_") for t in cls.tools())
        assert {i.kind for i in cls.tools().values()} == {"read", "write"}
        assert cls.damage[domain.collection].value == domain.damage, name


def test_records_draw_from_the_fields_sources() -> None:
    spec = domain_spec("itassets", 3)
    assets = spec.services["itassets"]["assets"]
    field = catalogue()["itassets"].fields
    assert len(assets) >= 9
    for asset in assets:
        assert re.fullmatch(r"AT-\d{5}", asset["asset_tag"]) and asset["id"] == asset["asset_tag"]
        assert asset["model"] in (field["model"].values or []) and asset["office"] in (field["office"].values or [])
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", asset["warranty_end"]) and "@" in asset["holder"]
    assert len({a["asset_tag"] for a in assets}) == len(assets)


def test_a_seed_gives_the_same_bytes_and_another_seed_another_world() -> None:
    for name in DOMAIN_WORKFLOWS:
        recipe = Recipe(name, 11, modifiers=("withhold",))
        assert canonical_json(compose(recipe)) == canonical_json(compose(recipe))
        assert canonical_json(compose(Recipe(name, 12))) != canonical_json(compose(recipe))


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_domain_yields_admitted_workflows_the_oracle_solves(domain: str) -> None:
    for locate in range(len(LOCATE_ITEM)):
        spec = domain_spec(domain, 7 + locate, locate)
        report = verify(spec)
        assert report.admitted, [(f.kind, f.where, f.evidence) for f in report.findings]
        assert score(spec) == 1.0
        assert spec.declared_services is not None and list(spec.declared_services) == [domain]


def _calls(spec: TaskSpec, tool: str) -> list[int]:
    return [i for i, s in enumerate(spec.reference) if isinstance(s, CallStep) and s.call == tool]


@pytest.mark.parametrize("domain", ["fleet", "kb", "incidents", "todo", "mailroom"])
def test_writing_a_look_alike_or_skipping_the_write_fails(domain: str) -> None:
    d = catalogue()[domain]
    for seed in range(3):
        spec = domain_spec(domain, seed, seed)
        target = next(c.record_id for c in spec.checks if getattr(c, "record_id", None))
        decoys = [r["id"] for r in spec.services[domain][d.collection] if r["id"] != target]
        writes = [d.tool("update"), d.tool("add_log")]
        for tool in (t for t in writes if _calls(spec, t)):
            arg = d.key_arg if tool == d.tool("update") else d.log.link
            for decoy in decoys[:3]:
                wrong = [
                    s.model_copy(update={"args": {**s.args, arg: decoy}})
                    if isinstance(s, CallStep) and s.call == tool
                    else s
                    for s in spec.reference
                ]
                assert score(spec, wrong) < PASS, (tool, decoy)
            skipped = [s for s in spec.reference if not (isinstance(s, CallStep) and s.call == tool)]
            assert score(spec, skipped) < PASS, tool


def test_a_log_entry_written_twice_fails() -> None:
    d = catalogue()["lab"]
    for seed in range(6):
        spec = domain_spec("lab", seed, seed)
        at = _calls(spec, d.tool("add_log"))
        if at:
            twice = [*spec.reference[: at[0] + 1], spec.reference[at[0]], *spec.reference[at[0] + 1 :]]
            assert score(spec, twice) < PASS
            return
    pytest.fail("no lab workflow in six seeds adds a log entry")


def test_a_key_that_is_not_id_works_end_to_end() -> None:
    """Records of a domain keyed by ``asset_tag`` are fetched and changed by their tag; any other name is refused."""
    spec = domain_spec("itassets", 5)
    d = catalogue()["itassets"]
    env = Environment(spec)
    env.reset()
    tag = spec.services["itassets"]["assets"][0]["asset_tag"]

    def call(tool: str, args: dict[str, object]) -> str:
        obs = env.step({"content": "", "tool_calls": [{"id": "c1", "name": tool, "arguments": json.dumps(args)}]})
        return str(obs.messages[-1]["content"])

    assert json.loads(call(d.tool("get"), {"asset_tag": tag}))["asset_tag"] == tag
    refused = json.loads(call(d.tool("get"), {"id": tag}))["error"]
    assert "asset_tag: Field required" in refused and "id: Extra inputs are not permitted" in refused
    missing = json.loads(call(d.tool("get"), {"asset_tag": "AT-00000x"}))
    assert missing == {"error": "no assets record with id 'AT-00000x'"}
    status = next(s for s in d.statuses if s != spec.services["itassets"]["assets"][0]["status"])
    assert json.loads(call(d.tool("update"), {"asset_tag": tag, "status": status}))["updated"] is True
    assert env.workspace.state["itassets"]["assets"][tag]["status"] == status
    found = json.loads(call(d.tool("list"), {"status": status, "limit": 50}))["assets"]
    assert tag in [a["asset_tag"] for a in found]


def test_the_collateral_probe_knows_a_damaging_write_in_every_domain() -> None:
    for domain in DOMAINS:
        d = catalogue()[domain]
        spec = domain_spec(domain, 2)
        steps = [s for s in collateral_steps(spec) if s.call == d.tool("update")]
        assert steps and steps[0].args[d.status] == d.damage, domain
        assert steps[0].args[d.key_arg] not in repr([c.model_dump() for c in spec.checks])
        assert score(spec, [*spec.reference[:-1], steps[0], spec.reference[-1]]) < PASS, domain


def test_the_mix_and_composed_generators_draw_domain_families() -> None:
    assert set(DOMAIN_WORKFLOWS) <= set(workflows("mix")) and set(DOMAIN_WORKFLOWS) <= set(workflows("composed"))
    drawn = [compose(plan(3, i, generator="mix")) for i in range(len(workflows("mix")))]
    domains = {n for s in drawn for n in (s.declared_services or {})}
    assert len(domains) >= 2


def test_a_bank_of_domain_workflows_is_admitted_and_built_twice_is_the_same_bytes(tmp_path: Path) -> None:
    banks = [tmp_path / "a", tmp_path / "b"]
    for out in banks:
        synthesize_bank(out, 30, seed=4, blueprints=list(DOMAIN_WORKFLOWS))
    manifest = json.loads((banks[0] / "manifest.json").read_text())
    assert manifest["admitted"] >= 28 and set(manifest["per_blueprint"]) == set(DOMAIN_WORKFLOWS)
    shards = sorted(str(p.relative_to(banks[0])) for p in banks[0].glob("shards/*"))
    assert shards and shards == sorted(str(p.relative_to(banks[1])) for p in banks[1].glob("shards/*"))
    assert all((banks[0] / s).read_bytes() == (banks[1] / s).read_bytes() for s in shards)


BROKEN = [  # (text to replace in fleet.yaml, or "" to append; its replacement; the message)
    ("", "colour: red\n", "colour: Extra inputs are not permitted"),
    ("facet: depot", "facet: depots", "facet: 'depots' is not one of the fields"),
    ("date: next_service", "date: odometer", "date: field 'odometer' must take its values from days"),
    ("range: [1200", "days: [1, 2], range: [1200", "fields.odometer: give exactly one of values, fake, pattern"),
    ("[available,", "[off,", "fields.status.values.0: Input should be a valid string"),
    ("damage: retired", "damage: scrapped", "damage: 'scrapped' is not one of the status values"),
    ("title: Fleet", "title: A\ntitle: B", "<root>: cannot be read: not valid YAML: key 'title' given twice"),
    ("service: fleet", "service: fleets", "service: 'fleets' differs from the file name 'fleet'"),
    ("assignee: driver", "assignee: vin", "assignee: field 'vin' must be a colleague field"),
    ("status: status", "status: depot", "status: field 'depot' already plays the facet role"),
    ('pattern: "??##-???"', "pattern: PLATE", "fields.plate: pattern: 'PLATE' has no '#' or '?'"),
]


@pytest.mark.parametrize(("old", "new", "message"), BROKEN)
def test_a_broken_domain_file_is_named_with_its_field(tmp_path: Path, old: str, new: str, message: str) -> None:
    text = (FOLDER / "fleet.yaml").read_text()
    assert old in text
    text = text.replace(old, new, 1) if old else text + new
    (tmp_path / "fleet.yaml").write_text(text)
    with pytest.raises(DomainError) as caught:
        load_domain(tmp_path / "fleet.yaml")
    wanted = f"{tmp_path / 'fleet.yaml'}: {message}"
    assert any(p.startswith(wanted) for p in caught.value.problems), caught.value.problems


def test_the_catalogue_reports_every_broken_file_at_once(tmp_path: Path) -> None:
    (tmp_path / "fleet.yaml").write_text((FOLDER / "fleet.yaml").read_text().replace("key: plate", "key: plates"))
    (tmp_path / "kb.yaml").write_text("- a list\n")
    (tmp_path / "lab.yaml").write_text((FOLDER / "lab.yaml").read_text())
    with pytest.raises(DomainError) as caught:
        load_catalogue(tmp_path)
    problems = caught.value.problems
    assert len(problems) == 2
    assert "fleet.yaml: key: 'plates' is not one of the fields" in problems[0]
    assert "kb.yaml: <root>: expected a mapping, got list" in problems[1]
    assert set(load_catalogue(FOLDER)) == set(DOMAINS)
