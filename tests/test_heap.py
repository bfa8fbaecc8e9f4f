"""The long-lived heap frozen out of the cyclic collector during batch jobs, and handed back after."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from coworkenv.bank.sources import load_specs
from coworkenv.heap import frozen_heap, rare_young_collections
from coworkenv.rollout import RolloutStore, rollout_bank
from coworkenv.rollout.store import Batch

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_frozen_only_inside_the_block_also_on_failure() -> None:
    before = gc.get_freeze_count()
    with frozen_heap():
        assert gc.get_freeze_count() > before
    assert gc.get_freeze_count() == before
    with pytest.raises(KeyError), frozen_heap():
        raise KeyError("a failing job")
    assert gc.get_freeze_count() == before


def test_a_callers_own_frozen_heap_stays_frozen() -> None:
    gc.freeze()
    try:
        with frozen_heap():
            pass
        assert gc.get_freeze_count() > 0, "the block must not unfreeze what the caller froze"
    finally:
        gc.unfreeze()


def test_a_rollout_runs_frozen_and_hands_the_heap_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    append = RolloutStore.append

    def counting(self: RolloutStore, records: Batch) -> None:
        seen.append(gc.get_freeze_count())
        append(self, records)

    monkeypatch.setattr(RolloutStore, "append", counting)
    before = gc.get_freeze_count()
    rollout_bank(load_specs(EXAMPLES)[:2], "oracle", 1, tmp_path / "run", progress=False)
    assert seen and all(n > before for n in seen)
    assert gc.get_freeze_count() == before


def test_a_pool_worker_freezes_what_it_starts_with() -> None:
    code = (
        "import gc; from coworkenv.rollout.worker import init_worker; "
        "init_worker('oracle', {}); print(gc.get_freeze_count())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) > 0


def test_young_collections_are_rare_only_inside_the_block() -> None:
    before = gc.get_threshold()
    with rare_young_collections(12_345):
        assert gc.get_threshold() == (12_345, *before[1:])
    assert gc.get_threshold() == before
    with pytest.raises(KeyError), rare_young_collections():
        raise KeyError("a failing job")
    assert gc.get_threshold() == before
