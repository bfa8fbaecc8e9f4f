"""Runtime cost as the workspace grows: a single-record read step, a search step, a write step,
reset, grade and the state hash, each timed on its own, at several workspace sizes.

The workspace (``workload.py``) spans every service with N records in each main
collection and checks of every state kind. Every operation is timed call by call, the sizes
taking turns over ``--rounds`` rounds (so a change in the machine's load reaches all of them);
the table gives per size the median and the spread (25th-75th percentile), and the ratio of
the largest size to the smallest.

Targets: write, reset, grade and state hash at the largest size within 2x of the smallest;
a read step <= 30 µs and a write step <= 80 µs at N=100.

With ``--interface`` the workspace's tools are shown under a drawn interface (other tool and argument names,
renamed result keys, reordered fields, ids in another form), the calls made by the names and ids it shows.

    python benchmarks/runtime.py [--records 10,100,1000,10000] [--repeat 300] [--rounds 3] [--json] [--interface]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table
from workload import READS, SEARCHES, WRITES, workload_spec

from coworkenv.runtime import AssistantTurn, Environment, ToolCall
from coworkenv.spec.interface import Interface
from coworkenv.synth.interfaces import draw_interface

OPS = ("read", "search", "write", "reset", "grade", "state_hash")
BUDGET_S = 1.5  # at most about this long timing one operation at one size
Call = tuple[str, dict[str, Any]]


def turn(call: Call, interface: Interface | None = None) -> AssistantTurn:
    """A model turn as it arrives: the arguments as JSON text, by the names (and ids) ``interface`` shows."""
    tool, args = call if interface is None else interface.render_call(*call)
    ids = interface.ids if interface is not None else None
    if ids is not None:  # the workload's arguments name records by id or are words no id style changes
        args = {k: ids.render(v) if isinstance(v, str) else v for k, v in args.items()}
    return AssistantTurn(tool_calls=[ToolCall(id="b1", name=tool, arguments=json.dumps(args))])


def timed(fn: Callable[[], Any]) -> float:
    """Microseconds for one call (the cyclic GC stays on: its collections are part of the real cost)."""
    start = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - start) / 1000.0


def sample(op: Callable[[int], float], repeat: int, budget_s: float = BUDGET_S) -> list[float]:
    """Time ``op(i)`` up to ``repeat`` times, fewer when one call is slow (about ``budget_s`` in all)."""
    first = op(0)
    n = max(5, min(repeat, int(budget_s * 1e6 / max(first, 1.0))))
    return [first, *(op(i) for i in range(1, n))]


class Bench:
    """The timed operations on one environment; untimed setup (resets, earlier writes) stays outside."""

    def __init__(self, n: int, interface: bool = False) -> None:
        spec = workload_spec(n)
        self.shown = draw_interface(spec, 0, "held_out") if interface else None
        self.env = Environment(spec.model_copy(update={"interface": self.shown}))
        for calls in (READS, SEARCHES, WRITES):  # a failing tool would time its error path
            self.env.reset()
            for call in calls:
                content = self.env.step(self.turn(call)).messages[0]["content"]
                assert not content.startswith('{"error"'), f"{call[0]} failed at N={n}: {content}"
        # The initial records' digests are made once per fixtures (on the first hash) and shared by every workspace
        # built from them: made here, untimed, or the first timed hash would cost a pass over the whole workspace
        # and, being slow, cut the state hash's samples at a large N to the minimum (a median of five).
        self.env.workspace.state_hash()

    def turn(self, call: Call) -> AssistantTurn:
        return turn(call, self.shown)

    def steps(self, calls: list[Call], refresh: int) -> Callable[[int], float]:
        turns = [self.turn(c) for c in calls]

        def op(i: int) -> float:
            if i % refresh == 0:  # so writes do not pile up
                self.env.reset()
            return timed(lambda: self.env.step(turns[i % len(turns)]))

        return op

    def after_writes(self, fn: Callable[[], Any]) -> Callable[[int], float]:
        """Time ``fn`` on a workspace three writes in (a reset has work to undo, grade has changes to see)."""

        def op(i: int) -> float:
            self.env.reset()
            for call in WRITES[i % 3 : i % 3 + 3]:
                self.env.step(self.turn(call))
            return timed(fn)

        return op

    def hash_after_write(self, i: int) -> float:
        if i % 20 == 0:
            self.env.reset()
        self.env.step(self.turn(WRITES[i % len(WRITES)]))
        return timed(self.env.workspace.state_hash)

    def run(self, repeat: int, budget_s: float = BUDGET_S) -> dict[str, list[float]]:
        return {
            "read": sample(self.steps(READS, 50), repeat, budget_s),
            "search": sample(self.steps(SEARCHES, 50), repeat, budget_s),
            "write": sample(self.steps(WRITES, len(WRITES)), repeat, budget_s),  # each write once per reset: none fails
            "reset": sample(self.after_writes(self.env.reset), repeat, budget_s),
            "grade": sample(self.after_writes(self.env.grade), repeat, budget_s),
            "state_hash": sample(self.hash_after_write, repeat, budget_s),
        }


def quartiles(xs: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(xs, n=4)
    return q[0], statistics.median(xs), q[2]


def table(stats: dict[int, dict[str, tuple[float, float, float]]]) -> Table:
    out = Table(title="runtime cost by workspace size: median µs [25th-75th percentile]")
    out.add_column("records per collection", justify="right")
    for op in OPS:
        out.add_column(op, justify="right")
    for n, row in stats.items():
        out.add_row(str(n), *(f"{row[op][1]:.1f} [{row[op][0]:.1f}-{row[op][2]:.1f}]" for op in OPS))
    sizes = list(stats)
    if len(sizes) > 1:
        lo, hi = stats[sizes[0]], stats[sizes[-1]]
        out.add_row(f"ratio {sizes[-1]}/{sizes[0]}", *(f"x{hi[op][1] / lo[op][1]:.2f}" for op in OPS))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", default="10,100,1000,10000", help="comma-separated records per collection")
    parser.add_argument("--repeat", type=int, default=300, help="timed calls per operation and size (at most)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line per size, no table")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds, each over every size in turn")
    parser.add_argument("--interface", action="store_true", help="the tools shown under a drawn interface")
    ns = parser.parse_args()
    benches = {n: Bench(n, ns.interface) for n in (int(s) for s in ns.records.split(",") if s.strip())}
    # Sizes take turns, a share of the calls each round: a change in the machine's load then reaches every size
    # alike, and the ratios between sizes stay meaningful on a shared machine.
    samples: dict[int, dict[str, list[float]]] = {n: {op: [] for op in OPS} for n in benches}
    rounds = max(1, ns.rounds)
    for _ in range(rounds):
        for n, bench in benches.items():
            for op, xs in bench.run(max(5, ns.repeat // rounds), BUDGET_S / rounds).items():
                samples[n][op].extend(xs)
    stats = {n: {op: quartiles(xs) for op, xs in ops.items()} for n, ops in samples.items()}
    if ns.json:
        for n, row in stats.items():
            print(json.dumps({"records": n, **{f"{op}_us": round(row[op][1], 2) for op in OPS}}), flush=True)
    if not ns.json:
        Console(width=max(140, Console().width)).print(table(stats))


if __name__ == "__main__":
    main()
