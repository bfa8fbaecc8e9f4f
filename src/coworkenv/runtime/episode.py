"""Running one episode of a policy in an environment."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from coworkenv.runtime.environment import Environment, Observation
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.trajectory import Trajectory


def run_episode(
    env: Environment,
    policy: Any,
    *,
    sample: int = 0,
    on_step: Callable[[AssistantTurn | Any, Observation], None] | None = None,
) -> Trajectory:
    """Reset, let the policy act until the episode ends, grade, and return the trajectory.

    ``policy`` is a Policy, or a TaskPolicy whose ``for_task`` makes one for this spec. A
    policy that raises does not lose the episode: the error is recorded on the trajectory.
    """
    start = time.perf_counter()
    actor = policy.for_task(env.spec) if hasattr(policy, "for_task") else policy
    obs = env.reset()
    error = None
    while not obs.done:
        try:
            turn = actor.act(list(env.messages), obs.tools)
        except Exception as exc:  # a crashing backend ends this episode, not the run
            error = f"{type(exc).__name__}: {exc}"
            env.end("policy_error")
            break
        obs = env.step(turn)
        if on_step is not None:
            on_step(turn, obs)
    traj = env.trajectory(policy=getattr(policy, "name", type(policy).__name__), sample=sample)
    traj.seconds = round(time.perf_counter() - start, 6)
    traj.error = error
    return traj
