"""``benchmarks/bank_instructions.py``: callgrind's count read, the warm-up subtracted, and loud failures."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from benchmark_modules import load_benchmark

SCRIPT = Path(__file__).parent.parent / "benchmarks" / "bank_instructions.py"


def _module() -> ModuleType:
    return load_benchmark("bank_instructions")


def test_the_count_is_the_last_one_callgrind_reports() -> None:
    stderr = "==12== Events : Ir\n==12== Collected : 1200\n==13== Collected : 3400\n==13== I refs: 3,400\n"
    assert _module().collected(stderr) == 3400
    with pytest.raises(RuntimeError, match="no instruction count"):
        _module().collected("valgrind: the 'python' program is not there")


def test_the_warm_up_bank_is_subtracted_per_job_and_per_admitted_environment() -> None:
    m = _module()
    cost = m.cost(m.Count(instructions=9_000, jobs=10, admitted=8), m.Count(instructions=1_000, jobs=2, admitted=2))
    assert (cost.per_job, cost.per_admitted) == (1_000.0, 8_000 / 6)
    with pytest.raises(RuntimeError, match="no admitted jobs"):
        m.cost(m.Count(instructions=9_000, jobs=10, admitted=2), m.Count(instructions=1_000, jobs=2, admitted=2))


def _script(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = None if path is None else {"PATH": path}
    command = [sys.executable, str(SCRIPT), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env, timeout=900)


def test_without_valgrind_it_says_so_and_fails(tmp_path: Path) -> None:
    done = _script("--n", "3", "--warm", "1", path=str(tmp_path))
    assert done.returncode != 0 and "valgrind is not on the PATH" in done.stderr


def test_a_warm_up_as_large_as_the_bank_is_refused() -> None:
    done = _script("--n", "5", "--warm", "5")
    assert done.returncode != 0 and "must be above --warm" in done.stderr


def test_an_against_that_is_no_checkout_is_refused(tmp_path: Path) -> None:
    done = _script("--n", "3", "--warm", "1", "--against", str(tmp_path))
    assert done.returncode != 0 and "no src/coworkenv there" in done.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_small_bank_is_counted() -> None:
    done = _script("--n", "2", "--warm", "1", "--seed", "0", "--workspace", "small")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "M per job" in done.stdout and "this" in done.stdout
