"""Bank synthesis on Ray: one actor against two, on the marginal rate (start-up excluded), and what it implies.

One local Ray (``--cpus`` CPUs) serves every run. Each round builds a fresh bank of ``--n``
environments in this process (no Ray: the per-core rate), then on 1 and 2 actors, in alternating
order from round to round; every build's figures come from its ``builds.jsonl`` line: start-up
(until the actors, coworkenv imported, take jobs) and the marginal rate after it. The Ray banks
must hold the bytes of the local one. From the two-actor rate per actor follows a paper estimate
of a 1,000,000-environment bank on 64 cores (63 actors; one core left to the driver, which writes
the bank, and to Ray).

Target: 2 actors >= 1.8x one on the marginal rate. The machine's load average is printed beside
every round, and the cores the actors had (their CPU time over the wall clock): on a shared machine
that shares CPU time out per session, a second actor may get no second core.

    python benchmarks/ray_scaling.py [--n 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

import ray
from rich.console import Console
from rich.table import Table

from coworkenv.bank.store import BUILDS, read_builds, synthesize_bank

TARGET = 1.8
CORES, BANK = 64, 1_000_000


def bank_bytes(bank: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(bank)): p.read_bytes() for p in sorted(bank.rglob("*")) if p.is_file() and p.name != BUILDS
    }


def build(root: Path, name: str, n: int, seed: int, workers: int | None) -> dict[str, object]:
    """One fresh bank (``workers=None``: in this process); its build figures."""
    synthesize_bank(root / name, n, seed=seed, workers=workers or 1, ray_address="local" if workers else None)
    return read_builds(root / name)[-1]


def one_round(n: int, seed: int, order: tuple[int, int]) -> dict[str, dict[str, object]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        figures = {"inline": build(root, "inline", n, seed, None)}
        for workers in order:
            figures[f"ray{workers}"] = build(root, f"ray{workers}", n, seed, workers)
        for workers in order:
            assert bank_bytes(root / f"ray{workers}") == bank_bytes(root / "inline"), "Ray built other bytes"
    return figures


def med(rounds: list[dict[str, dict[str, object]]], key: str, field: str) -> float:
    return statistics.median(float(f[key][field]) for f in rounds)  # type: ignore[arg-type]


def ratio(f: dict[str, dict[str, object]], field: str) -> float:
    return float(f["ray2"][field]) / float(f["ray1"][field])  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=300, help="environments per bank")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray")
    args = parser.parse_args()
    console = Console()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)

    table = Table(
        title=f"bank synthesis: in this process, on 1 and on 2 actors ({args.n} environments a bank; admitted "
        "environments per second after start-up, and per CPU-second of the workers)"
    )
    columns = ("round", "load", "here /s", "here /CPU-s", "1: start s", "1: /s", "1: /CPU-s")
    for col in (*columns, "2: start s", "2: /s", "2: /CPU-s", "x /s"):
        table.add_column(col, justify="right")
    rounds, loads = [], []
    for r in range(args.rounds):
        loads.append(os.getloadavg()[0])
        f = one_round(args.n, 100 + r, (1, 2) if r % 2 == 0 else (2, 1))
        rounds.append(f)
        cells = [f"{f['inline']['rate']:.1f}", f"{f['inline']['per_cpu_second']:.1f}"]
        for key in ("ray1", "ray2"):
            cells += [f"{f[key][k]:.1f}" for k in ("startup_seconds", "marginal_rate", "per_cpu_second")]
        table.add_row(str(r + 1), f"{loads[-1]:.1f}", *cells, f"{ratio(f, 'marginal_rate'):.2f}")
    console.print(table)
    report(console, rounds, loads)


def report(console: Console, rounds: list[dict[str, dict[str, object]]], loads: list[float]) -> None:
    one, two = med(rounds, "ray1", "marginal_rate"), med(rounds, "ray2", "marginal_rate")
    paired = statistics.median(ratio(f, "marginal_rate") for f in rounds)
    verdict = "meets" if paired >= TARGET else "MISSES"
    console.print(
        f"marginal rate: 1 actor {one:.1f}/s, 2 actors {two:.1f}/s: [bold]x{two / one:.2f}[/bold] (paired "
        f"x{paired:.2f}; {verdict} the target of x{TARGET}) at load {min(loads):.1f}-{max(loads):.1f} on "
        f"{os.cpu_count()} cores; start-up {med(rounds, 'ray1', 'startup_seconds'):.1f} s and "
        f"{med(rounds, 'ray2', 'startup_seconds'):.1f} s; bank bytes identical to the local run's"
    )
    per_cpu = {k: med(rounds, k, "per_cpu_second") for k in ("inline", "ray1", "ray2")}
    efficiency = statistics.median(ratio(f, "per_cpu_second") for f in rounds)
    console.print(
        f"per CPU-second of the workers: in this process {per_cpu['inline']:.1f}, 1 actor {per_cpu['ray1']:.1f}, "
        f"2 actors {per_cpu['ray2']:.1f} (2 actors keep x{efficiency:.2f} of one actor's work per CPU-second, so "
        f"two free cores would give x{2 * efficiency:.2f})"
    )
    cores = {k: med(rounds, k, "marginal_rate") / per_cpu[k] for k in ("ray1", "ray2")}
    console.print(
        f"cores the actors had (marginal rate over rate per CPU-second): 1 actor {cores['ray1']:.2f}, 2 actors "
        f"{cores['ray2']:.2f}; where 2 actors get no more than one core, the machine, not the build, sets the ratio"
    )
    rate = (CORES - 1) * per_cpu["ray2"]
    console.print(
        f"paper estimate: {BANK:,} environments on {CORES} cores = {CORES - 1} actors x {per_cpu['ray2']:.1f}/s "
        f"(the two-actor rate per CPU-second) = {rate:,.0f}/s: {BANK / rate / 60:.1f} min after start-up"
    )


if __name__ == "__main__":
    main()
