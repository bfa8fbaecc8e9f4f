"""Rollout throughput: oracle episodes per second per core in one process, and how it scales to
a process pool and to Ray, plus the runtime's overhead per model call.

The oracle costs microseconds per turn, so these figures are the ceiling the rollout machinery
itself allows; with a real model the model call dominates and the overhead per call below is
what the environment adds to it. Each round measures every mode once (interleaved, so load
from other jobs falls on all of them); the figures are medians over the rounds.

Two measures, kept apart because a shared machine confounds them:
- episodes/s per core = episodes / CPU seconds of every process of the run (this one and its
  reaped pool workers): what the code costs, whatever else the machine runs;
- scaling = the wall-clock throughput of the whole ``rollout_bank`` call (store, workers or
  actors started, episodes, summary) with N processes over one process's (a scripted policy's pool plays in
  its driver and N - 1 workers; Ray in N actors). It reaches N only on
  N idle cores, so the benchmark also measures the CPU other processes used meanwhile
  (``/proc/stat``), says whether the figure can be read, and gives the bound the CPU cost sets:
  on idle cores the pool's efficiency can reach one process's CPU per episode over the pool's.
Ray's actors are not this process's children, so only its wall-clock figure is given; they
start (and import coworkenv) inside the timed call, as a one-off job's would. Ray is measured
after the pool (its own rounds, each against a fresh one-process run): once Ray's threads run in
this process, the pool would spawn its workers instead of forking them. ``--steady``
also times each parallel mode on twice the episodes, so that the difference (the marginal
rate: what a long-running job, its workers already up, sees) is printed beside it.

A shared or virtual machine may not let N busy processes run as fast as one alone (caches, memory, a
hypervisor's other guests), so each round also times N one-process runs side by side (forked from this process,
each playing the whole job on its own, sharing nothing): their throughput over one process's is the scaling the
machine itself allows in those minutes, and the pool's scaling is also given as a fraction of it.

Targets: >= 400 oracle episodes/s/core in one process; 2 processes >= 1.8x one.

    python benchmarks/rollout.py [--bank examples] [--samples 60] [--workers 2] [--rounds 3]
                                 [--no-ray] [--steady] [--no-side-by-side] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
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


def cpu_seconds() -> tuple[float, float]:
    """CPU time of this process, and of it with its children that have ended."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    mine = own.ru_utime + own.ru_stime
    return mine, mine + children.ru_utime + children.ru_stime


def machine_busy() -> float | None:
    """CPU seconds every process of the machine has used since boot (None where ``/proc/stat`` is missing)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


@dataclass
class Run:
    """One timed ``rollout_bank`` call: episodes, wall seconds, CPU seconds of this run's processes (and of this
    one alone: a pool's driver, which plays beside its workers and stores what they finished), and the CPU seconds
    other processes used meanwhile (None: unknown)."""

    episodes: int
    wall: float
    cpu: float
    driver: float
    foreign: float | None

    @property
    def rate(self) -> float:
        return self.episodes / self.wall

    @property
    def cpu_us(self) -> float:
        return self.cpu / self.episodes * 1e6


def timed(body: Callable[[], int]) -> Run:
    """Run ``body`` (which returns how many episodes it played), timing its wall clock, the CPU of this process and
    of its children, and what other processes used meanwhile."""
    busy, (own, cpu), start = machine_busy(), cpu_seconds(), time.perf_counter()
    episodes = body()
    wall, (own_after, cpu_after), after = time.perf_counter() - start, cpu_seconds(), machine_busy()
    cpu = cpu_after - cpu
    foreign = None if busy is None or after is None else max(0.0, after - busy - cpu)
    return Run(episodes, wall, cpu, own_after - own, foreign)


def throughput(specs: list[TaskSpec], samples: int, **kw: Any) -> Run:
    """One whole rollout into a fresh store."""

    def play() -> int:
        with tempfile.TemporaryDirectory() as out:
            summary = rollout_bank(specs, "oracle", samples, Path(out), progress=False, **kw)
        assert summary.counts["passed"] == summary.ran, "the oracle must pass every example"
        return summary.ran

    return timed(play)


def side_by_side(specs: list[TaskSpec], samples: int, n: int) -> Run:
    """``n`` forked processes each running the whole one-process job at the same time; the wall time until the
    last one ends."""

    def play() -> int:
        ctx = multiprocessing.get_context("fork")
        runs = [ctx.Process(target=throughput, args=(specs, samples)) for _ in range(n)]
        for run in runs:
            run.start()
        for run in runs:
            run.join()
            assert run.exitcode == 0, f"a side-by-side run failed (exit code {run.exitcode})"
        return n * len(specs) * samples

    return timed(play)


def measure(
    specs: list[TaskSpec], samples: int, parallel: dict[str, Any], steady: bool, alongside: int = 0
) -> dict[str, Run]:
    """One round: inline, then one parallel mode (``parallel``: its name and ``rollout_bank`` arguments);
    ``steady``: the parallel mode also on twice the samples (``<mode>2``); ``alongside``: that many one-process
    runs side by side too (``side``)."""
    ((mode, kw),) = parallel.items()
    out = {"inline": throughput(specs, samples), mode: throughput(specs, samples, **kw)}
    if steady:
        out[f"{mode}2"] = throughput(specs, 2 * samples, **kw)
    if alongside:
        out["side"] = side_by_side(specs, samples, alongside)
    return out


def summarise(rounds: list[dict[str, Run]], workers: int) -> dict[str, Any]:
    """The medians over rounds, and what they let one conclude."""
    med = statistics.median
    rate = {mode: med(r[mode].rate for r in rounds if mode in r) for mode in {m for r in rounds for m in r}}
    cpu = {mode: med(r[mode].cpu_us for r in rounds if mode in r) for mode in ("inline", "pool")}
    report: dict[str, Any] = {
        "workers": workers,
        "inline_eps_per_core": round(1e6 / cpu["inline"], 1),
        "inline_cpu_us_per_episode": round(cpu["inline"], 1),
        "inline_eps": round(rate["inline"], 1),
        "pool_eps_per_core": round(1e6 / cpu["pool"], 1),
        "pool_cpu_us_per_episode": round(cpu["pool"], 1),
        "pool_cpu_over_inline": round(cpu["pool"] / cpu["inline"], 3),
        "pool_driver_cpu_share": round(med(r["pool"].driver / r["pool"].cpu for r in rounds if "pool" in r), 3),
        "pool_idle_efficiency_bound": round(min(1.0, cpu["inline"] / cpu["pool"]), 3),
    }
    for mode in ("side", "pool", "ray"):
        if mode not in rate:
            continue
        mine = [r for r in rounds if mode in r]
        inline = med(r["inline"].rate for r in mine)  # the one-process runs of the same rounds
        report[f"{mode}_eps"] = round(rate[mode], 1)
        report[f"{mode}_scaling"] = round(rate[mode] / inline, 3)
        report[f"{mode}_efficiency"] = round(rate[mode] / inline / workers, 3)
        if mode != "side" and "side_scaling" in report:
            report[f"{mode}_of_side_by_side"] = round(report[f"{mode}_scaling"] / report["side_scaling"], 3)
        foreign = [busy / r[mode].wall for r in mine if (busy := r[mode].foreign) is not None]
        report[f"{mode}_other_cores_busy"] = round(med(foreign), 2) if foreign else None
        if f"{mode}2" in rate:  # the marginal rate: the extra episodes over the extra seconds
            extra = [r[f"{mode}2"].episodes - r[mode].episodes for r in mine]
            more = [r[f"{mode}2"].wall - r[mode].wall for r in mine]
            steady = med(e / t for e, t in zip(extra, more, strict=True)) if min(more) > 0 else None
            report[f"{mode}_steady_eps"] = None if steady is None else round(steady, 1)
            report[f"{mode}_steady_scaling"] = None if steady is None else round(steady / inline, 3)
    return report


def conclusion(report: dict[str, Any], mode: str, label: str) -> str:
    """Whether the wall-clock scaling of ``mode`` can be read on this machine, and what bounds it."""
    busy = report.get(f"{mode}_other_cores_busy")
    w = report["workers"]
    if busy is None:
        return f"{label}: the machine's load is unknown, so the scaling is as measured"
    if busy > 0.25:
        bound = {
            "pool": f"; its CPU cost allows x{w * report['pool_idle_efficiency_bound']:.2f} on {w} idle cores",
            "ray": "; its actors' CPU is not measured (they are not this process's children)",
        }.get(mode, "")
        return (
            f"{label}: other processes kept {busy:.2f} cores busy meanwhile, so the x{report[f'{mode}_scaling']:.2f} "
            f"says as much about them as about the workers and cannot be read as a scaling{bound}"
        )
    return (
        f"{label}: the cores were otherwise idle ({busy:.2f} busy), so x{report[f'{mode}_scaling']:.2f} is its scaling"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bank", default="examples", help="bank folder or folder of specs")
    parser.add_argument("--samples", type=int, default=60, help="episodes per spec")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray measurement")
    parser.add_argument("--steady", action="store_true", help="also time the parallel modes on twice the episodes")
    parser.add_argument(
        "--no-side-by-side",
        action="store_true",
        help="skip the one-process runs side by side (the machine's own scaling)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args()
    specs = load_specs(args.bank)
    w = args.workers
    runtime_us, oracle_us = overhead_per_call(specs, repeats=20)
    # the pool first: once Ray runs its threads in this process, the pool's workers are spawned, not forked
    pool = {"pool": {"workers": w}}
    alongside = 0 if args.no_side_by_side else w
    rounds = [measure(specs, args.samples, pool, args.steady, alongside) for _ in range(args.rounds)]
    if not args.no_ray:
        import ray

        ray.init(num_cpus=w, include_dashboard=False, log_to_driver=False)
        actors = {"ray": {"workers": w, "ray_address": "local"}}
        rounds += [measure(specs, args.samples, actors, args.steady) for _ in range(args.rounds)]
        ray.shutdown()
    report = {
        "episodes": len(specs) * args.samples,
        "runtime_us_per_call": round(runtime_us, 1),
        "oracle_us_per_call": round(oracle_us, 1),
        **summarise(rounds, w),
    }
    if args.json:
        print(json.dumps(report))
        return
    print_report(report, args.rounds, args.samples, len(specs))


def print_report(report: dict[str, Any], rounds: int, samples: int, specs: int) -> None:
    w = report["workers"]
    print(
        f"{specs} specs x {samples} samples = {report['episodes']} oracle episodes per measurement, "
        f"medians of {rounds} interleaved rounds"
    )
    print(
        f"runtime overhead per model call: {report['runtime_us_per_call']:.0f} µs median "
        f"(the oracle itself: {report['oracle_us_per_call']:.0f} µs)"
    )
    print(
        f"one process:          {report['inline_eps_per_core']:8.1f} episodes/s per core "
        f"({report['inline_cpu_us_per_episode']:.0f} CPU µs per episode; {report['inline_eps']:.1f} episodes/s)"
    )
    print(
        f"process pool, {w} processes: {report['pool_eps_per_core']:8.1f} episodes/s per core "
        f"({report['pool_cpu_us_per_episode']:.0f} CPU µs per episode, all processes: "
        f"x{report['pool_cpu_over_inline']:.2f} one process's; the driver's share, its own episodes included: "
        f"{report['pool_driver_cpu_share']:.0%})"
    )
    if "side_eps" in report:
        print(
            f"{w} one-process runs side by side: {report['side_eps']:8.1f} episodes/s wall-clock: "
            f"x{report['side_scaling']:.2f} one process (the machine's own scaling, nothing shared)"
        )
        print("  " + conclusion(report, "side", f"{w} runs side by side"))
    for mode, label in (("pool", f"process pool, {w} processes"), ("ray", f"Ray, {w} actors")):
        if f"{mode}_eps" not in report:
            continue
        line = (
            f"{label + ':':<22}{report[f'{mode}_eps']:8.1f} episodes/s wall-clock: x{report[f'{mode}_scaling']:.2f} "
            f"one process, efficiency {report[f'{mode}_efficiency']:.0%}"
        )
        if f"{mode}_of_side_by_side" in report:
            line += f" ({report[f'{mode}_of_side_by_side']:.0%} of the runs side by side)"
        if f"{mode}_steady_eps" in report:
            line += (
                f"; marginal {report[f'{mode}_steady_eps']:.1f} episodes/s (x{report[f'{mode}_steady_scaling']:.2f})"
            )
        print(line)
        print("  " + conclusion(report, mode, label))


if __name__ == "__main__":
    main()
