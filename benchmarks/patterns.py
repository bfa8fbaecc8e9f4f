"""Why field_matches runs patterns on RE2, not Python's ``re``: the cost of one search, in figures.

Times one search of a typical check pattern over a typical record text (a ticket description)
with both engines, and a catastrophic pattern (``(a+)+$``) over ``n`` letters and a '!' for
growing ``n``: ``re`` doubles its time with every letter (it is stopped at ``--max-re-n``),
RE2 stays linear. Prints medians of ``--repeat`` runs and the ratios.

    python benchmarks/patterns.py [--repeat 7] [--max-re-n 22]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from coworkenv.patterns import pattern_search

TEXT = "Cracked screen. IT in #it-requests wrote: Replacement approved (quoted at 1,299 USD). Loaner LT-4471. " * 3
PATTERN = r"\bLT-4471\b"
CATASTROPHIC = r"(a+)+$"


def median_seconds(fn: Callable[[], object], repeat: int, number: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--max-re-n", type=int, default=22)
    args = parser.parse_args()
    console = Console()
    typical_re2 = median_seconds(lambda: pattern_search(PATTERN, TEXT), args.repeat, 2000)
    compiled = re.compile(PATTERN, re.I)
    typical_re = median_seconds(lambda: compiled.search(TEXT), args.repeat, 2000)
    console.print(
        f"typical search ({len(TEXT)} characters): RE2 {typical_re2 * 1e6:.1f} µs, re {typical_re * 1e6:.1f} µs "
        f"(RE2 / re ×{typical_re2 / typical_re:.2f})"
    )
    table = Table(title=f"{CATASTROPHIC} over n letters and a '!' (median seconds)")
    for column in ("n", "re", "RE2"):
        table.add_column(column, justify="right")
    catastrophic = re.compile(CATASTROPHIC)
    for n in (16, 20, args.max_re_n, 1_000, 50_000):
        text = "a" * n + "!"
        slow = "-" if n > args.max_re_n else f"{median_seconds(lambda t=text: catastrophic.search(t), 3, 1):.4f}"
        fast = median_seconds(lambda t=text: pattern_search(CATASTROPHIC, t), args.repeat, 10)
        table.add_row(f"{n:,}", slow, f"{fast:.6f}")
    console.print(table)


if __name__ == "__main__":
    main()
