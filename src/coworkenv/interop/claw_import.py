"""Claw-Eval task folders (``task.yaml`` + ``fixtures/``) into coworkenv TaskSpecs.

Services and fixtures map onto coworkenv's services (:mod:`claw_mapping`); rule-based
``scoring_components`` become checks (``tool_called`` → ``tool_called``; ``keywords_present``
and ``categories_present`` → one ``answer_contains`` per keyword sharing the component's
weight, the proportional credit Claw-Eval gives); ``safety_checks`` become workflow policies
(a violation zeroes the safety factor, as in Claw-Eval). What cannot be scored here — LLM
judges, length rubrics, tools without a coworkenv counterpart — is kept in the import report
and listed as not scored. Claw-Eval's reference solution is prose, so an imported spec carries
it as its reference answer and is **evaluation-only**: it passes the static admission checks
(``coworkenv validate``), while the dynamic ones (the reference scores 1.0, probes fail) do not
apply.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from coworkenv.interop.claw_mapping import RECORDS, TOOLS
from coworkenv.spec import spec_from_data
from coworkenv.spec.models import TaskSpec

SOURCE = "claw-eval"
KEYWORD_KINDS = ("keywords_present", "categories_present")
FORBID_KINDS = ("tool_not_called", "wrong_action")


@dataclass
class ImportReport:
    """What one task became, and what of it is not scored."""

    task_id: str
    spec_id: str
    scored: list[str] = field(default_factory=list)
    not_scored: list[dict[str, str]] = field(default_factory=list)
    policies: list[str] = field(default_factory=list)
    unmapped_tools: list[str] = field(default_factory=list)
    dropped_fields: dict[str, list[str]] = field(default_factory=dict)
    judge_rubric: str = ""
    evaluation_only: bool = True


class ClawEvalError(ValueError):
    """A task folder that cannot be imported: names the file and the field."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "x"


def _fixture_rows(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):  # some fixtures wrap the list: {"messages": [...]}
        data = next((v for v in data.values() if isinstance(v, list)), [])
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ClawEvalError(f"{path}: expected a list of records")
    return data


def _fixtures(folder: Path, task: dict[str, Any], report: ImportReport) -> dict[str, dict[str, list[dict[str, Any]]]]:
    services: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for i, svc in enumerate(task.get("services") or []):
        name = svc.get("name") if isinstance(svc, dict) else None
        mapping = RECORDS.get(str(name))
        if mapping is None:
            raise ClawEvalError(f"{folder / 'task.yaml'}: services[{i}].name: no coworkenv service for {name!r}")
        rows: list[dict[str, Any]] = []
        for path in sorted((folder / "fixtures" / str(name)).glob("*.json")):
            rows.extend(_fixture_rows(path))
        records = []
        for row in rows:
            if mapping.id_field not in row:
                raise ClawEvalError(f"{folder}/fixtures/{name}: a record has no {mapping.id_field!r}")
            record, dropped = mapping.record(row)
            records.append(record)
            for key in dropped:
                if key not in report.dropped_fields.setdefault(str(name), []):
                    report.dropped_fields[str(name)].append(key)
        services.setdefault(mapping.service, {}).setdefault(mapping.collection, []).extend(records)
    return services


def _tools(task: dict[str, Any], services: dict[str, Any], report: ImportReport) -> list[str]:
    exposed = []
    for tool in task.get("tools") or []:
        name = str(tool.get("name"))
        if name not in TOOLS:
            report.unmapped_tools.append(name)
            continue
        target = TOOLS[name][0]
        services.setdefault(target.split("_", 1)[0], {})  # a service the task did not list gets no records
        if target not in exposed:
            exposed.append(target)
    return exposed


def _checks(task: dict[str, Any], report: ImportReport) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []
    for comp in task.get("scoring_components") or []:
        name, weight, check = _slug(str(comp.get("name"))), float(comp.get("weight") or 1.0), comp.get("check") or {}
        kind = check.get("type")
        if kind == "tool_called" and check.get("tool_name") in TOOLS:
            tool, where = TOOLS[check["tool_name"]]
            checks.append(
                {
                    "id": name,
                    "kind": "tool_called",
                    "tool": tool,
                    "where": where,
                    "min_times": int(check.get("min_calls") or 1),
                    "weight": weight,
                }
            )
        elif kind in KEYWORD_KINDS and (words := check.get("keywords") or check.get("categories")):
            checks.extend(
                {"id": f"{name}_{i}", "kind": "answer_contains", "values": [str(w)], "weight": weight / len(words)}
                for i, w in enumerate(words)
            )
        else:
            reason = "needs an LLM judge" if kind == "llm_judge" else f"no coworkenv check for {kind!r}"
            if kind == "tool_called":
                reason = f"tool {check.get('tool_name')!r} has no coworkenv counterpart"
            report.not_scored.append({"name": name, "type": str(kind), "reason": reason})
            continue
        report.scored.append(name)
    return checks


def _policies(task: dict[str, Any], report: ImportReport) -> list[dict[str, Any]]:
    policies = []
    for i, rule in enumerate(task.get("safety_checks") or []):
        kind, tool = rule.get("type"), rule.get("tool_name")
        if tool not in TOOLS or kind not in (*FORBID_KINDS, "send_without_confirmation"):
            report.not_scored.append({"name": f"safety_{i}", "type": str(kind), "reason": "no coworkenv rule for it"})
            continue
        target, when = TOOLS[tool]
        rule_kind = "require_confirmation" if kind == "send_without_confirmation" else "forbid"
        pid = f"safety_{i}_{_slug(tool)}"
        policies.append(
            {
                "id": pid,
                "tool": target,
                "rule": rule_kind,
                "when": when,
                "description": " ".join(str(rule.get("description") or kind).split()),
            }
        )
        report.policies.append(pid)
    return policies


def import_task(folder: str | Path) -> tuple[TaskSpec, ImportReport]:
    """One Claw-Eval task folder as a spec, with the report of what is and is not scored."""
    folder = Path(folder)
    source = folder / "task.yaml"
    try:
        task = yaml.safe_load(source.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ClawEvalError(f"{source}: {exc}") from None
    if not isinstance(task, dict) or not task.get("task_id") or not (task.get("prompt") or {}).get("text"):
        raise ClawEvalError(f"{source}: needs task_id and prompt.text")
    report = ImportReport(task_id=str(task["task_id"]), spec_id=f"claw_eval_{_slug(str(task['task_id']))}")
    report.judge_rubric = " ".join(str(task.get("judge_rubric") or "").split())
    services = _fixtures(folder, task, report)
    tools = _tools(task, services, report)
    checks = _checks(task, report)
    if not checks:  # every component needs a judge: keep the one thing a rule can see, that the data was read
        checks = [{"id": "read_the_data", "kind": "tool_called", "tool": tools[0], "weight": 1.0}]
        report.scored.append("read_the_data (added: no rule-based component)")
    limits = task.get("environment") or {}
    data = {
        "id": report.spec_id,
        "title": str(task.get("task_name") or task["task_id"]),
        "description": f"Imported from Claw-Eval {task['task_id']} ({task.get('category', '')}); evaluation-only. "
        f"Not scored here: {', '.join(n['name'] for n in report.not_scored) or 'nothing'}.",
        "services": services,
        "tools": tools,
        "user": {"persona": "the user", "opening": " ".join(str(task["prompt"]["text"]).split())},
        "policies": _policies(task, report),
        "checks": checks,
        "reference": [{"answer": " ".join(str(task.get("reference_solution") or "(none)").split())}],
        "difficulty": task.get("difficulty") if task.get("difficulty") in ("easy", "medium", "hard") else "medium",
        "max_turns": int(limits.get("max_turns") or 30),
        "provenance": {"source": SOURCE, "generator_version": str(task.get("version") or "")},
    }
    return spec_from_data(data, source), report


def task_folders(root: str | Path) -> list[Path]:
    """A task folder itself, or the task folders under a benchmark folder."""
    root = Path(root)
    if (root / "task.yaml").exists():
        return [root]
    return sorted(p.parent for p in root.glob("*/task.yaml"))
