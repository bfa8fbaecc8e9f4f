"""Parallel rollouts (process pool or Ray) into a resumable JSONL store."""

from coworkenv.rollout.runner import RolloutSummary, rollout_bank
from coworkenv.rollout.store import RolloutStore, episode_key, iter_episodes
from coworkenv.rollout.worker import RunOptions

__all__ = ["RolloutStore", "RolloutSummary", "RunOptions", "episode_key", "iter_episodes", "rollout_bank"]
