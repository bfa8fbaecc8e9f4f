"""Parallel rollouts (process pool or Ray) into a resumable JSONL store.

The names below load on first use: a worker process or Ray actor imports
``coworkenv.rollout.worker`` through this package, and the runner's imports (the bank
loaders and all they pull in) would otherwise double every worker's start-up.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coworkenv.rollout.runner import RolloutSummary, rollout_bank
    from coworkenv.rollout.store import RolloutStore, episode_key, iter_episodes
    from coworkenv.rollout.worker import RunOptions

_HOMES = {
    "RolloutSummary": "runner",
    "rollout_bank": "runner",
    "RolloutStore": "store",
    "episode_key": "store",
    "iter_episodes": "store",
    "RunOptions": "worker",
}

__all__ = ["RolloutStore", "RolloutSummary", "RunOptions", "episode_key", "iter_episodes", "rollout_bank"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
