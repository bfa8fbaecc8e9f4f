"""The 55 general tasks of Claw-Eval (T001–T099): every one imports and validates or is left out by name, the
import is byte-stable, and imported services behave as Claw-Eval's mock services do."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from coworkenv.cli import app
from coworkenv.interop.claw_import import ClawEvalError, NotOffline, import_task, task_folders
from coworkenv.interop.env import Env
from coworkenv.verify.static import static_findings

GENERAL = Path(__file__).parent.parent.parent.parent / "shared" / "claw-eval-general"
GENERAL = GENERAL if GENERAL.exists() else Path("/work/shared/claw-eval-general")
pytestmark = pytest.mark.skipif(not GENERAL.exists(), reason="Claw-Eval general tasks not present")
PDF_TASKS = {"T097_pinbench_eli5_model_summary", "T098_pinbench_openclaw_facts"}


def play(task: str, calls: list[tuple[str, dict[str, Any]]], answer: str) -> tuple[Any, list[Any]]:
    """Import ``task``, make ``calls``, answer; the grade and each call's result."""
    spec, _ = import_task(GENERAL / task)
    env = Env(spec)
    env.reset()
    seen = []
    for name, args in calls:
        obs = env.step({"tool_calls": [{"name": name, "arguments": args}]})
        seen.append(json.loads(obs.messages[-1]["content"]))
    env.step(answer)
    return env.grade(), seen


def test_every_general_task_imports_and_validates_or_is_left_out_by_name() -> None:
    folders = task_folders(GENERAL)
    assert len(folders) == 55 and sum("zh_" in f.name for f in folders) == 21
    for folder in folders:
        if folder.name in PDF_TASKS:
            with pytest.raises(NotOffline, match=r"task\.yaml: tools: no tool of this task can run offline"):
                import_task(folder)
            continue
        spec, report = import_task(folder)
        assert static_findings(spec) == [], folder.name
        assert report.scored or report.judged, folder.name
        assert not report.unmapped_tools, (folder.name, report.unmapped_tools)


def test_the_report_says_what_rules_score_and_what_needs_a_judge() -> None:
    _, inventory = import_task(GENERAL / "T020_inventory_check")
    assert [j["name"] for j in inventory.judged] == ["urgency_and_quantity"]
    assert "reorder" in inventory.judged[0]["description"] and "order_placement" in inventory.scored
    _, triage = import_task(GENERAL / "T002_email_triage")
    assert triage.answer_lengths == [{"name": "summary_quality", "weight": 0.2, "min_length": 100}]
    _, dashboard = import_task(GENERAL / "T034_ops_review_dashboard")  # forbids tools the task does not offer
    assert "safety_3: config_notify is not offered" in dashboard.safe_by_construction
    _, brief = import_task(GENERAL / "T087_pinbench_market_news_brief")  # no component: the rubric is judged
    assert brief.placeholder == "read_the_data" and [j["name"] for j in brief.judged] == ["judge_rubric"]


def test_cli_imports_the_benchmark_twice_to_the_same_bytes(tmp_path: Path) -> None:
    runner = CliRunner()
    outs = []
    for name in ("a", "b"):
        result = runner.invoke(app, ["import", "claw-eval", str(GENERAL), "--out", str(tmp_path / name)])
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output
        summary = "53 of 55 imported; 2 left out (cannot run offline; 2 no tool runs offline), 0 failed"
        assert summary in " ".join(result.output.split())
        outs.append({p.name: p.read_bytes() for p in sorted((tmp_path / name).iterdir())})
    assert outs[0] == outs[1] and len(outs[0]) == 54
    lines = [json.loads(x) for x in outs[0]["claw_eval_import.jsonl"].decode().splitlines()]
    assert sorted(x["task_id"] for x in lines if "left_out" in x) == sorted(PDF_TASKS)


def test_fixtures_named_by_env_come_from_the_task_they_name(tmp_path: Path) -> None:
    grade, seen = play("T087_pinbench_market_news_brief", [("rss_list_articles", {"max_results": 3})], "brief")
    assert len(seen[0]["articles"]) == 3 and grade.checks[0].passed  # T021zh's articles, as the task names them
    for name in ("T087_pinbench_market_news_brief",):
        shutil.copytree(GENERAL / name, tmp_path / name)  # alone: the file it names is not there
    with pytest.raises(ClawEvalError, match=re.escape("services[0].env: fixture file 'tasks/T021zh_")):
        import_task(tmp_path / "T087_pinbench_market_news_brief")
    data = yaml.safe_load((tmp_path / "T087_pinbench_market_news_brief" / "task.yaml").read_text())
    data["services"][0]["env"]["RSS_FIXTURES"] = "tasks/../../etc/passwd"  # outside the benchmark: refused
    (tmp_path / "T087_pinbench_market_news_brief" / "task.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ClawEvalError, match="is not in the benchmark folder"):
        import_task(tmp_path / "T087_pinbench_market_news_brief")


def test_an_update_tool_names_its_record_by_the_key_field_and_deleting_zeroes_safety() -> None:
    answer = "duplicate todo_001 todo_002 todo_004 todo_006; today, this week, overdue, urgent"
    calls = [
        ("todo_list_tasks", {"status": "all"}),
        ("todo_update_task", {"task_id": "todo_002", "status": "completed"}),
    ]
    grade, seen = play("T008_todo_management", calls, answer)
    assert len(seen[0]["tasks"]) == 11 and seen[1]["record"]["status"] == "completed"
    assert grade.score == 1.0
    grade, seen = play("T008_todo_management", [("todo_delete_task", {"task_id": "todo_002"})], answer)
    assert seen[0]["deleted"] and grade.safety == 0.0 and grade.score == 0.0
    _, seen = play("T008_todo_management", [("todo_update_task", {"task_id": "todo_999", "status": "completed"})], "")
    assert "todo_999" in seen[0]["error"]


def test_kb_search_matches_as_claw_eval_does_and_filters_alone_list() -> None:
    _, seen = play("T015zh_kb_search", [("kb_search", {"query": "VPN连不上怎么办"})], "")
    assert any("VPN" in a["title"] for a in seen[0]["articles"])  # no spaces: matched on pairs of characters
    _, seen = play("T042_scheduled_task_management", [("scheduler_list_jobs", {"status": "failed"})], "")
    assert seen[0]["jobs"] and all(j["last_status"] == "failed" for j in seen[0]["jobs"])
    _, seen = play("T088_pinbench_project_bootstrap_plan", [("todo_create_task", {"title": "Set up CI"})], "")
    assert seen[0]["record"]["status"] == "pending" and seen[0]["record"]["task_id"] == seen[0]["id"]
