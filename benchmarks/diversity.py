"""Workflow diversity of a bank: how many distinct workflows it holds, not how many environments.

Prints, per generator (blueprints, composed) and overall: distinct reference tool
sequences, distinct ordered tool sets (each tool once, in first-call order), how many of
the built-in tools the references use and the tools fewer than ``--min-envs`` environments
use, the spread of chain lengths (composed workflows), the share of environments whose
reference crosses three or more services, and the bank's yield (first try and after repair):

    python benchmarks/diversity.py BANK [--min-envs 20]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from coworkenv.bank.store import BankError, load_bank, read_manifest
from coworkenv.services.registry import tool_table
from coworkenv.spec.models import TaskSpec

COMPOSED_PREFIX = "composed: "


@dataclass
class Tally:
    """Diversity figures of one group of environments."""

    envs: int = 0
    sequences: set[tuple[str, ...]] = field(default_factory=set)
    tool_sets: set[tuple[str, ...]] = field(default_factory=set)
    tools: Counter[str] = field(default_factory=Counter)
    lengths: Counter[int] = field(default_factory=Counter)
    wide: int = 0
    """Environments whose reference calls tools of three or more services."""

    def add(self, spec: TaskSpec) -> None:
        calls = tuple(
            s.call
            for ref in (spec.reference, *(st.reference for st in spec.stages or []))
            for s in ref
            if hasattr(s, "call")
        )
        self.envs += 1
        self.sequences.add(calls)
        self.tool_sets.add(tuple(dict.fromkeys(calls)))
        self.tools.update(set(calls))
        if spec.description.startswith(COMPOSED_PREFIX):
            self.lengths[len(spec.description.removeprefix(COMPOSED_PREFIX).split(" > "))] += 1
        self.wide += len({c.split("_", 1)[0] for c in calls}) >= 3

    def rows(self, min_envs: int) -> list[tuple[str, str]]:
        builtin = set(tool_table())
        used = builtin & set(self.tools)
        rare = sorted(t for t in used if self.tools[t] < min_envs)
        spread = ", ".join(f"{k}: {v}" for k, v in sorted(self.lengths.items())) or "n/a"
        return [
            ("environments", str(self.envs)),
            ("distinct reference tool sequences", str(len(self.sequences))),
            ("distinct ordered tool sets", str(len(self.tool_sets))),
            ("built-in tools used", f"{len(used)} of {len(builtin)}"),
            ("built-in tools no reference uses", str(len(builtin - used))),
            (f"tools used, by fewer than {min_envs} environments", f"{len(rare)}: {', '.join(rare)}"),
            ("chain lengths (steps: environments)", spread),
            ("share crossing >= 3 services", f"{self.wide / self.envs:.1%}" if self.envs else "n/a"),
        ]


def measure(bank: str | Path) -> dict[str, Tally]:
    """The bank's figures by generator (``blueprints``, ``composed``) and ``all``, streamed spec by spec."""
    tallies = {"all": Tally(), "blueprints": Tally(), "composed": Tally()}
    for spec, _ in load_bank(bank):
        kind = "composed" if spec.description.startswith(COMPOSED_PREFIX) else "blueprints"
        tallies["all"].add(spec)
        tallies[kind].add(spec)
    return {k: t for k, t in tallies.items() if t.envs}


def domains_used(bank: str | Path) -> Counter[str]:
    """Environments per declared service (the catalogue's domains) in the bank."""
    return Counter(name for spec, _ in load_bank(bank) for name in spec.declared_services or {})


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
    domains = domains_used(args.bank)
    console.print(f"domains used: {len(domains)} ({', '.join(f'{d}: {n}' for d, n in domains.most_common())})")
    jobs = manifest["jobs"]
    first = manifest["repair_rounds"].get("0", 0)
    console.print(
        f"yield {manifest['yield']:.1%} (first try {first / jobs:.1%}) over {jobs} jobs" if jobs else "no jobs"
    )


if __name__ == "__main__":
    main()
