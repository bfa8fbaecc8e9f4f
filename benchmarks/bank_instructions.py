"""Instructions per bank job: the cost of building a bank, counted instead of timed.

A bank job's CPU time on a shared virtual machine moves by ±30 % between runs minutes apart, more than most
changes move it, while the instructions it executes are the same on every run. This builds the bank of
``benchmarks/bank_yield.py`` under valgrind's callgrind twice, with ``--n`` jobs and with ``--warm`` jobs,
and prints the difference per job and per admitted environment: start-up and imports cancel out. With
``--against`` another checkout is counted the same way, and the ratio printed. ``--speed`` also builds the
two banks natively to read this machine's instructions per CPU-second now, and with it the admitted
environments per CPU-second the count comes to here, and the count a target rate would need:

    python benchmarks/bank_instructions.py [--n 35] [--warm 5] [--seed 7] [--generator blueprints]
    python benchmarks/bank_instructions.py --against ../main --speed --target 40

It needs valgrind on the PATH and takes about four seconds of wall clock per job counted (two runs at a time).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

YIELD_SCRIPT = Path(__file__).with_name("bank_yield.py")
_COLLECTED = re.compile(r"Collected : (\d+)")


@dataclass(frozen=True)
class Count:
    """One bank built under callgrind: the instructions of the whole process, and what the bank's manifest said."""

    instructions: int
    jobs: int
    admitted: int


@dataclass(frozen=True)
class Cost:
    """A checkout's instructions per job and per admitted environment, from a run of n jobs less one of w."""

    per_job: float
    per_admitted: float


def collected(stderr: str) -> int:
    """The instruction count callgrind reports at the end of its run (``==pid== Collected : N``)."""
    found = _COLLECTED.findall(stderr)
    if not found:
        raise RuntimeError(f"callgrind reported no instruction count; its output ended:\n{stderr[-1500:]}")
    return int(found[-1])


def _command(args: argparse.Namespace, n: int) -> list[str]:
    command = [sys.executable, str(YIELD_SCRIPT), "--json", "--n", str(n), "--seed", str(args.seed)]
    return [*command, "--generator", args.generator, "--workspace", args.workspace]


def _environment(root: Path) -> dict[str, str]:
    """The checkout's sources first on the path, and one string hash seed: dict and set orders, and so the
    instructions, are the same on every run."""
    return {**os.environ, "PYTHONPATH": str(root / "src"), "PYTHONHASHSEED": "0"}


def _run(command: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, env=_environment(root), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the bank of {root} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return done


def count(args: argparse.Namespace, root: Path, n: int) -> Count:
    """The bank of ``n`` jobs built by the checkout at ``root`` under callgrind."""
    valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    done = _run([*valgrind, *_command(args, n)], root)
    manifest = json.loads(done.stdout.strip().splitlines()[-1])
    return Count(collected(done.stderr), int(manifest["jobs"]), int(manifest["admitted"]))


def cost(big: Count, small: Count) -> Cost:
    """Instructions per job and per admitted environment of the jobs ``big`` ran beyond ``small``'s."""
    jobs, admitted = big.jobs - small.jobs, big.admitted - small.admitted
    if jobs <= 0 or admitted <= 0:
        raise RuntimeError(f"no admitted jobs beyond the warm-up ({big.jobs} jobs, {big.admitted} admitted)")
    spent = big.instructions - small.instructions
    return Cost(spent / jobs, spent / admitted)


def cpu_seconds(args: argparse.Namespace, root: Path, n: int) -> float:
    """The CPU seconds the bank of ``n`` jobs took natively (bank_yield's clock: the build, not the start-up)."""
    done = _run(_command(args, n), root)
    return float(json.loads(done.stdout.strip().splitlines()[-1])["cpu"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=35, help="jobs of the counted bank")
    ap.add_argument("--warm", type=int, default=5, help="jobs of the bank subtracted (start-up, imports, caches)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--generator", default="blueprints", choices=("blueprints", "composed", "mix"))
    ap.add_argument("--workspace", default="realistic", choices=("realistic", "small"))
    ap.add_argument("--against", type=Path, help="another checkout's root, counted the same way")
    ap.add_argument("--speed", action="store_true", help="also time both banks natively: this machine's speed")
    ap.add_argument("--target", type=float, default=40.0, help="admitted per CPU-second to state the need for")
    args = ap.parse_args()
    if args.n <= args.warm or args.warm < 1:
        sys.exit(f"--n ({args.n}) must be above --warm ({args.warm}), and --warm at least 1")
    roots = {"this": Path(__file__).resolve().parents[1]}
    if args.against is not None:
        roots["against"] = args.against.resolve()
        if not (roots["against"] / "src" / "coworkenv").is_dir():
            sys.exit(f"--against {args.against}: no src/coworkenv there (give a checkout's root)")
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not on the PATH: instructions are counted with its callgrind tool (apt install valgrind)")
    runs = [(name, n) for name in roots for n in (args.n, args.warm)]
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:  # each run is one process: two at a time on two cores
            counts = dict(zip(runs, pool.map(lambda run: count(args, roots[run[0]], run[1]), runs), strict=True))
        costs = {name: cost(counts[(name, args.n)], counts[(name, args.warm)]) for name in roots}
        speed = _speed(args, roots["this"], counts) if args.speed else None
    except RuntimeError as exc:
        sys.exit(str(exc))
    _report(args, costs, speed)


def _speed(args: argparse.Namespace, root: Path, counts: dict[tuple[str, int], Count]) -> float:
    """This machine's instructions per CPU-second now: this checkout's two banks, built natively, one after the
    other (their difference, as the count's)."""
    seconds = cpu_seconds(args, root, args.n) - cpu_seconds(args, root, args.warm)
    if seconds <= 0:
        raise RuntimeError(f"the {args.n}-job bank took no more CPU time than the {args.warm}-job one")
    return (counts[("this", args.n)].instructions - counts[("this", args.warm)].instructions) / seconds


def _report(args: argparse.Namespace, costs: dict[str, Cost], speed: float | None) -> None:
    what = f"jobs {args.warm + 1}–{args.n} of seed {args.seed}, {args.generator}, {args.workspace} workspace"
    table = Table(title=f"instructions per bank job ({what})")
    for col in ("checkout", "M per job", "M per admitted", "ratio"):
        table.add_column(col)
    base = costs.get("against")
    for name, c in costs.items():
        ratio = f"×{c.per_job / base.per_job:.3f}" if base is not None and name == "this" else ""
        table.add_row(name, f"{c.per_job / 1e6:.1f}", f"{c.per_admitted / 1e6:.1f}", ratio)
    console = Console()
    console.print(table)
    if speed is not None:
        rate = speed / costs["this"].per_admitted
        console.print(
            f"this machine now: {speed / 1e9:.2f} G instructions per CPU-second, so {rate:.1f} admitted per "
            f"CPU-second at this count; {args.target:g} per CPU-second needs ≤ {speed / args.target / 1e6:.1f} M "
            "per admitted environment here"
        )


if __name__ == "__main__":
    main()
