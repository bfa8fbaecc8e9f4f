"""A bank job runs with the cyclic garbage collector paused and leaves no garbage behind it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from coworkenv.bank import runners
from coworkenv.bank.jobs import BankConfig
from coworkenv.bank.runners import JobFailed, run_named

CONFIG = BankConfig(n=4, seed=3)


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generation of every collection that starts, in order, with the collector on as a test expects it."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    assert gc.isenabled()
    gc.collect()
    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        gc.enable()


def test_a_job_collects_once_at_its_end_and_leaves_no_garbage(collections: list[int]) -> None:
    """A real job (a realistic workspace, its probe runs) makes cycles; none is collected while it runs, all
    are once it is done: a full collection right after finds nothing of it."""
    entry = run_named(CONFIG, 0)
    assert entry["status"] == "admitted"
    assert collections == [1], "one collection of the young generations, at the end"
    assert gc.isenabled()
    assert gc.collect() == 0, "the job's cycles were freed with it"


def test_a_failing_job_turns_the_collector_back_on(collections: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(config: BankConfig, index: int) -> runners.Entry:
        raise ValueError("a broken blueprint")

    monkeypatch.setattr(runners, "run_job", broken)
    with pytest.raises(JobFailed, match=r"job 2 \(seed 3\) failed: ValueError"):
        run_named(CONFIG, 2)
    assert gc.isenabled() and collections == [1]


def test_a_caller_that_turned_collection_off_keeps_it_off(collections: list[int]) -> None:
    gc.disable()
    run_named(CONFIG, 1)
    assert not gc.isenabled() and collections == [], "the caller's choice stands: no collection, none turned on"
    assert gc.collect() > 0, "the job's garbage waits for the caller's own collection"
