"""The episode runtime: environment, workspace, router, user simulator, policies, events."""

from coworkenv.runtime.environment import Environment
from coworkenv.runtime.episode import run_episode, run_lockstep
from coworkenv.runtime.observation import EpisodeEnv, Observation
from coworkenv.runtime.policy import BatchPolicy, Policy, TaskPolicy
from coworkenv.runtime.turn import AssistantTurn, ToolCall, parse_turn
from coworkenv.runtime.workspace import Workspace
from coworkenv.trajectory import CheckResult, Grade, Trajectory

__all__ = [
    "AssistantTurn",
    "BatchPolicy",
    "CheckResult",
    "Environment",
    "EpisodeEnv",
    "Grade",
    "Observation",
    "Policy",
    "TaskPolicy",
    "ToolCall",
    "Trajectory",
    "Workspace",
    "parse_turn",
    "run_episode",
    "run_lockstep",
]
