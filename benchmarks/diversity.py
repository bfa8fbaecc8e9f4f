"""Workflow diversity of a bank: how many distinct workflows it holds, not how many environments.

Prints, per generator (blueprints, composed) and overall: distinct reference tool
sequences, distinct ordered tool sets (each tool once, in first-call order), how many of
the built-in tools the references use and the tools fewer than ``--min-envs`` environments
use, the spread of chain lengths (composed workflows), the share of environments whose
reference crosses three or more services, and the bank's yield (first try and after repair).
The figures are computed by :mod:`coworkenv.bank.diversity`, which ``coworkenv bank stats``
prints too:

    python benchmarks/diversity.py BANK [--min-envs 20]
"""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.table import Table

from coworkenv.bank.diversity import measure
from coworkenv.bank.store import BankError, read_manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bank")
    ap.add_argument("--min-envs", type=int, default=20, help="flag tools fewer environments than this use")
    args = ap.parse_args()
    console = Console()
    try:
        manifest = read_manifest(args.bank)
        tallies = measure(args.bank)
    except (BankError, OSError, ValueError) as exc:
        console.print(f"[red]{args.bank}: {exc}[/red]")
        sys.exit(2)
    for name, tally in tallies.items():
        table = Table(title=f"{args.bank}: {name}")
        table.add_column("figure")
        table.add_column("value")
        for row in tally.rows(args.min_envs):
            table.add_row(*row)
        console.print(table)
    jobs = manifest["jobs"]
    first = manifest["repair_rounds"].get("0", 0)
    console.print(
        f"yield {manifest['yield']:.1%} (first try {first / jobs:.1%}) over {jobs} jobs" if jobs else "no jobs"
    )


if __name__ == "__main__":
    main()
