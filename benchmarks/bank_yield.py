"""Bank yield and throughput per CPU-second, overall and per blueprint.

Builds one bank in a single process and reports what the manifest says (jobs, admitted,
first-try and final yield, rejections) with admitted environments per CPU-second of this
process (CPU time, not wall time: the machine is shared, so wall time measures the neighbours), and the
load average the run saw (a loaded machine's cores run slower per CPU-second, so compare runs side by side).
Per blueprint it prints the CPU milliseconds a job took (mean; the first job also pays for the imports it
triggers) and the blueprint's share of the build's job time: where a faster bank has to come from.
To compare this checkout with another one (say, main in a git worktree), ``--against`` runs both in fresh
processes, round after round, taking turns at going first (a machine's speed drifts, so only runs side by side
compare), and prints each round, the medians and the paired ratios, and whether the two built the same bank bytes:

    python benchmarks/bank_yield.py [--n 320] [--seed 0] [--blueprints a,b] [--generator composed] [--workspace small]
    python benchmarks/bank_yield.py --n 150 --seed 7 --against ../main --rounds 5
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

from rich.console import Console
from rich.table import Table

from coworkenv.bank.store import synthesize_bank
from coworkenv.synth.background import DEFAULT_WORKSPACE, WORKSPACES


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=320)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--blueprints", default="", help="comma-separated; default: every blueprint")
    ap.add_argument("--generator", default="blueprints", choices=("blueprints", "composed", "mix"))
    ap.add_argument("--workspace", default=DEFAULT_WORKSPACE, choices=tuple(WORKSPACES))
    ap.add_argument(
        "--keep", default="", help="write the bank here (for benchmarks/diversity.py) instead of a temp dir"
    )
    ap.add_argument("--json", action="store_true", help="print one JSON line of figures instead of the table")
    ap.add_argument("--against", type=Path, help="another checkout's root: run both, interleaved, and compare")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the comparison (with --against)")
    args = ap.parse_args()
    if args.against is not None:
        compare(args)
        return
    names = [b for b in args.blueprints.split(",") if b] or None
    load = os.getloadavg()[0]
    marks: list[float] = []  # the CPU clock after each job (the inline runner reports every job as it ends)
    with tempfile.TemporaryDirectory() as tmp:
        cpu = time.process_time()
        out = Path(args.keep or Path(tmp) / "bank")
        manifest = synthesize_bank(
            out,
            args.n,
            seed=args.seed,
            blueprints=names,
            generator=args.generator,
            workspace=args.workspace,
            on_progress=lambda _admitted, _jobs: marks.append(time.process_time()),
        )
        cpu = time.process_time() - cpu
        costs = _job_costs(out / "journal.jsonl", marks)
    if args.json:
        figures = {"jobs": manifest["jobs"], "admitted": manifest["admitted"], "cpu": cpu}
        print(json.dumps({**figures, "load": [load, os.getloadavg()[0]], "yield": manifest["yield"]}))
        return
    table = Table(title=f"bank of {args.n} (seed {args.seed}, {args.generator}, {args.workspace} workspace)")
    for col in ("figure", "value"):
        table.add_column(col)
    admitted, jobs = manifest["admitted"], manifest["jobs"]
    first_try = manifest["repair_rounds"].get("0", 0)
    table.add_row("jobs / admitted", f"{jobs} / {admitted}")
    table.add_row("yield (first try)", f"{manifest['yield']:.3f} ({first_try / jobs:.3f})" if jobs else "n/a")
    table.add_row("CPU seconds", f"{cpu:.1f}")
    table.add_row("admitted per CPU-second", f"{admitted / cpu:.2f}")
    table.add_row("load average (start / end)", f"{load:.2f} / {os.getloadavg()[0]:.2f}")
    table.add_row("train / held-out", f"{manifest['split']['train']} / {manifest['split']['heldout']}")
    per = Table(title="per blueprint: yield and CPU time of its jobs")
    for col in ("blueprint (split)", "admitted of jobs", "ms a job", "share of job time"):
        per.add_column(col)
    spent = sum(sum(v) for v in costs.values()) or 1.0
    for name, row in sorted(manifest["per_blueprint"].items(), key=lambda kv: -sum(costs.get(kv[0], [0.0]))):
        mine = costs.get(name) or [0.0]
        cells = (f"{1000 * sum(mine) / len(mine):.1f}", f"{100 * sum(mine) / spent:.1f} %")
        per.add_row(f"{name} ({row['split']})", f"{row['admitted']} of {row['jobs']}", *cells)
    console = Console()
    console.print(table)
    console.print(per)
    console.print({"rejection_reasons": manifest["rejection_reasons"], "repair_rounds": manifest["repair_rounds"]})


def _job_costs(journal: Path, marks: list[float]) -> dict[str, list[float]]:
    """CPU seconds of each job run now, by blueprint: the journal ends with those jobs in the order they ended (a
    kept bank that was resumed lists its earlier jobs first), and ``marks`` holds the CPU clock before the first
    and after each."""
    entries = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines() if line.strip()]
    ran = len(marks) - 1
    costs: dict[str, list[float]] = {}
    for entry, (before, after) in zip(entries[len(entries) - ran :] if ran > 0 else [], pairwise(marks), strict=True):
        costs.setdefault(str(entry.get("blueprint")), []).append(after - before)
    return costs


def compare(args: argparse.Namespace) -> None:
    """Both checkouts, ``args.rounds`` rounds taking turns at going first; fails loudly when a run fails."""
    roots = {"this": Path(__file__).resolve().parents[1], "against": args.against.resolve()}
    if not (roots["against"] / "src" / "coworkenv").is_dir():
        sys.exit(f"--against {args.against}: no src/coworkenv there (give a checkout's root)")
    rates: dict[str, list[float]] = {"this": [], "against": []}
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.rounds):
            order = ("against", "this") if k % 2 == 0 else ("this", "against")
            for name in order:
                figures = _run(args, roots[name], Path(tmp) / f"{name}{k}")
                rates[name].append(figures["admitted"] / figures["cpu"])
                loads += figures["load"]
        same = _same_bank(Path(tmp) / "this0", Path(tmp) / "against0")
    what = f"{args.n} jobs (seed {args.seed}, {args.generator}, {args.workspace})"
    table = Table(title=f"admitted per CPU-second, {what}")
    for col in ("round", "against", "this", "ratio"):
        table.add_column(col)
    for k, (a, b) in enumerate(zip(rates["against"], rates["this"], strict=True)):
        table.add_row(str(k + 1), f"{a:.2f}", f"{b:.2f}", f"×{b / a:.2f}")
    ratios = [b / a for a, b in zip(rates["against"], rates["this"], strict=True)]
    median = statistics.median
    table.add_row("median", f"{median(rates['against']):.2f}", f"{median(rates['this']):.2f}", f"×{median(ratios):.2f}")
    console = Console()
    console.print(table)
    console.print(f"load average {min(loads):.2f}–{max(loads):.2f}; bank bytes {same}")


def _run(args: argparse.Namespace, root: Path, keep: Path) -> dict[str, float]:
    """One bank built by the checkout at ``root`` in a fresh process, its bank kept at ``keep``."""
    command = [sys.executable, __file__, "--json", "--keep", str(keep), "--n", str(args.n), "--seed", str(args.seed)]
    command += ["--generator", args.generator, "--workspace", args.workspace]
    command += ["--blueprints", args.blueprints] if args.blueprints else []
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"the run of {root} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _same_bank(a: Path, b: Path) -> str:
    """Whether two banks hold the same bytes in every file but ``builds.jsonl`` (build timings), as a phrase."""
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.name != "builds.jsonl")
    other = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file() and p.name != "builds.jsonl")
    if files != other:
        return "differ: not the same files"
    differ = [str(f) for f in files if not filecmp.cmp(a / f, b / f, shallow=False)]
    return f"differ in {', '.join(differ)}" if differ else "identical (every file but builds.jsonl)"


if __name__ == "__main__":
    main()
