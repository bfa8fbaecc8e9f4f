"""Workflow diversity of a bank: how many distinct workflows it holds, not how many environments.

Prints, per generator (blueprints, composed) and overall, the figures of
:mod:`coworkenv.bank.diversity` (which ``coworkenv bank stats`` prints too): distinct reference tool
sequences and ordered tool sets, the built-in tools used and the rare ones, the spread of chain lengths,
the share crossing three or more services, the distinct tool interfaces, the domains used and the
workspace sizes; then the median tokens of the first tool result the reference gets (on the embedded
model's tokenizer where its extra is installed, else estimated at 4 characters a token) and the bank's
yield (first try and after repair):

    python benchmarks/diversity.py BANK [--min-envs 20] [--token-sample 200]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from coworkenv.bank.diversity import measure
from coworkenv.bank.store import BankError, load_bank, read_manifest


def first_result_tokens(bank: str | Path, sample: int) -> str:
    """The median tokens of the first tool result the reference gets, over the first ``sample`` environments."""
    from statistics import median

    from coworkenv.agents.oracle import OracleTeacher
    from coworkenv.runtime.environment import Environment
    from coworkenv.runtime.episode import run_episode

    count, how = _token_counter()
    tokens: list[int] = []
    for spec, _ in load_bank(bank):
        if len(tokens) >= sample:
            break
        messages = run_episode(Environment(spec), OracleTeacher()).messages
        first = next((m["content"] for m in messages if m.get("role") == "tool"), None)
        if isinstance(first, str):
            tokens.append(count(first))
    return f"first tool result tokens (median, {how}): {median(tokens):.0f}" if tokens else "no tool results"


def _token_counter() -> tuple[Callable[[str], int], str]:
    """The embedded model's token count, or an estimate when its extra is not installed."""
    try:
        from coworkenv.agents.embedded import embedded_tokenizer

        tokenizer = embedded_tokenizer()
    except (ImportError, RuntimeError, OSError):
        return (lambda text: -(-len(text) // 4)), "estimated: 4 characters a token"
    return (lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])), "embedded tokenizer"


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
        tokens = first_result_tokens(args.bank, args.token_sample)
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
    console.print(tokens)
    jobs = manifest["jobs"]
    first = manifest["repair_rounds"].get("0", 0)
    console.print(
        f"yield {manifest['yield']:.1%} (first try {first / jobs:.1%}) over {jobs} jobs" if jobs else "no jobs"
    )


if __name__ == "__main__":
    main()
