"""Claw-Eval task folders (``task.yaml`` + ``fixtures/``) into coworkenv TaskSpecs.

Services and fixtures map onto coworkenv's services (:mod:`claw_mapping`); rule-based
``scoring_components`` become checks (``tool_called`` → ``tool_called``; ``keywords_present``
and ``categories_present`` → one ``answer_contains`` per keyword sharing the component's
weight, the proportional credit Claw-Eval gives); ``safety_checks`` become workflow rules
(a violation zeroes the safety factor, as in Claw-Eval). What cannot be scored here — LLM
judges, length rubrics, tools without a coworkenv counterpart — is kept in the import report
and listed as not scored. Claw-Eval's reference solution is prose, so an imported spec carries
it as its reference answer and is **evaluation-only**: it passes the static admission checks
(``coworkenv validate``), while the dynamic ones (the reference scores 1.0, probes fail) do not
apply.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from coworkenv.interop.claw_declared import declare
from coworkenv.interop.claw_grader import GraderText, component_rubric, read_grader
from coworkenv.interop.claw_mapping import RECORDS, TOOLS
from coworkenv.interop.claw_offline import no_tool_reason, offline_reason
from coworkenv.interop.claw_task import shape_problem
from coworkenv.spec import spec_from_data
from coworkenv.spec.models import TaskSpec

SOURCE = "claw-eval"
KEYWORD_KINDS = ("keywords_present", "categories_present")
FORBID_KINDS = ("tool_not_called", "wrong_action")
PLACEHOLDER = "read_the_data"
"""The check a task with no rule-based check gets (a judge's score replaces it)."""


@dataclass
class ImportReport:
    """What one task became: the components its rules score (``scored``: checks of the spec; ``answer_lengths``:
    scored on the final answer when the task is rescored), those that need a judge (``judged``), the check
    standing in when there is no rule (``placeholder``), safety checks on the answer (``answer_safety``: no
    credential of ``secrets`` shown), and what nothing here scores (``not_scored``)."""

    task_id: str
    spec_id: str
    scored: list[str] = field(default_factory=list)
    judged: list[dict[str, Any]] = field(default_factory=list)
    answer_lengths: list[dict[str, Any]] = field(default_factory=list)
    placeholder: str | None = None
    not_scored: list[dict[str, str]] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    safe_by_construction: list[str] = field(default_factory=list)
    answer_safety: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    unmapped_tools: list[str] = field(default_factory=list)
    declared: dict[str, str] = field(default_factory=dict)
    ignored_arguments: list[str] = field(default_factory=list)
    tool_map: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    judge_rubric: str = ""
    evaluation_only: bool = True
    multi_turn: bool = False
    user_turns: int | None = None
    system_prompt_suffix: str = ""
    grader_notes: list[str] = field(default_factory=list)
    needs_web: list[str] = field(default_factory=list)


class ClawEvalError(ValueError):
    """A task folder that cannot be imported: names the file and the field."""


class NotOffline(ClawEvalError):
    """A task that needs what is not here (live web, OCR, images, files outside the task data); ``reason``: the
    short label the batch counts it under."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "x"


def _fixture_rows(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ClawEvalError(f"{path}: not readable JSON: {exc}") from None
    if isinstance(data, dict):  # some fixtures wrap the list: {"messages": [...]}
        data = next((v for v in data.values() if isinstance(v, list)), [])
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ClawEvalError(f"{path}: expected a list of records")
    return data


def _fixture_paths(folder: Path, svc: dict[str, Any], where: str, task_id: str) -> list[Path]:
    """The fixture files of one service: the ``*_FIXTURES`` files its ``env`` names (a path under the benchmark's
    ``tasks/`` folder may be another task's; one under the task's own id is in this folder, whatever its name),
    else every JSON file in ``fixtures/<name>/``."""
    named = [str(v) for k, v in sorted((svc.get("env") or {}).items()) if str(k).endswith("_FIXTURES")]
    if not named:
        return sorted((folder / "fixtures" / str(svc["name"])).glob("*.json"))
    root = Path(os.path.normpath(folder.parent.absolute()))  # by name, as the fixture path below
    paths = []
    for value in named:
        rel = Path(value)
        if rel.parts[:2] == ("tasks", task_id):
            rel = folder.name / Path(*rel.parts[2:])
        elif rel.parts[:1] == ("tasks",):
            rel = Path(*rel.parts[1:])
        else:
            rel = folder.name / rel
        path = Path(os.path.normpath(root / rel))  # by name: the benchmark's folders may be links
        if not path.is_relative_to(root) or not path.is_file():
            raise ClawEvalError(f"{where}.env: fixture file {value!r} is not in the benchmark folder {root}")
        paths.append(path)
    return paths


def _service_rows(folder: Path, task: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each Claw-Eval service of the task with its fixture records (services only its tools name included)."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for i, svc in enumerate(task.get("services") or []):
        name = svc.get("name") if isinstance(svc, dict) else None
        where = f"{folder / 'task.yaml'}: services[{i}]"
        if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise ClawEvalError(f"{where}.name: expected a lower-case name, got {name!r}")
        found = rows.setdefault(name, [])
        for path in _fixture_paths(folder, svc, where, str(task["task_id"])):
            found.extend(_fixture_rows(path))
    for tool in task.get("tools") or []:
        owner = _owner(str(tool.get("name")), rows)
        if owner is None and "_" in str(tool.get("name")):
            rows.setdefault(str(tool["name"]).split("_", 1)[0], [])
    return rows


def _owner(tool: str, services: dict[str, Any]) -> str | None:
    """The service a Claw-Eval tool belongs to: the longest service name that prefixes it."""
    owners = [s for s in services if tool.startswith(f"{s}_")]
    return max(owners, key=len) if owners else None


def _fixed(name: str, rows: list[dict[str, Any]], tools: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The records on the built-in service, and what that mapping would lose (fields, values, tools)."""
    mapping = RECORDS.get(name)
    if mapping is None:
        return [], ["service: no built-in counterpart"]
    lost = [f"tool {t}" for t in tools if t not in TOOLS]
    targets = [TOOLS[t] for t in tools if t in TOOLS]
    lost += [f"tool {t} (merged with another)" for t in tools if t in TOOLS and targets.count(TOOLS[t]) > 1]
    records = []
    for row in rows:
        if mapping.id_field not in row:
            return [], [f"field {mapping.id_field}: missing from a record"]
        record, dropped = mapping.record(row)
        records.append(record)
        lost += [f"field {d}" for d in dropped if f"field {d}" not in lost]
    return records, lost


def _services(folder: Path, task: dict[str, Any], report: ImportReport) -> tuple[dict[str, Any], dict[str, Any]]:
    """The spec's fixtures and declared services; fills ``report.tool_map`` (Claw-Eval tool -> coworkenv
    tool and condition). A service goes onto its built-in counterpart when that keeps everything, else it is
    declared from the task's own records and tools."""
    rows = _service_rows(folder, task)
    report.secrets = _secrets(rows)
    tools = [t for t in task.get("tools") or [] if isinstance(t, dict)]
    services: dict[str, Any] = {}
    declared: dict[str, Any] = {}
    for name, records in rows.items():
        own = [t for t in tools if _owner(str(t.get("name")), rows) == name]
        fixed, lost = _fixed(name, records, [str(t.get("name")) for t in own])
        if not lost:
            mapping = RECORDS[name]
            services.setdefault(mapping.service, {}).setdefault(mapping.collection, []).extend(fixed)
            report.tool_map.update({str(t["name"]): TOOLS[str(t["name"])] for t in own})
            continue
        try:
            made = declare(name, records, own)
        except ValueError as exc:
            raise ClawEvalError(f"{folder}/fixtures/{exc}") from None
        services[made.name] = made.records
        declared[made.name] = made.decl.model_dump(mode="json", exclude_none=True)
        report.declared[name] = f"{made.name} (on a built-in service it would lose: {', '.join(lost)})"
        report.unmapped_tools += made.unmapped
        report.ignored_arguments += made.ignored_args
        report.tool_map.update({t: (t, None) for t in made.decl.tools})
    report.unmapped_tools += [str(t.get("name")) for t in tools if _owner(str(t.get("name")), rows) is None]
    return services, declared


def _exposed(task: dict[str, Any], report: ImportReport) -> list[str]:
    exposed = []
    for tool in task.get("tools") or []:
        target = report.tool_map.get(str(tool.get("name")))
        if target is not None and target[0] not in exposed:
            exposed.append(target[0])
    return exposed


def _checks(task: dict[str, Any], report: ImportReport, grader: GraderText) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []
    for comp in task.get("scoring_components") or []:
        name, weight, check = _slug(str(comp.get("name"))), float(comp.get("weight") or 1.0), comp.get("check") or {}
        kind = check.get("type")
        if kind == "tool_called" and check.get("tool_name") in report.tool_map:
            tool, where = report.tool_map[check["tool_name"]]
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
        elif kind == "llm_judge":
            description = " ".join(str(check.get("description") or comp.get("description") or "").split())
            judged: dict[str, object] = {"name": name, "weight": weight, "description": description}
            if rubric := component_rubric(name, grader):
                judged["rubric"] = rubric
            report.judged.append(judged)
            continue
        elif kind == "min_length" and isinstance(check.get("min_length"), int):
            report.answer_lengths.append({"name": name, "weight": weight, "min_length": check["min_length"]})
            continue
        else:
            reason = f"no coworkenv check for {kind!r}"
            if kind == "tool_called":
                reason = f"tool {check.get('tool_name')!r} has no coworkenv counterpart"
            report.not_scored.append({"name": name, "type": str(kind), "reason": reason})
            continue
        report.scored.append(name)
    return checks


def _rules(task: dict[str, Any], report: ImportReport) -> list[dict[str, Any]]:
    policies = []
    offered = {str(t.get("name")) for t in task.get("tools") or [] if isinstance(t, dict)}
    for i, rule in enumerate(task.get("safety_checks") or []):
        kind, tool = rule.get("type"), rule.get("tool_name")
        if kind in FORBID_KINDS and tool not in offered:
            report.safe_by_construction.append(f"safety_{i}: {tool} is not offered")
            continue
        if kind == "credential_exposure" and report.secrets:
            report.answer_safety.append(f"safety_{i}_credential_exposure")
            continue
        condition = _with_condition(rule) if kind == "tool_not_called_with" else None
        known = (*FORBID_KINDS, "send_without_confirmation")
        if tool not in report.tool_map or (kind not in known and condition is None):
            report.not_scored.append({"name": f"safety_{i}", "type": str(kind), "reason": "no coworkenv rule for it"})
            continue
        target, when = report.tool_map[tool]
        when = " and ".join(f"({c})" for c in (when, condition) if c) or None
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
        report.rules.append(pid)
    return policies


def _with_condition(rule: dict[str, Any]) -> str | None:
    """``tool_not_called_with``'s condition on the call's arguments (``field`` equals ``value``), None when the
    field is not a plain name or the value not a scalar."""
    name, value = rule.get("field"), rule.get("value")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return None
    if not isinstance(value, str | int | float | bool):
        return None
    return f"args.{name} == {json.dumps(value, ensure_ascii=False)}"


WEB_TOOL = re.compile(r"(^|_)(web|browser|browse|fetch|http|url|google|bing)(_|$)", re.I)
"""A tool name that asks for the live web."""


SECRET_FIELD = re.compile(r"api_?key|secret|token|password|passwd|connection_string|credential", re.I)


def _secrets(rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Text values (8 characters or more) of fixture fields that hold credentials: an answer must not show them."""
    found = {
        str(v)
        for records in rows.values()
        for row in records
        for k, v in row.items()
        if SECRET_FIELD.search(k) and isinstance(v, str) and len(v) >= 8
    }
    return sorted(found)


def _user_agent(task: Mapping[str, object]) -> Mapping[str, object] | None:
    """Claw-Eval's ``user_agent`` block of a multi-turn task (None for a single-turn one)."""
    agent = task.get("user_agent")
    return agent if isinstance(agent, dict) and agent.get("enabled", True) else None


def _multi_turn(task: Mapping[str, object], report: ImportReport) -> None:
    """Marks a task whose user is a persona as multi-turn in the report."""
    agent = _user_agent(task)
    if agent is not None:
        report.multi_turn = True
        report.user_turns = int(str(agent.get("max_rounds") or 8))
        report.system_prompt_suffix = " ".join(str(agent.get("system_prompt_suffix") or "").split())


def _user(task: Mapping[str, object], opening: str, report: ImportReport) -> dict[str, object]:
    """The spec's user: the opening request, and for a multi-turn task the ``user_agent`` persona (identity,
    details to reveal gradually, reply style) that an LLM plays for at most ``max_rounds`` replies."""
    agent = _user_agent(task)
    if agent is None:
        return {"persona": "the user", "opening": opening}
    return {"persona": str(agent["persona"]).strip(), "persona_turns": report.user_turns, "opening": opening}


def import_task(folder: str | Path) -> tuple[TaskSpec, ImportReport]:
    """One Claw-Eval task folder as a spec, with the report of what is and is not scored."""
    folder = Path(folder)
    source = folder / "task.yaml"
    try:
        task = yaml.safe_load(source.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ClawEvalError(f"{source}: {exc}") from None
    problem = shape_problem(task)
    if problem:
        raise ClawEvalError(f"{source}: {problem}")
    if (offline := offline_reason(task)) is not None:
        raise NotOffline(f"{source}: {offline.message}", offline.reason)
    report = ImportReport(task_id=str(task["task_id"]), spec_id=f"claw_eval_{_slug(str(task['task_id']))}")
    report.judge_rubric = " ".join(str(task.get("judge_rubric") or "").split())
    services, declared = _services(folder, task, report)
    offered = [str(t.get("name")) for t in task.get("tools") or [] if isinstance(t, dict)]
    report.needs_web = [t for t in offered if WEB_TOOL.search(t)]
    tools = _exposed(task, report)
    if not tools:
        why = no_tool_reason(folder, task, report.unmapped_tools)
        raise NotOffline(f"{source}: tools: {why}", "no tool runs offline")
    grader = read_grader(folder / "grader.py") if (folder / "grader.py").is_file() else GraderText()
    report.grader_notes = grader.notes
    _multi_turn(task, report)
    checks = _checks(task, report, grader)
    if not checks:  # no rule-based check: keep the one thing a rule can see, that the data was read
        checks = [{"id": PLACEHOLDER, "kind": "tool_called", "tool": tools[0], "weight": 1.0}]
        report.placeholder = PLACEHOLDER
        if not report.judged and not report.answer_lengths and report.judge_rubric:
            report.judged.append({"name": "judge_rubric", "weight": 1.0, "description": ""})
    limits = task.get("environment") or {}
    data = {
        "id": report.spec_id,
        "title": str(task.get("task_name") or task["task_id"]),
        "description": f"Imported from Claw-Eval {task['task_id']} ({task.get('category', '')}); evaluation-only. "
        f"Needs a judge: {', '.join(n['name'] for n in report.judged) or 'nothing'}. "
        f"Not scored here: {', '.join(n['name'] for n in report.not_scored) or 'nothing'}."
        + (f" Accepted but not simulated: {', '.join(report.ignored_arguments)}." if report.ignored_arguments else "")
        + (f" Tools left out: {', '.join(report.unmapped_tools)}." if report.unmapped_tools else ""),
        "services": services,
        "declared_services": declared or None,
        "tools": tools,
        "context": report.system_prompt_suffix,  # Claw-Eval appends it to a multi-turn task's system prompt
        "user": _user(task, " ".join(str(task["prompt"]["text"]).split()), report),
        "rules": _rules(task, report),
        "checks": checks,
        "reference": [{"answer": " ".join(str(task.get("reference_solution") or "(none)").split())}],
        "difficulty": task.get("difficulty") if task.get("difficulty") in ("easy", "medium", "hard") else "medium",
        "max_turns": int(limits.get("max_turns") or 30),
        "provenance": {
            "source": SOURCE,
            "generator_version": str(task.get("version") or ""),
            "evaluation_only": True,
        },
    }
    return spec_from_data(data, source), report


def task_folders(root: str | Path) -> list[Path]:
    """A task folder itself, or the task folders under a benchmark folder."""
    root = Path(root)
    if (root / "task.yaml").exists():
        return [root]
    return sorted(p.parent for p in root.glob("*/task.yaml"))
