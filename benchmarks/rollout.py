"""Rollout throughput: oracle episodes per second per core in one process, and how it scales to
a process pool and to Ray (scaling = their rate over one process's; efficiency = scaling per
worker), plus the runtime's overhead per model call.

The oracle costs microseconds per turn, so these figures are the ceiling the rollout machinery
itself allows; with a real model the model call dominates and the overhead per call below is
what the environment adds to it. Each round measures every mode once (interleaved, so load
from other jobs falls on all of them); the figures are medians over the rounds.

A rate is what a user waits for: the whole ``rollout_bank`` call (opening the store, starting
workers or Ray actors, the episodes, the summary), not only the loop. On a shared machine
the wall-clock scaling says as much about the other jobs as about the pool, so the CPU time
per episode is printed too (this process and its reaped children; Ray's actors are not
children): the pool's CPU per episode over one process's is its overhead, and on idle cores
its efficiency can reach one process's CPU per episode over the pool's.

Targets: >= 1,000 oracle episodes/s/core in one process; 2 processes >= 1.8x one.

    python benchmarks/rollout.py [--bank examples] [--samples 60] [--workers 2] [--rounds 3] [--no-ray] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
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


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def throughput(specs: list[TaskSpec], samples: int, **kw: Any) -> tuple[float, float]:
    """Episodes per second of one whole rollout into a fresh store, and CPU µs per episode."""
    with tempfile.TemporaryDirectory() as out:
        cpu, start = cpu_seconds(), time.perf_counter()
        summary = rollout_bank(specs, "oracle", samples, Path(out), progress=False, **kw)
        wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu
        assert summary.counts["passed"] == summary.ran, "the oracle must pass every example"
        return summary.ran / wall, cpu / summary.ran * 1e6


def measure(specs: list[TaskSpec], samples: int, workers: int, ray: bool) -> dict[str, tuple[float, float]]:
    """One round: (episodes/s, CPU µs per episode) inline, with a process pool and (when asked) with Ray actors."""
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
    rate = {mode: statistics.median(r[mode][0] for r in rounds) for mode in rounds[0]}
    cpu = {mode: statistics.median(r[mode][1] for r in rounds) for mode in ("inline", "pool")}
    report: dict[str, float] = {
        "episodes": len(specs) * args.samples,
        "workers": w,
        "runtime_us_per_call": round(runtime_us, 1),
        "oracle_us_per_call": round(oracle_us, 1),
        "inline_eps_per_core": round(rate["inline"], 1),
        "inline_cpu_us_per_episode": round(cpu["inline"], 1),
        "pool_cpu_us_per_episode": round(cpu["pool"], 1),
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
    print(f"one process:          {rate['inline']:8.1f} episodes/s per core ({cpu['inline']:.0f} CPU µs per episode)")
    for mode, label in (("pool", f"process pool, {w} workers"), ("ray", f"Ray, {w} actors")):
        if mode in rate:
            print(
                f"{label + ':':<22}{rate[mode]:8.1f} episodes/s ({rate[mode] / w:.1f} per core): "
                f"x{report[f'{mode}_scaling']:.2f} one process, efficiency {report[f'{mode}_efficiency']:.0%}"
            )
    print(
        f"pool CPU per episode: {cpu['pool']:.0f} µs ({cpu['pool'] / cpu['inline'] - 1:+.0%} over one process: "
        f"on idle cores the pool's efficiency can reach {min(1.0, cpu['inline'] / cpu['pool']):.0%})"
    )


if __name__ == "__main__":
    main()
