"""Loud failures: episodes that errored are counted, shown, and fail the command past a threshold.

A dead or mistyped endpoint makes every episode an ``error``; without this a run would print
plausible-looking scores and exit 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import typer
from rich.console import Console
from rich.markup import escape

MAX_ERROR_RATE = typer.Option(
    0.0, "--max-error-rate", min=0.0, max=1.0, help="fail (exit 1) when more than this share of episodes errored"
)


def top_errors(errors: Iterable[str | None], n: int = 3) -> list[tuple[str, int]]:
    """The ``n`` most common error texts (first line, shortened) with their counts."""
    texts = [(e.splitlines() or [""])[0][:200] for e in errors if e is not None]
    return Counter(texts).most_common(n)


def check_error_rate(console: Console, errors: list[str | None], total: int, max_rate: float, what: str) -> None:
    """Print how many of ``total`` episodes errored and why; exit 1 when the share is above ``max_rate``."""
    failed = [e for e in errors if e is not None]
    if not failed:
        return
    rate = len(failed) / total if total else 1.0
    console.print(f"[red]{len(failed)} of {total} {what} ended in an error ({rate:.0%}):[/red]")
    for text, count in top_errors(failed):
        console.print(f"[red]  {count} x {escape(text)}[/red]")
    if rate > max_rate:
        console.print(f"[red]error rate {rate:.0%} is above --max-error-rate {max_rate:.0%}[/red]")
        raise typer.Exit(1)
