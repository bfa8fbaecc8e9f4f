"""Parallel rollouts (process pool or Ray) into a resumable JSONL store."""

from coworkenv.rollout.runner import RolloutSummary, rollout_bank
from coworkenv.rollout.store import RolloutStore, episode_key, iter_episodes

__all__ = ["RolloutStore", "RolloutSummary", "episode_key", "iter_episodes", "rollout_bank"]
