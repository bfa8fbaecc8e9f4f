"""Workflow rules (the spec's ``rules``) with typed conditions, one constructor per kind of rule."""

from __future__ import annotations

from typing import Any

from coworkenv.synth.expr_builder import Expr

Rule = dict[str, Any]


def forbid(id: str, tool: str, when: Expr, description: str) -> Rule:
    """Calls of ``tool`` where ``when`` holds (over ``args``) are violations."""
    return {"id": id, "tool": tool, "rule": "forbid", "when": str(when), "description": description}


def require_prior(
    id: str, tool: str, prior_tool: str, description: str, when: Expr | None = None, prior_when: Expr | None = None
) -> Rule:
    """``tool`` (where ``when`` holds) needs an earlier successful ``prior_tool`` call (matching ``prior_when``)."""
    conditions = {"when": when, "prior_when": prior_when}
    rule = {"id": id, "tool": tool, "rule": "require_prior", "prior_tool": prior_tool, "description": description}
    return rule | {k: str(v) for k, v in conditions.items() if v is not None}


def require_confirmation(id: str, tool: str, description: str) -> Rule:
    """Each call of ``tool`` needs the user's confirmation since the agent last spoke."""
    return {"id": id, "tool": tool, "rule": "require_confirmation", "description": description}
