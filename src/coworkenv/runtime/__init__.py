"""The episode runtime: environment, workspace, router, user simulator, policies, events."""

from coworkenv.runtime.environment import Environment, Observation
from coworkenv.runtime.episode import run_episode
from coworkenv.runtime.turn import AssistantTurn, ToolCall, parse_turn
from coworkenv.runtime.workspace import Workspace
from coworkenv.trajectory import CheckResult, Grade, Trajectory

__all__ = [
    "AssistantTurn",
    "CheckResult",
    "Environment",
    "Grade",
    "Observation",
    "ToolCall",
    "Trajectory",
    "Workspace",
    "parse_turn",
    "run_episode",
]
