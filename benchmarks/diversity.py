"""Workflow diversity of a bank: how many distinct workflows it holds, not how many environments.

Prints, per generator (blueprints, composed) and overall: distinct reference tool
sequences, distinct ordered tool sets (each tool once, in first-call order), how many of
the built-in tools the references use and the tools fewer than ``--min-envs`` environments
use, the spread of chain lengths (composed workflows), the share of environments whose
reference crosses three or more services, the distinct tool interfaces the environments show
(each exposed tool's shown name with its shown argument names), the bank's yield (first try and after repair),
and the workspace sizes (records per environment; tokens of the first tool result the reference gets, on the
embedded model's tokenizer where its extra is installed, else estimated at 4 characters a token):

    python benchmarks/diversity.py BANK [--min-envs 20] [--token-sample 200]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from coworkenv.bank.store import BankError, load_bank, read_manifest
from coworkenv.runtime.interface import arguments_of
from coworkenv.runtime.router import exposed_tools
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
    interfaces: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)

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
        self.interfaces |= interfaces_of(spec)

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
            ("distinct tool interfaces (name + arguments)", str(len(self.interfaces))),
        ]


def interfaces_of(spec: TaskSpec) -> set[tuple[str, tuple[str, ...]]]:
    """The tool interfaces an environment shows: each exposed tool's shown name and its shown argument names."""
    shown = spec.interface
    out = set()
    for tool, info in exposed_tools(list(spec.services), spec.tools, spec.declared_services).items():
        rendering = shown.tools.get(tool) if shown is not None else None
        renames = rendering.args if rendering is not None else {}
        args = tuple(sorted(renames.get(a, a) for a in arguments_of(info)))
        out.add((shown.tool_name(tool) if shown is not None else tool, args))
    return out


def measure(bank: str | Path) -> dict[str, Tally]:
    """The bank's figures by generator (``blueprints``, ``composed``) and ``all``, streamed spec by spec."""
    tallies = {"all": Tally(), "blueprints": Tally(), "composed": Tally()}
    for spec, _ in load_bank(bank):
        kind = "composed" if spec.description.startswith(COMPOSED_PREFIX) else "blueprints"
        tallies["all"].add(spec)
        tallies[kind].add(spec)
    return {k: t for k, t in tallies.items() if t.envs}


def workspace_rows(bank: str | Path, token_sample: int) -> list[tuple[str, str]]:
    """Workspace records (median / p10 / max) over the bank, and the median tokens of the first tool result the
    reference gets, over the first ``token_sample`` environments."""
    from statistics import median

    from coworkenv.agents.oracle import OracleTeacher
    from coworkenv.runtime.environment import Environment
    from coworkenv.runtime.episode import run_episode

    count, how = _token_counter()
    sizes: list[int] = []
    tokens: list[int] = []
    for spec, _ in load_bank(bank):
        sizes.append(sum(len(rows) for colls in spec.services.values() for rows in colls.values()))
        if len(tokens) < token_sample:
            messages = run_episode(Environment(spec), OracleTeacher()).messages
            first = next((m["content"] for m in messages if m.get("role") == "tool"), None)
            if isinstance(first, str):
                tokens.append(count(first))
    sizes.sort()
    p10 = sizes[len(sizes) // 10] if sizes else 0
    return [
        ("workspace records: median / p10 / max", f"{median(sizes):.0f} / {p10} / {max(sizes)}" if sizes else "n/a"),
        (f"first tool result tokens (median, {how})", f"{median(tokens):.0f}" if tokens else "n/a"),
    ]


def _token_counter() -> tuple[Callable[[str], int], str]:
    """The embedded model's token count, or an estimate when its extra is not installed."""
    try:
        from coworkenv.agents.embedded import embedded_tokenizer

        tokenizer = embedded_tokenizer()
    except (ImportError, RuntimeError, OSError):
        return (lambda text: -(-len(text) // 4)), "estimated: 4 characters a token"
    return (lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])), "embedded tokenizer"


def domains_used(bank: str | Path) -> Counter[str]:
    """Environments per declared service (the catalogue's domains) in the bank."""
    return Counter(name for spec, _ in load_bank(bank) for name in spec.declared_services or {})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bank")
    ap.add_argument("--min-envs", type=int, default=20, help="flag tools fewer environments than this use")
    ap.add_argument("--token-sample", type=int, default=200, help="environments whose first tool result is measured")
    args = ap.parse_args()
    console = Console()
    try:
        manifest = read_manifest(args.bank)
        tallies = measure(args.bank)
        workspace = workspace_rows(args.bank, args.token_sample)
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
    for figure, value in workspace:
        console.print(f"{figure}: {value}")
    domains = domains_used(args.bank)
    console.print(f"domains used: {len(domains)} ({', '.join(f'{d}: {n}' for d, n in domains.most_common())})")
    jobs = manifest["jobs"]
    first = manifest["repair_rounds"].get("0", 0)
    console.print(
        f"yield {manifest['yield']:.1%} (first try {first / jobs:.1%}) over {jobs} jobs" if jobs else "no jobs"
    )


if __name__ == "__main__":
    main()
