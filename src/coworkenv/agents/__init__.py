"""Policies: the protocol, the oracle teacher, and model backends (loaded lazily)."""

from coworkenv.agents.base import Policy, TaskPolicy
from coworkenv.agents.oracle import OracleRun, OracleTeacher

__all__ = ["OracleRun", "OracleTeacher", "Policy", "TaskPolicy"]
