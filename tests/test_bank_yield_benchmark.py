"""``benchmarks/bank_yield.py``: a small bank end to end, and the per-blueprint job costs it attributes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmark_modules import load_benchmark

SCRIPT = Path(__file__).parent.parent / "benchmarks" / "bank_yield.py"
BANK_YIELD = load_benchmark("bank_yield")


def test_job_costs_go_to_the_blueprint_of_each_job_in_journal_order(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    rows = [{"index": 0, "blueprint": "a"}, {"index": 1, "blueprint": "b"}, {"index": 2, "blueprint": "a"}]
    journal.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    costs = BANK_YIELD._job_costs(journal, [10.0, 10.5, 12.5, 13.0])  # the clock before job 0, then after each job
    assert costs == {"a": [0.5, 0.5], "b": [2.0]}
    resumed = BANK_YIELD._job_costs(journal, [20.0, 21.0])  # a kept bank resumed: only its last job ran now
    assert resumed == {"a": [1.0]}
    assert BANK_YIELD._job_costs(journal, [30.0]) == {}  # nothing ran: nothing to attribute


def test_a_small_bank_prints_yield_and_the_cost_of_every_blueprint(tmp_path: Path) -> None:
    command = [sys.executable, str(SCRIPT), "--n", "3", "--seed", "0", "--workspace", "small"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "admitted per CPU-second" in done.stdout and "ms a job" in done.stdout
    manifest_rows = [line for line in done.stdout.splitlines() if "of 1" in line]
    assert len(manifest_rows) == 3  # three jobs, three blueprints, each with its cost
    assert all(" %" in line for line in manifest_rows)
