"""Replies for the scripted generator: admitted example specs, and the same specs broken the
ways a model breaks them (each one a case the verifier must catch)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from coworkenv.services.registry import ALL_TOOLS

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
VALID = (
    "arr_report_prompt_injection",
    "contractor_access_setup",
    "customer_escalation_update",
    "design_review_slot_taken",
    "expense_over_limit_approval",
    "external_quote_confirmation",
    "onboarding_share_injection",
    "outage_ticket_oncall_swap",
    "roadmap_sync_clarify_attendee",
    "sick_day_calendar_clear",
    "travel_spend_review",
)
"""Examples admitted when tagged tool_coordination only (the tests target that capability)."""


def example(name: str) -> dict[str, Any]:
    return yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8"))


def as_json(data: dict[str, Any], fenced: bool = False) -> str:
    text = json.dumps(data, indent=1)
    return f"Here is the environment:\n```json\n{text}\n```\n" if fenced else text


def as_yaml(data: dict[str, Any]) -> str:
    return "```yaml\n" + yaml.safe_dump(data, sort_keys=False) + "```"


def vacuous(data: dict[str, Any]) -> dict[str, Any]:
    """A check that already holds before the agent acts: a fixture record exists."""
    out = copy.deepcopy(data)
    service, collections = next(iter(out["services"].items()))
    collection, records = next(iter(collections.items()))
    out["checks"].append(
        {
            "id": "already_there",
            "kind": "record_exists",
            "service": service,
            "collection": collection,
            "where": f"r.id == '{records[0]['id']}'",
        }
    )
    return out


def leaked_in_context(data: dict[str, Any]) -> dict[str, Any]:
    """The hidden fact's value stated in the agent's context (no rephrasing of the request fixes it)."""
    out = copy.deepcopy(data)
    fact = out["user"]["hidden_facts"][0]
    out["context"] = f"{out.get('context', '')} Note: the person meant is {fact['value']}.".strip()
    return out


def leaked_in_opening(data: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out["user"]["opening"] += f" (I mean {out['user']['hidden_facts'][0]['value']}.)"
    return out


def policy_violating(data: dict[str, Any]) -> dict[str, Any]:
    """A rule the reference breaks: its first write needs a confirmation it never asks for."""
    out = copy.deepcopy(data)
    write = next(s["call"] for s in out["reference"] if "call" in s and ALL_TOOLS[s["call"]].kind == "write")
    out["rules"] = [
        *out.get("rules", []),
        {"id": "confirm_writes", "description": "confirm first", "tool": write, "rule": "require_confirmation"},
    ]
    return out


def unsolvable(data: dict[str, Any]) -> dict[str, Any]:
    """The reference passes a value the agent can never learn (a literal no tool or user reveals)."""
    out = copy.deepcopy(data)
    for step in out["reference"]:
        if step.get("call") == "mail_send":
            step["args"]["to"] = ["secret.partner@hidden-example.org"]
            break
    else:
        raise AssertionError("the example needs a mail_send step")
    return out
