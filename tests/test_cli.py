"""The command line: schema, run, quickstart (the main job) and validate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from coworkenv.cli import app
from minispec import tiny_data

EXAMPLES = Path(__file__).parent.parent / "examples"
SPEC = EXAMPLES / "expense_over_limit_approval.yaml"
runner = CliRunner()


def test_schema_prints_the_task_spec_json_schema() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert {"services", "user", "checks", "reference"} <= set(schema["properties"])
    assert set(schema["required"]) >= {"id", "checks", "reference", "user"}


def test_run_prints_transcript_and_grade() -> None:
    result = runner.invoke(app, ["run", str(SPEC), "--policy", "oracle"])
    assert result.exit_code == 0, result.output
    assert "expenses_request_approval" in result.output
    assert "score 1.000 (pass)" in result.output


def test_run_json_is_a_trajectory() -> None:
    result = runner.invoke(app, ["run", str(SPEC), "--json", "--seed", "3"])
    assert result.exit_code == 0, result.output
    traj = json.loads(result.stdout)
    assert traj["spec_id"] == "expense_over_limit_approval" and traj["seed"] == 3
    assert traj["grade"]["score"] == 1.0 and traj["done_reason"] == "user_done"


def test_run_reports_an_invalid_spec(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tiny_data(max_turns="lots")), encoding="utf-8")
    result = runner.invoke(app, ["run", str(bad)])
    assert result.exit_code == 2
    assert "bad.json" in result.output and "max_turns" in result.output


def test_run_rejects_an_unknown_policy() -> None:
    result = runner.invoke(app, ["run", str(SPEC), "--policy", "telepathy"])
    assert result.exit_code != 0


def test_quickstart_runs_every_example_and_the_pipeline(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["quickstart", "--examples", str(EXAMPLES), "--out", str(out), "--n", "20"])
    assert result.exit_code == 0, result.output
    assert "oracle on the example environments" in result.output
    assert result.output.count("✓") >= 14
    bank = json.loads((out / "bank" / "manifest.json").read_text())
    assert bank["admitted"] == 20
    sft_lines = (out / "sft" / "sft.jsonl").read_text().splitlines()
    assert len(sft_lines) == bank["split"]["train"] and "messages" in json.loads(sft_lines[0])


def test_quickstart_fails_when_an_example_fails(tmp_path: Path) -> None:
    shutil.copy(SPEC, tmp_path / SPEC.name)
    (tmp_path / "broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    result = runner.invoke(app, ["quickstart", "--examples", str(tmp_path), "--out", str(tmp_path / "out"), "--n", "2"])
    assert result.exit_code == 1
    assert "broken.yaml" in result.output and "✗" in result.output and "✓" in result.output


def test_validate_accepts_the_examples() -> None:
    result = runner.invoke(app, ["validate", *map(str, sorted(EXAMPLES.glob("*.yaml")))])
    assert result.exit_code == 0, result.output


def test_validate_rejects_a_broken_reference(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    data = tiny_data(reference=[{"call": "mail_teleport", "args": {}}, {"answer": "ok"}])
    bad.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 1 and "mail_teleport" in result.output
