"""Simulated workplace services, one module each, and their registry."""

from coworkenv.services.base import RecordModel, Service, ToolError, ToolInfo, tool
from coworkenv.services.registry import ALL_TOOLS, SERVICES, service_class

__all__ = ["ALL_TOOLS", "SERVICES", "RecordModel", "Service", "ToolError", "ToolInfo", "service_class", "tool"]
