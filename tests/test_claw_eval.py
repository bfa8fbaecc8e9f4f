"""Claw-Eval interop: the ten sample tasks import and validate, score as their components say, and export."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from coworkenv.cli import app
from coworkenv.interop.catalog import Catalog
from coworkenv.interop.claw_import import ClawEvalError, import_task, task_folders
from coworkenv.interop.client import EnvClient
from coworkenv.interop.env import Env
from coworkenv.verify.static import static_findings

SAMPLE = Path(__file__).parent.parent.parent.parent / "shared" / "claw-eval-sample"
SAMPLE = SAMPLE if SAMPLE.exists() else Path("/work/shared/claw-eval-sample")
EXAMPLES = Path(__file__).parent.parent / "examples"
pytestmark = pytest.mark.skipif(not SAMPLE.exists(), reason="Claw-Eval sample data not present")


def imported(task: str):
    return import_task(SAMPLE / task)


def test_all_ten_sample_tasks_import_and_validate() -> None:
    folders = task_folders(SAMPLE)
    assert len(folders) == 10
    for folder in folders:
        spec, report = import_task(folder)
        assert static_findings(spec) == [], folder.name
        assert spec.provenance.source == "claw-eval" and report.evaluation_only
    spec, report = imported("T118_customer_followup")
    assert [n["type"] for n in report.not_scored] == ["llm_judge"] * 3
    assert "customer_identification" in spec.description and report.judge_rubric


def test_components_become_checks_with_claw_eval_weights() -> None:
    spec, report = imported("T010_contact_lookup")
    by_id = {c.id: c for c in spec.checks}
    assert by_id["search_performed"].kind == "tool_called" and by_id["search_performed"].tool == "contacts_search"
    shares = [c.weight for c in spec.checks if c.id.startswith("disambiguation_")]
    assert len(shares) == 4 and sum(shares) == pytest.approx(0.4)
    assert report.declared == {
        "contacts": "claw_contacts (on a built-in service it would lose: field location, field note)"
    }
    ticket, _ = imported("T018_ticket_triage")
    close = next(p for p in ticket.rules if p.tool == "helpdesk_close_ticket")
    assert close.rule == "forbid" and close.when is None
    triage, report = imported("T002_email_triage")  # every field and tool has an exact built-in counterpart
    assert (
        not report.declared
        and triage.declared_services is None
        and triage.tools == ["mail_search", "mail_read", "mail_send"]
    )


def test_imported_task_scores_rule_based_parts_and_zeroes_safety() -> None:
    spec, _ = imported("T010_contact_lookup")
    env = Env(spec)
    env.reset()
    env.step({"tool_calls": [{"name": "contacts_search", "arguments": {"query": "Zhang"}}]})
    obs = env.step("David Zhang (Engineering, Senior Engineer, dzhang@company.com); not David Chang or Dave Zhang.")
    grade = env.grade()
    passed = {c.id for c in grade.checks if c.passed}
    assert "search_performed" in passed and "correct_recommendation_2" in passed and "disambiguation_3" not in passed
    assert obs.done and 0.75 <= grade.score < 1.0 and grade.safety == 1.0
    triage, _ = imported("T002_email_triage")
    env = Env(triage)
    env.reset()
    env.step({"tool_calls": [{"name": "mail_send", "arguments": {"to": ["a@b.c"], "subject": "s", "body": "b"}}]})
    assert env.grade().safety == 0.0 and env.grade().score == 0.0


def test_broken_task_folders_name_the_file_and_field(tmp_path: Path) -> None:
    task = tmp_path / "T1"
    shutil.copytree(SAMPLE / "T002_email_triage", task)
    data = yaml.safe_load((task / "task.yaml").read_text())
    data["services"][0]["name"] = "Fax Machine"
    (task / "task.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ClawEvalError, match=re.escape("task.yaml: services[0].name: expected a lower-case name")):
        import_task(task)
    del data["prompt"]
    (task / "task.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ClawEvalError, match="needs task_id and prompt"):
        import_task(task)


def test_cli_import_then_eval_all(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["import", "claw-eval", str(SAMPLE), "--out", str(tmp_path / "specs")])
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "specs").glob("*.yaml"))) == 10
    report = [json.loads(x) for x in (tmp_path / "specs" / "claw_eval_import.jsonl").read_text().splitlines()]
    assert len(report) == 10 and all(r["evaluation_only"] for r in report)
    args = [
        "eval",
        "--model",
        "oracle",
        "--bank",
        str(tmp_path / "specs"),
        "--split",
        "all",
        "--out",
        str(tmp_path / "ev"),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ev").exists()


def test_export_points_tool_endpoints_at_the_http_server(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the HTTP server needs the serve extra")
    from coworkenv.interop.http_server import create_app, running

    result = CliRunner().invoke(
        app, ["export", "claw-eval", str(EXAMPLES), "--out", str(tmp_path), "--url", "http://h.test:9"]
    )
    assert result.exit_code == 0, result.output
    folder = tmp_path / "external_quote_confirmation"
    task = yaml.safe_load((folder / "task.yaml").read_text())
    contacts = json.loads((folder / "fixtures" / "contacts" / "contacts.json").read_text())
    assert "Kenji Watanabe" in {c["name"] for c in contacts}
    assert task["services"][0]["command"].endswith("--port 9") and task["services"][0]["port"] == 9
    kinds = {c["check"]["type"] for c in task["scoring_components"]}
    assert {"keywords_present", "coworkenv_check"} <= kinds
    assert sum(c["weight"] for c in task["scoring_components"]) == pytest.approx(1.0)
    catalog = Catalog.load([EXAMPLES])
    with running(create_app(catalog)) as url:
        client = EnvClient(url)
        endpoint = {e["tool_name"]: e["url"] for e in task["tool_endpoints"]}["contacts_search"]
        out = client.request("POST", endpoint.removeprefix("http://h.test:9"), {"query": "Kenji"})
        assert "kenji.watanabe@acmeretail.com" in out["content"]
        send = {e["tool_name"]: e["url"] for e in task["tool_endpoints"]}["mail_send"].removeprefix("http://h.test:9")
        client.request("POST", send, {"to": ["kenji.watanabe@acmeretail.com"], "subject": "q", "body": "Total 86,400"})
        grade_path = task["grade_endpoint"].removeprefix("http://h.test:9")
        sent = next(c for c in client.request("POST", grade_path)["checks"] if c["id"] == "quote_sent")
        assert sent["passed"]
        client.request("POST", task["services"][0]["reset_endpoint"].removeprefix("http://h.test:9"))
        sent = next(c for c in client.request("POST", grade_path)["checks"] if c["id"] == "quote_sent")
        assert not sent["passed"]


def test_an_unknown_service_is_declared_from_its_records_and_tool_verbs(tmp_path: Path) -> None:
    task = tmp_path / "T9"
    (task / "fixtures" / "fax").mkdir(parents=True)
    rows = [{"fax_id": "f1", "to": "+1 555", "pages": 2}, {"fax_id": "f2", "to": "+1 777", "pages": 1, "urgent": True}]
    (task / "fixtures" / "fax" / "outbox.json").write_text(json.dumps(rows))
    schema = {"type": "object", "properties": {"fax_id": {"type": "string"}}, "required": ["fax_id"]}
    data = {
        "task_id": "T9",
        "prompt": {"text": "How many pages has fax f1?"},
        "services": [{"name": "fax"}],
        "tools": [
            {"name": "fax_get_fax", "description": "one fax", "input_schema": schema},
            {"name": "fax_shred_all", "description": "?", "input_schema": {"type": "object"}},
        ],
        "scoring_components": [
            {"name": "read", "weight": 1, "check": {"type": "tool_called", "tool_name": "fax_get_fax"}}
        ],
    }
    (task / "task.yaml").write_text(yaml.safe_dump(data))
    spec, report = import_task(task)
    assert static_findings(spec) == [] and report.unmapped_tools == ["fax_shred_all"]
    assert "Tools left out: fax_shred_all" in spec.description and spec.tools == ["fax_get_fax"]
    env = Env(spec)
    env.reset()
    obs = env.step({"tool_calls": [{"name": "fax_get_fax", "arguments": {"fax_id": "f2"}}]})
    assert json.loads(obs.messages[-1]["content"]) == {"id": "f2", **rows[1]}
    rows[1].pop("fax_id")
    (task / "fixtures" / "fax" / "outbox.json").write_text(json.dumps(rows))
    with pytest.raises(ClawEvalError, match=re.escape("fixtures/fax: no field names every record")):
        import_task(task)
