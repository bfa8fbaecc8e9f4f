"""Filling a bank with LLM jobs: concurrent requests, results taken strictly in job order.

Jobs run in blocks of ``BLOCK`` on a thread pool (the work is waiting on the endpoint);
the prompt's "write something different" list of job ``i`` comes from the environments
admitted before its block began, and the near-duplicate test runs in job order as results
are written, so neither the concurrency nor where a run was killed changes a byte.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from coworkenv.bank.entry import Entry
from coworkenv.bank.jobs import BankConfig, run_job, split_of
from coworkenv.bank.llm.audit import write_audit
from coworkenv.bank.llm.client import EndpointError, LLMClient
from coworkenv.bank.llm.job import run_llm_job
from coworkenv.bank.llm.novelty import NEAR_DUPLICATE, common_workflows
from coworkenv.bank.llm.scenario import is_llm_job, sample_scenario
from coworkenv.bank.llm.stats import LLMTally

if TYPE_CHECKING:
    from coworkenv.bank.store import Tally

BLOCK = 32
"""Jobs per block; more requests in flight than this would not help."""
STALL = 64
"""This many LLM jobs rejected in a row stop the run: the model cannot do the task as asked."""


class GeneratorStalled(RuntimeError):
    """The model keeps failing admission: stop instead of paying for requests forever."""


class Writer(Protocol):
    """The bank's in-order writer, as the model-driven build uses it."""

    config: BankConfig
    tally: Tally
    out: Path

    def add(self, entry: Entry) -> None: ...

    def flush(self, complete: bool = False) -> None: ...


def _novel(entry: Entry, tally: LLMTally) -> None:
    """Turn an admitted near-duplicate of a banked environment into a rejection (recorded in its audit)."""
    if entry.get("status") != "admitted" or "sketch" not in entry:
        return
    hit = tally.near_duplicate_of(entry["sketch"], NEAR_DUPLICATE)
    decision = "novel" if hit is None else f"rejected: near-duplicate of {hit[0]} (similarity {hit[1]:.2f})"
    entry["audit"]["novelty"] = decision
    if hit is not None:
        entry.pop("line")
        entry["status"] = "rejected"
        entry["final"] = ["near_duplicate"]
        entry["reasons"] = [*entry["reasons"], "near_duplicate"]


def fill_with_llm(
    writer: Writer, client: LLMClient, n: int, concurrency: int, on_progress: Callable[[int, int], None] | None
) -> None:
    """Run jobs until ``n`` are admitted; ``writer`` is the bank's in-order writer."""
    config, tally, out = writer.config, writer.tally, Path(writer.out)

    stop = threading.Event()

    def job(index: int, avoid: tuple[str, ...]) -> Entry:
        if not is_llm_job(config.seed, index, config.llm_share):
            return run_job(config, index)
        if stop.is_set():  # the endpoint failed another job: no more requests
            raise EndpointError("stopped after an endpoint failure")
        split = split_of(sample_scenario(config.seed, index).label, config.held_out)
        try:
            return run_llm_job(client, config, index, avoid, split)
        except EndpointError:
            stop.set()
            raise

    pool = ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="llm-synth")
    try:
        while tally.admitted < n:
            start = tally.jobs
            block = start - start % BLOCK
            avoid = common_workflows(tally.llm.workflows_before(block))
            for entry in pool.map(lambda i, a=avoid: job(i, a), range(start, block + BLOCK)):
                _novel(entry, tally.llm)
                audit = entry.pop("audit", None)
                if audit is not None:
                    write_audit(out, entry["index"], audit)
                writer.add(entry)
                writer.flush()
                if on_progress is not None:
                    on_progress(tally.admitted, tally.jobs)
                if tally.llm.streak >= STALL:
                    top = ", ".join(k for k, _ in tally.reasons.most_common(3))
                    raise GeneratorStalled(
                        f"the last {tally.llm.streak} LLM jobs were all rejected (most common findings: {top}); "
                        f"see {out / 'audit'}"
                    )
                if tally.admitted >= n:
                    break
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
