"""Imported Claw-Eval tasks keep every fixture field and every tool, run, and stay out of training data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from coworkenv.agents import OracleTeacher
from coworkenv.cli import app
from coworkenv.interop.claw_import import import_task, task_folders
from coworkenv.interop.claw_mapping import COLLECTIONS, RECORDS
from coworkenv.runtime import Environment, run_episode
from coworkenv.spec import canonical_json, save_spec
from coworkenv.verify.admission import verify

SAMPLE = Path(__file__).parent.parent.parent.parent / "shared" / "claw-eval-sample"
SAMPLE = SAMPLE if SAMPLE.exists() else Path("/work/shared/claw-eval-sample")
EXAMPLES = Path(__file__).parent.parent / "examples"
pytestmark = pytest.mark.skipif(not SAMPLE.exists(), reason="Claw-Eval sample data not present")
FOLDERS = task_folders(SAMPLE) if SAMPLE.exists() else []


def source_rows(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Each service's fixture records, read straight from the task folder."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((folder / "fixtures").glob("*/*.json")):
        data = json.loads(path.read_text())
        rows = next(v for v in data.values() if isinstance(v, list)) if isinstance(data, dict) else data
        out.setdefault(path.parent.name, []).extend(rows)
    return out


def _same(a: Any, b: Any) -> bool:
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name[:4])
def test_every_fixture_field_survives_into_the_live_workspace(folder: Path) -> None:
    spec, report = import_task(folder)
    state = Environment(spec).workspace.state  # what the agent's tools read, after validation
    for service, rows in source_rows(folder).items():
        assert rows, folder
        if service in report.declared:
            collection, key = COLLECTIONS[service]
            live = state[f"claw_{service}"][collection]
            for row in rows:
                rec = live[row[key]]
                assert set(rec) == set(row) | {"id"}, (service, row[key])
                for field, value in row.items():
                    assert _same(rec[field], value), (service, row[key], field)
        else:  # the exact fixed mapping: every field has its place and converts as declared
            mapping = RECORDS[service]
            live = state[mapping.service][mapping.collection]
            for row in rows:
                rec = live[row[mapping.id_field]]
                for field, value in row.items():
                    if field != mapping.id_field:
                        assert rec[mapping.fields[field]] == mapping.convert.get(field, lambda v: v)(value)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name[:4])
def test_every_tool_is_offered_under_a_name_of_its_own(folder: Path) -> None:
    spec, report = import_task(folder)
    tools = yaml.safe_load((folder / "task.yaml").read_text())["tools"]
    router = Environment(spec).router
    offered = {t["function"]["name"]: t["function"] for t in router.schemas()}
    assert not report.unmapped_tools
    targets = [report.tool_map[t["name"]] for t in tools]
    assert len(set(targets)) == len(tools)  # no two Claw-Eval tools collapse into one
    assert {name for name, _ in targets} == set(offered) == set(spec.tools or [])
    for tool in tools:
        if router.tools[report.tool_map[tool["name"]][0]].service.startswith("claw_"):  # the Claw-Eval schema itself
            params = offered[tool["name"]]["parameters"]
            assert list(params["properties"]) == list(tool["input_schema"].get("properties", {}))
            assert sorted(params.get("required", [])) == sorted(tool["input_schema"].get("required", []))
            assert offered[tool["name"]]["description"] == tool["description"]


def test_the_fixed_mapping_stays_where_it_is_exact_and_ten_tasks_lose_nothing() -> None:
    declared = {f.name[:4]: sorted(import_task(f)[1].declared) for f in FOLDERS}
    assert declared["T002"] == [] and declared["T075"] == []  # gmail (and contacts_search) map exactly
    assert declared["T010"] == ["contacts"] and declared["T118"] == ["crm", "gmail"]
    assert declared["T030"] == ["calendar", "contacts", "gmail"]  # two calendar tools would merge into one


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name[:4])
def test_imported_reference_runs_and_import_is_deterministic(folder: Path) -> None:
    spec, _ = import_task(folder)
    assert canonical_json(spec) == canonical_json(import_task(folder)[0])
    traj = run_episode(Environment(spec), OracleTeacher())
    assert traj.error is None and traj.done_reason and traj.grade is not None and traj.evaluation_only
    result = verify(spec)
    assert not result.admitted and [f.kind for f in result.findings] == ["evaluation_only"]


def test_verify_prints_evaluation_only_and_exits_0_when_static_checks_pass(tmp_path: Path) -> None:
    spec, _ = import_task(SAMPLE / "T010_contact_lookup")
    save_spec(spec, tmp_path / "t010.yaml")
    out = CliRunner().invoke(app, ["verify", str(tmp_path / "t010.yaml")])
    assert out.exit_code == 0 and "EVALUATION-ONLY" in out.output and "static checks pass" in out.output
    report = json.loads(CliRunner().invoke(app, ["verify", "--json", str(tmp_path / "t010.yaml")]).output)
    assert report[0]["evaluation_only"] and not report[0]["admitted"]
    broken = spec.model_copy(update={"tools": ["contacts_search", "no_such_tool"]})
    save_spec(broken, tmp_path / "broken.yaml")
    out = CliRunner().invoke(app, ["verify", str(tmp_path / "broken.yaml")])
    assert out.exit_code == 1 and "EVALUATION-ONLY" in out.output and "no_such_tool" in out.output


def test_an_imported_task_cannot_reach_the_sft_or_rl_export_unnoticed(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(EXAMPLES, specs)
    for name in ("T010_contact_lookup", "T002_email_triage"):
        spec, _ = import_task(SAMPLE / name)
        save_spec(spec, specs / f"{spec.id}.yaml")
    runner = CliRunner()
    result = runner.invoke(app, ["rollout", "--bank", str(specs), "--policy", "oracle", "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    episodes = [json.loads(x) for x in (tmp_path / "r" / "episodes.jsonl").read_text().splitlines()]
    assert sum(1 for e in episodes if e["trajectory"]["evaluation_only"]) == 2
    args = ["export", "sft", str(tmp_path / "r"), "--out", str(tmp_path / "sft"), "--min-score", "0"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "skipped 2 episode(s) of evaluation-only environments" in " ".join(result.output.split())
    sources = (tmp_path / "sft" / "sources.jsonl").read_text()
    assert "claw_eval" not in sources and "claw_eval" not in (tmp_path / "sft" / "sft.jsonl").read_text()
    spec_ids = {json.loads(line)["spec_id"] for line in sources.splitlines()}
    assert len(spec_ids) == len(list(EXAMPLES.glob("*.yaml")))  # every hand-written example still goes in
    assert json.loads((tmp_path / "sft" / "manifest.json").read_text())["skipped_evaluation_only"] == 2
    result = runner.invoke(app, ["export", "rl", str(tmp_path / "r"), "--out", str(tmp_path / "rl")])
    assert result.exit_code == 0 and "skipped 2 episode(s)" in " ".join(result.output.split())
    assert "claw_eval" not in (tmp_path / "rl" / "rl.jsonl").read_text()
    assert json.loads((tmp_path / "rl" / "manifest.json").read_text())["skipped_evaluation_only"] == 2


def test_rl_training_refuses_a_folder_holding_an_imported_task(tmp_path: Path) -> None:
    spec, _ = import_task(SAMPLE / "T002_email_triage")
    save_spec(spec, tmp_path / "t002.yaml")
    args = ["train", "grpo", "--model", "tiny", "--bank", str(tmp_path), "--split", "all", "--out", str(tmp_path / "o")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "evaluation-only environment(s)" in " ".join(result.output.split())
    assert not (tmp_path / "o").exists()
