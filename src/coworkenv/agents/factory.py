"""Build a policy from a short spec string, as used on the command line."""

from __future__ import annotations

from typing import Any

from coworkenv.agents.oracle import OracleTeacher


def make_policy(spec: str) -> Any:
    """``oracle`` — the teacher that runs the reference solution."""
    if spec == "oracle":
        return OracleTeacher()
    raise ValueError(f"unknown policy {spec!r}; expected 'oracle'")
