"""LLM synthesis against the tests' scripted OpenAI-protocol server: cost per admitted
environment, the repair loop's share, and the throughput of everything but the model.

The script is the tests' ten-job mix (valid specs; a vacuous check, a leaked fact, an
unsolvable reference and a rule-breaking reference, each fixed in the repair round;
garbage; truncated JSON; a 429 before success; a near-duplicate). One worker thread, so
the non-LLM rate (parsing, verification, programmatic repairs, transcripts for the repair
prompt, novelty, audit and bank writes) is per core: wall time minus time inside requests.
No real model runs here: the replies are scripted.

    python benchmarks/llm_synth.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from coworkenv.bank.llm.client import LLMClient
from coworkenv.bank.store import synthesize_bank
from llm_server import ScriptedServer
from test_llm_synth import CAPS, script


class TimedClient(LLMClient):
    """Counts the seconds spent waiting on the endpoint."""

    waited = 0.0

    def complete(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return super().complete(*args, **kwargs)
        finally:
            self.waited += time.perf_counter() - start


def once(out: Path) -> tuple[dict, float, float]:
    """(manifest, wall seconds, seconds inside requests) of one bank from the scripted mix."""
    with ScriptedServer(script()) as server:
        client = TimedClient(f"openai:scripted@{server.base_url}", backoff_base=0.01)
        start = time.perf_counter()
        manifest = synthesize_bank(out, 8, capabilities=CAPS, max_rounds=1, workers=1, llm=client)
        return manifest, time.perf_counter() - start, client.waited


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    once(Path(tempfile.mkdtemp()) / "warm")  # imports, caches
    runs = [once(Path(tempfile.mkdtemp()) / "bank") for _ in range(args.repeats)]
    m = runs[0][0]
    llm = m["llm"]
    local = statistics.median(wall - waited for _, wall, waited in runs)
    wall = statistics.median(w for _, w, _ in runs)
    table = Table(title=f"LLM synthesis, scripted endpoint (median of {args.repeats})")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name, value in (
        ("jobs / admitted / rejected", f"{m['jobs']} / {m['admitted']} / {m['rejected']}"),
        ("requests per admitted environment", f"{llm['requests_per_admitted']:.2f}"),
        ("admissions needing a model repair round", f"{llm['repair_share']:.0%}"),
        ("admissions by a programmatic repair", f"{llm['programmatic_share']:.0%}"),
        ("wall seconds per bank", f"{wall:.2f}"),
        ("non-LLM seconds per bank", f"{local:.2f}"),
        ("non-LLM jobs per second per core", f"{m['jobs'] / local:.1f}"),
        ("non-LLM admitted environments per second per core", f"{m['admitted'] / local:.1f}"),
    ):
        table.add_row(name, value)
    Console().print(table)


if __name__ == "__main__":
    main()
