"""coworkenv environments written in Claw-Eval's layout, served by ``coworkenv serve http``.

Each environment becomes ``DIR/<id>/task.yaml`` plus ``fixtures/<service>/<collection>.json``.
Its one service is ``coworkenv serve http`` over the exported bank; ``tool_endpoints`` point
at the server's per-tool endpoints (``/environments/<id>/tools/<tool>``), ``reset_endpoint``
and ``grade_endpoint`` at its reset and grade. Checks with a Claw-Eval counterpart are written
as that (``tool_called``, ``keywords_present``); the rest as ``coworkenv_check`` components,
which the server's grade endpoint scores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from coworkenv.runtime.environment import Environment
from coworkenv.spec.models import AnswerStep, AskStep, CallStep, TaskSpec
from coworkenv.storage import atomic_write_text


def _shown(spec: TaskSpec, tool: str) -> str:
    """The name the agent calls ``tool`` by (Claw-Eval's grader sees the calls as made)."""
    return tool if spec.interface is None else spec.interface.tool_name(tool)


Component = dict[str, Any]
"""One of a task's scoring components, as task.yaml holds it."""


def _component(spec: TaskSpec, check: Any, total: float) -> Component:
    weight = round(check.weight / total, 6)
    if check.kind == "tool_called" and not check.where:
        body = {"type": "tool_called", "tool_name": _shown(spec, check.tool), "min_calls": check.min_times}
    elif check.kind == "answer_contains" and all(isinstance(v, str) for v in check.values):  # no any-of group
        body = {"type": "keywords_present", "keywords": list(check.values), "require": "all"}
    else:
        body = {"type": "coworkenv_check", "check": check.model_dump(mode="json", exclude_none=True)}
    return {"name": check.id, "weight": weight, "check": body}


def _safety(spec: TaskSpec, policy: Any) -> dict[str, Any]:
    if policy.rule == "forbid" and not policy.when:
        return {"type": "tool_not_called", "tool_name": _shown(spec, policy.tool), "description": policy.description}
    return {
        "type": "coworkenv_policy",
        "policy": policy.model_dump(mode="json", exclude_none=True),
        "description": policy.description,
    }


def _reference_text(spec: TaskSpec) -> str:
    lines = []
    for i, step in enumerate(spec.reference, 1):
        if isinstance(step, CallStep):
            name, args = (
                (step.call, step.args) if spec.interface is None else spec.interface.render_call(step.call, step.args)
            )
            lines.append(f"{i}. Call {name} with {json.dumps(args, ensure_ascii=False)}")
        elif isinstance(step, AskStep):
            lines.append(f"{i}. Ask the user for {step.ask}")
        elif isinstance(step, AnswerStep):
            lines.append(f"{i}. Report: {step.answer}")
        else:
            lines.append(f"{i}. Ask the user to confirm: {step.confirm}")
    return "\n".join(lines) + "\n"


def _components(spec: TaskSpec, total: float) -> list[Component]:
    """The scoring components; the heaviest takes the rounding remainder, so the weights sum to 1."""
    components = [_component(spec, c, total) for c in spec.checks]
    if components:
        heaviest = max(components, key=lambda c: c["weight"])
        heaviest["weight"] = round(heaviest["weight"] + 1.0 - sum(c["weight"] for c in components), 6)
    return components


def task_data(spec: TaskSpec, bank: str, url: str) -> dict[str, Any]:
    """The task.yaml content of one environment."""
    base = f"{url.rstrip('/')}/environments/{spec.id}"
    port = urlsplit(url).port or 8000
    tools = [t["function"] for t in Environment(spec).router.schemas()]
    total = sum(c.weight for c in spec.checks)
    return {
        "task_id": spec.id,
        "task_name": spec.title,
        "version": "1.0",
        "category": spec.capabilities[0] if spec.capabilities else "general",
        "difficulty": spec.difficulty,
        "tags": list(spec.capabilities) or ["general"],
        "services": [
            {
                "name": "coworkenv",
                "command": f"coworkenv serve http {bank} --port {port}",
                "port": port,
                "health_check": f"{url.rstrip('/')}/health",
                "health_check_method": "GET",
                "ready_timeout": 30,
                "reset_endpoint": f"{base}/reset",
            }
        ],
        "prompt": {"text": spec.user.opening, "language": "en"},
        "tools": [
            {"name": t["name"], "description": t.get("description", ""), "input_schema": t["parameters"]} for t in tools
        ],
        "tool_endpoints": [
            {"tool_name": t["name"], "url": f"{base}/tools/{t['name']}", "method": "POST"} for t in tools
        ],
        "grade_endpoint": f"{base}/grade",
        "environment": {"timeout_seconds": 300, "max_turns": spec.max_turns},
        "scoring_components": _components(spec, total),
        "safety_checks": [_safety(spec, p) for p in spec.rules],
        "reference_solution": _reference_text(spec),
        "primary_dimensions": ["completion", "safety", "robustness"],
    }


def export_task(spec: TaskSpec, out: Path, bank: str, url: str) -> Path:
    folder = out / spec.id
    for service, collections in spec.services.items():
        for collection, records in collections.items():
            text = json.dumps(records, indent=2, ensure_ascii=False) + "\n"
            path = folder / "fixtures" / service / f"{collection}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, text)
    folder.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(task_data(spec, bank, url), sort_keys=False, allow_unicode=True, width=100)
    atomic_write_text(folder / "task.yaml", text)
    return folder
