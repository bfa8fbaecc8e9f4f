"""The spec-file commands: validate and verify report every file; run reports unfit fixtures cleanly."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from coworkenv.cli import app

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "expense_over_limit_approval.yaml"
BROKEN = ROOT / "tests" / "broken_specs"
runner = CliRunner()


def _unparsable(tmp_path: Path) -> Path:
    bad = tmp_path / "a.yaml"
    bad.write_text("id: x\ntitle: [unclosed\n", encoding="utf-8")
    return bad


def test_validate_reports_every_file_after_an_unparsable_one(tmp_path: Path) -> None:
    bad = _unparsable(tmp_path)
    result = runner.invoke(app, ["validate", str(bad), str(EXAMPLE), str(BROKEN / "leaked_time.yaml")])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "a.yaml" in result.output and "not valid YAML" in result.output
    assert "✓" in result.output and "expense_over_limit_approval" in result.output
    assert "leaked_fact" in result.output and "user.hidden_facts[time]" in result.output


def test_run_reports_a_fixture_that_does_not_fit_the_service_model() -> None:
    result = runner.invoke(app, ["run", str(BROKEN / "bad_fixture.yaml")])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # no traceback
    assert "bad_fixture.yaml" in result.output and "services.tickets" in result.output
    assert "severity" in result.output


def test_verify_prints_each_verdict_and_exits_1_on_a_rejection(tmp_path: Path) -> None:
    bad = _unparsable(tmp_path)
    paths = [str(EXAMPLE), str(BROKEN / "unsolvable_number.yaml"), str(bad)]
    result = runner.invoke(app, ["verify", *paths])
    assert result.exit_code == 1, result.output
    out = result.output
    assert "admitted" in out and "rejected" in out
    assert "unsolvable" in out and "(expenses_create_expense).amount" in out and "hint:" in out
    assert "not valid YAML" in out


def test_verify_json_lists_findings() -> None:
    result = runner.invoke(app, ["verify", "--json", str(EXAMPLE), str(BROKEN / "answer_in_persona.yaml")])
    assert result.exit_code == 1, result.output
    reports = json.loads(result.stdout)
    assert [r["admitted"] for r in reports] == [True, False]
    assert reports[0]["reference_score"] == 1.0 and all(s < 0.75 for s in reports[0]["probes"].values())
    finding = reports[1]["findings"][0]
    assert finding["kind"] == "answer_in_prompt" and finding["where"] == "checks[2]"
    assert finding["evidence"] and finding["hint"]


def test_verify_admits_the_examples() -> None:
    result = runner.invoke(app, ["verify", *map(str, sorted((ROOT / "examples").glob("*.yaml")))])
    assert result.exit_code == 0, result.output
