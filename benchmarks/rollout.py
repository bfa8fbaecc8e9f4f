"""Rollout throughput: oracle episodes per second per core in one process, and how it scales to
a process pool and to Ray (scaling = their rate over one process's; efficiency = scaling per
worker), plus the runtime's overhead per model call.

The oracle costs microseconds per turn, so these figures are the ceiling the rollout machinery
itself allows; with a real model the model call dominates and the overhead per call below is
what the environment adds to it. Each round measures every mode once (interleaved, so load
from other jobs falls on all of them); the figures are medians over the rounds.

Targets: >= 1,000 oracle episodes/s/core in one process; 2 processes >= 1.8x one.

    python benchmarks/rollout.py [--bank examples] [--samples 60] [--workers 2] [--rounds 3] [--no-ray] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from coworkenv.agents import OracleTeacher
from coworkenv.bank.sources import load_specs
from coworkenv.rollout import rollout_bank
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


def measure(specs: list[TaskSpec], samples: int, workers: int, ray: bool) -> dict[str, float]:
    """One round: episodes/s inline, with a process pool and (when asked) with Ray actors."""
    out = {"inline": throughput(specs, samples), "pool": throughput(specs, samples, workers=workers)}
    if ray:
        out["ray"] = throughput(specs, samples, workers=workers, ray_address="local")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bank", default="examples", help="bank folder or folder of specs")
    parser.add_argument("--samples", type=int, default=60, help="episodes per spec")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray measurement")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args()
    specs = load_specs(args.bank)
    w = args.workers
    runtime_us, oracle_us = overhead_per_call(specs, repeats=20)
    if not args.no_ray:
        import ray

        ray.init(num_cpus=w, include_dashboard=False, log_to_driver=False)
    rounds = [measure(specs, args.samples, w, not args.no_ray) for _ in range(args.rounds)]
    if not args.no_ray:
        ray.shutdown()
    rate = {mode: statistics.median(r[mode] for r in rounds) for mode in rounds[0]}
    report: dict[str, float] = {
        "episodes": len(specs) * args.samples,
        "workers": w,
        "runtime_us_per_call": round(runtime_us, 1),
        "oracle_us_per_call": round(oracle_us, 1),
        "inline_eps_per_core": round(rate["inline"], 1),
    }
    for mode in ("pool", "ray"):
        if mode in rate:
            report[f"{mode}_eps"] = round(rate[mode], 1)
            report[f"{mode}_scaling"] = round(rate[mode] / rate["inline"], 3)
            report[f"{mode}_efficiency"] = round(rate[mode] / rate["inline"] / w, 3)
    if args.json:
        print(json.dumps(report))
        return
    print(
        f"{len(specs)} specs x {args.samples} samples = {report['episodes']} oracle episodes per measurement, "
        f"medians of {args.rounds} interleaved rounds"
    )
    print(f"runtime overhead per model call: {runtime_us:.0f} µs median (the oracle itself: {oracle_us:.0f} µs)")
    print(f"one process:          {rate['inline']:8.1f} episodes/s per core")
    for mode, label in (("pool", f"process pool, {w} workers"), ("ray", f"Ray, {w} actors")):
        if mode in rate:
            print(
                f"{label + ':':<22}{rate[mode]:8.1f} episodes/s ({rate[mode] / w:.1f} per core): "
                f"x{report[f'{mode}_scaling']:.2f} one process, efficiency {report[f'{mode}_efficiency']:.0%}"
            )


if __name__ == "__main__":
    main()
