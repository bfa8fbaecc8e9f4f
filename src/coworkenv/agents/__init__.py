"""Policies: the oracle teacher and model backends (loaded lazily); protocols in runtime.policy."""

from coworkenv.agents.oracle import OracleRun, OracleTeacher

__all__ = ["OracleRun", "OracleTeacher"]
