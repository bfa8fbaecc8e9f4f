"""Running one episode of a policy in an environment."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from coworkenv.runtime.observation import EpisodeEnv, Observation
from coworkenv.runtime.policy import Policy, TaskPolicy, actor_for
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.trajectory import Trajectory


def play_out(
    env: EpisodeEnv, actor: Policy, on_step: Callable[[AssistantTurn, Observation], None] | None = None
) -> str | None:
    """Reset and let ``actor`` act until the episode ends; the policy's error, if it raised.

    A policy that raises does not lose the episode: it ends with ``policy_error``.
    """
    obs = env.reset()
    while not obs.done:
        try:
            turn = actor.act(list(env.messages), obs.tools)
        except Exception as exc:  # a crashing backend ends this episode, not the run
            env.end("policy_error")
            return f"{type(exc).__name__}: {exc}"
        obs = env.step(turn)
        if on_step is not None:
            on_step(turn, obs)
    return None


def run_episode(
    env: EpisodeEnv,
    policy: Policy | TaskPolicy,
    *,
    sample: int = 0,
    on_step: Callable[[AssistantTurn, Observation], None] | None = None,
) -> Trajectory:
    """Reset, let the policy act until the episode ends, grade, and return the trajectory.

    ``policy`` is a Policy, or a TaskPolicy whose ``for_task`` makes one for this spec. A
    policy that raises does not lose the episode: the error is recorded on the trajectory.
    """
    start = time.perf_counter()
    error = play_out(env, actor_for(policy, env.spec), on_step)
    traj = env.trajectory(policy=getattr(policy, "name", type(policy).__name__), sample=sample)
    traj.seconds = round(time.perf_counter() - start, 6)
    traj.error = error
    return traj


OnTurns = Callable[[list[int], list[AssistantTurn]], None]


def run_lockstep(
    envs: Sequence[EpisodeEnv],
    act_batch: Callable[[list[tuple[list[dict[str, object]], list[dict[str, object]]]]], list[AssistantTurn]],
    *,
    policy_name: str = "",
    samples: Sequence[int] | None = None,
    on_turns: OnTurns | None = None,
) -> list[Trajectory]:
    """Play every environment to its end, one batched turn for all live episodes at a time.

    ``on_turns(indices, turns)`` sees which environments acted in each batch, which is how
    RL training pairs generated tokens with episodes. A failing backend ends the live
    episodes with ``policy_error`` instead of losing the run.
    """
    obs = [env.reset() for env in envs]
    errors: dict[int, str] = {}
    while live := [i for i, o in enumerate(obs) if not o.done]:
        try:
            turns = act_batch([(list(envs[i].messages), obs[i].tools) for i in live])
        except Exception as exc:  # a crashing backend ends these episodes, not the run
            for i in live:
                errors[i] = f"{type(exc).__name__}: {exc}"
                envs[i].end("policy_error")
                obs[i].done = True
            break
        if on_turns is not None:
            on_turns(live, turns)
        for i, turn in zip(live, turns, strict=True):
            obs[i] = envs[i].step(turn)
    trajs = []
    for i, env in enumerate(envs):
        traj = env.trajectory(policy=policy_name, sample=samples[i] if samples else 0)
        traj.error = errors.get(i)
        trajs.append(traj)
    return trajs
