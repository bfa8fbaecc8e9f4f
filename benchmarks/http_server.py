"""HTTP step latency next to the in-process step.

Replays the oracle's turns of every hand-written example (so each step acts on real state)
through three front ends and times every step: the runtime ``Environment.step``, the typed
``coworkenv.make`` env (which also grades for the reward so far), and ``coworkenv serve
http`` on loopback through :class:`coworkenv.interop.client.EnvClient` (one keep-alive
connection, sequential). Prints median and p99 per front end and the ratios.

    python benchmarks/http_server.py [--rounds 30] [--examples examples]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from coworkenv.agents import OracleTeacher
from coworkenv.interop.catalog import Catalog
from coworkenv.interop.client import EnvClient
from coworkenv.interop.env import Env
from coworkenv.interop.http_server import create_app, running
from coworkenv.runtime import Environment, run_episode


def oracle_turns(catalog: Catalog) -> dict[str, list[dict[str, Any]]]:
    """Each example's assistant messages as the oracle played them."""
    out = {}
    for env_id in catalog.ids():
        traj = run_episode(Environment(catalog.get(env_id)), OracleTeacher())
        out[env_id] = [m for m in traj.messages if m["role"] == "assistant"]
    return out


def time_steps(open_env: Callable[[str], Any], turns: dict[str, list[dict[str, Any]]], rounds: int) -> list[float]:
    samples: list[float] = []
    for _ in range(rounds):
        for env_id, script in turns.items():
            env = open_env(env_id)
            env.reset()
            for turn in script:
                start = time.perf_counter()
                env.step(turn)
                samples.append(time.perf_counter() - start)
            if hasattr(env, "close"):
                env.close()
    return samples


def p99(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=100)[98]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--examples", type=Path, default=Path("examples"))
    args = parser.parse_args()
    catalog = Catalog.load([args.examples])
    turns = oracle_turns(catalog)
    results = {
        "runtime Environment.step": time_steps(lambda i: Environment(catalog.get(i)), turns, args.rounds),
        "coworkenv.make Env.step": time_steps(lambda i: Env(catalog.get(i)), turns, args.rounds),
    }
    with running(create_app(catalog)) as url:
        client = EnvClient(url)
        results["HTTP step (loopback)"] = time_steps(lambda i: client.make(i), turns, args.rounds)
    base = statistics.median(results["runtime Environment.step"])
    table = Table(title=f"step latency, {len(next(iter(results.values())))} steps each")
    for col in ("front end", "median µs", "p99 µs", "median / runtime"):
        table.add_column(col)
    for name, xs in results.items():
        med = statistics.median(xs)
        table.add_row(name, f"{med * 1e6:.0f}", f"{p99(xs) * 1e6:.0f}", f"{med / base:.1f}×")
    Console().print(table)


if __name__ == "__main__":
    main()
