"""Synthesis throughput with full verification, admission yield, and memory while streaming a bank.

One process (so the rate is per core): every environment is composed, verified (static
checks, the reference once, ~6-8 probes, solvability) and repaired when needed.
1. rate: median over three fresh banks of ``--rate-n`` environments (different seeds);
2. memory: a bank of ``--n`` environments streamed to disk, resident memory sampled every
   tenth of the way; it must stay flat (the writer keeps counters, not specs).

Target: >= 50 admitted environments per second per core.

    python benchmarks/synth.py [--n 10000] [--rate-n 600]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from coworkenv.bank.store import synthesize_bank

TARGET = 50.0


def rss_mib() -> float:
    """Current resident set size (Linux /proc), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rate(n: int, seed: int) -> tuple[float, dict]:
    """Admitted environments per second and the manifest of one fresh bank."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        manifest = synthesize_bank(Path(tmp) / "bank", n, seed=seed)
        seconds = time.perf_counter() - start
    return manifest["admitted"] / seconds, manifest


def stream(n: int) -> tuple[list[tuple[int, float]], dict, float]:
    samples: list[tuple[int, float]] = []
    step = max(1, n // 10)

    def sample(admitted: int, jobs: int) -> None:
        if admitted and admitted % step == 0 and (not samples or samples[-1][0] != admitted):
            samples.append((admitted, rss_mib()))

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        manifest = synthesize_bank(Path(tmp) / "bank", n, seed=99, on_progress=sample)
        seconds = time.perf_counter() - start
    return samples, manifest, n / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="environments streamed for the memory figure")
    parser.add_argument("--rate-n", type=int, default=600, help="environments per timed bank")
    args = parser.parse_args()
    console = Console()

    runs = [rate(args.rate_n, seed) for seed in (1, 2, 3)]
    per_core = statistics.median(r for r, _ in runs)
    table = Table(title=f"synthesis with full verification, 1 process ({args.rate_n} environments x 3 banks)")
    for col in ("bank", "admitted / s", "yield", "admitted first try", "repair rounds"):
        table.add_column(col)
    for i, (r, m) in enumerate(runs, 1):
        rounds = ", ".join(f"{k}: {v}" for k, v in m["repair_rounds"].items())
        table.add_row(str(i), f"{r:.1f}", f"{m['yield']:.1%}", f"{m['repair_rounds']['0'] / m['jobs']:.1%}", rounds)
    console.print(table)
    verdict = "meets" if per_core >= TARGET else "MISSES"
    console.print(
        f"median: [bold]{per_core:.1f}[/bold] admitted environments / s / core ({verdict} the target "
        f"of {TARGET:.0f}); median yield {statistics.median(m['yield'] for _, m in runs):.1%}"
    )

    samples, manifest, streamed_rate = stream(args.n)
    table = Table(title=f"resident memory while streaming {args.n} environments")
    table.add_column("environments")
    table.add_column("RSS MiB")
    for admitted, mib in samples:
        table.add_row(str(admitted), f"{mib:.1f}")
    console.print(table)
    first, last = samples[1][1] if len(samples) > 1 else samples[0][1], samples[-1][1]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    console.print(
        f"RSS from {samples[1][0] if len(samples) > 1 else samples[0][0]} to {samples[-1][0]} "
        f"environments: {first:.1f} -> {last:.1f} MiB ({last - first:+.1f} MiB); peak {peak:.1f} MiB; "
        f"{streamed_rate:.1f} environments / s over the stream; yield {manifest['yield']:.1%}"
    )


if __name__ == "__main__":
    main()
