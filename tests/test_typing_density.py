"""``Any`` stays rare: each package holds at most its ceiling of the word (``benchmarks/typing_density.py``).

A ceiling is lowered when a package's seams get their types; a change that adds ``Any`` past one fails here
and says where, so the type goes in instead (``object``, a ``Mapping``, a Protocol, a TypedDict).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmark_modules import load_benchmark

CEILINGS = {
    "agents": 27,
    "bank": 12,
    "capabilities": 0,
    "commands": 10,
    "data": 5,
    "eval": 4,
    "expr": 7,
    "grading": 0,
    "interop": 50,
    "rollout": 17,
    "runtime": 19,
    "services": 13,
    "spec": 5,
    "synth": 131,
    "top-level": 21,
    "train": 17,
    "verify": 0,
}


DENSITY = load_benchmark("typing_density")


def test_every_package_has_a_ceiling() -> None:
    assert set(DENSITY.densities()) - {"all"} == set(CEILINGS)


@pytest.mark.parametrize("package", sorted(CEILINGS))
def test_any_stays_under_the_ceiling(package: str) -> None:
    found = DENSITY.densities()[package].anys
    assert found <= CEILINGS[package], f"{package}: {found} uses of Any, at most {CEILINGS[package]}"


def test_the_count_reads_words_not_names(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("from typing import Any\nx: Any\nAnyOf = 1\nCompany = 2\n")
    (tmp_path / "top.py").write_text("y = 1\n")
    found = DENSITY.densities(tmp_path)
    assert (found["pkg"].anys, found["pkg"].lines) == (2, 4)
    assert (found["top-level"].anys, found["all"].anys, found["all"].lines) == (0, 2, 5)
    assert found["pkg"].per_kloc == 500.0
