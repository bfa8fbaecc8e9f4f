"""Bank yield and throughput per CPU-second, overall and per blueprint.

Builds one bank in a single process and reports what the manifest says (jobs, admitted,
first-try and final yield, rejections) with admitted environments per CPU-second of this
process (CPU time, not wall time: the machine is shared, so wall time measures the neighbours), and the
load average the run saw (a loaded machine's cores run slower per CPU-second, so compare runs side by side).
Run it on two checkouts to compare them:

    python benchmarks/bank_yield.py [--n 320] [--seed 0] [--blueprints a,b] [--generator composed] [--workspace small]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
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
    args = ap.parse_args()
    names = [b for b in args.blueprints.split(",") if b] or None
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        cpu = time.process_time()
        out = Path(args.keep or Path(tmp) / "bank")
        manifest = synthesize_bank(
            out, args.n, seed=args.seed, blueprints=names, generator=args.generator, workspace=args.workspace
        )
        cpu = time.process_time() - cpu
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
    for name, row in sorted(manifest["per_blueprint"].items()):
        table.add_row(f"  {name} ({row['split']})", f"{row['admitted']} of {row['jobs']}")
    console = Console()
    console.print(table)
    console.print({"rejection_reasons": manifest["rejection_reasons"], "repair_rounds": manifest["repair_rounds"]})


if __name__ == "__main__":
    main()
