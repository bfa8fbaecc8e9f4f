"""Workflow rules: executable constraints the rule monitor checks on every tool call."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from coworkenv.spec.base import SpecModel as _Model


class Rule(_Model):
    """A workflow rule checked on every tool call.

    ``when`` is an expression over ``args`` (the call's arguments) and ``state`` (the
    workspace); the rule applies only where it is true.
    - ``forbid``: the call is not allowed at all;
    - ``require_confirmation``: the user must have confirmed since the agent last spoke;
    - ``require_prior``: an earlier successful call of ``prior_tool`` must exist whose
      arguments satisfy ``prior_when`` (an expression over ``args`` and ``prior``).
    """

    id: str
    description: str
    tool: str
    rule: Literal["forbid", "require_confirmation", "require_prior"]
    when: str | None = None
    prior_tool: str | None = None
    prior_when: str | None = None

    @model_validator(mode="after")
    def _prior_needs_tool(self) -> Rule:
        if self.rule == "require_prior" and not self.prior_tool:
            raise ValueError("rule 'require_prior' needs 'prior_tool'")
        return self
