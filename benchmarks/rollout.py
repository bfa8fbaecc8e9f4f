"""Rollout throughput: oracle episodes per second per core (inline, process pool, Ray), and the
runtime's overhead per model call.

The oracle costs microseconds per turn, so these figures are the ceiling the rollout machinery
itself allows; with a real model the model call dominates and the overhead per call below is
what the environment adds to it.

    python benchmarks/rollout.py [--bank examples] [--samples 60] [--workers 2] [--no-ray]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from coworkenv.agents import OracleTeacher
from coworkenv.rollout import rollout_bank
from coworkenv.rollout.sources import load_specs
from coworkenv.runtime import Environment, run_episode
from coworkenv.spec.models import TaskSpec


class TimedActor:
    """Wraps a policy run and accumulates the seconds spent inside ``act``."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.name = "oracle"
        self.seconds = 0.0
        self.calls = 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        start = time.perf_counter()
        turn = self.actor.act(messages, tools)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return turn


def overhead_per_call(specs: list[TaskSpec], repeats: int) -> tuple[float, float]:
    """Median µs per model call spent in the runtime (reset, step, grade) and in the oracle itself."""
    runtime, policy = [], []
    for _ in range(repeats):
        for spec in specs:
            actor = TimedActor(OracleTeacher().for_task(spec))
            start = time.perf_counter()
            run_episode(Environment(spec), actor)
            total = time.perf_counter() - start
            runtime.append((total - actor.seconds) / actor.calls * 1e6)
            policy.append(actor.seconds / actor.calls * 1e6)
    return statistics.median(runtime), statistics.median(policy)


def throughput(specs: list[TaskSpec], samples: int, **kw: Any) -> float:
    """Episodes per second of one rollout into a fresh store (startup of workers included)."""
    with tempfile.TemporaryDirectory() as out:
        summary = rollout_bank(specs, "oracle", samples, Path(out), progress=False, **kw)
        assert summary.counts["passed"] == summary.ran, "the oracle must pass every example"
        return summary.episodes_per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bank", default="examples", help="bank folder or folder of specs")
    parser.add_argument("--samples", type=int, default=60, help="episodes per spec")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray measurement")
    args = parser.parse_args()
    specs = load_specs(args.bank)
    episodes = len(specs) * args.samples
    print(f"{len(specs)} specs x {args.samples} samples = {episodes} oracle episodes per measurement")
    runtime_us, oracle_us = overhead_per_call(specs, repeats=20)
    print(f"runtime overhead per model call: {runtime_us:.0f} µs median (the oracle itself: {oracle_us:.0f} µs)")
    inline = throughput(specs, args.samples)
    print(f"inline, 1 process:            {inline:8.1f} episodes/s  ({inline:.1f} per core)")
    w = args.workers
    pooled = throughput(specs, args.samples, workers=w)
    print(f"process pool, {w} workers:     {pooled:8.1f} episodes/s  ({pooled / w:.1f} per core, "
          f"x{pooled / inline:.2f} vs inline)")
    if not args.no_ray:
        import ray

        ray.init(num_cpus=w, include_dashboard=False, log_to_driver=False)
        ray_eps = throughput(specs, args.samples, workers=w, ray_address="local")
        ray.shutdown()
        print(f"Ray, {w} actors:               {ray_eps:8.1f} episodes/s  ({ray_eps / w:.1f} per core, "
              f"x{ray_eps / pooled:.2f} vs process pool)")


if __name__ == "__main__":
    main()
