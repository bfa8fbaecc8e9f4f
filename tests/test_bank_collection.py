"""A bank job runs with the cyclic garbage collector paused and leaves none of its own garbage behind."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from coworkenv.bank import runners
from coworkenv.bank.jobs import BankConfig
from coworkenv.bank.runners import FULL_COLLECTION_JOBS, JobFailed, run_named
from coworkenv.runtime import Environment

CONFIG = BankConfig(n=4, seed=3)


@pytest.fixture
def collections() -> Iterator[list[tuple[int, int]]]:
    """(generation, objects freed) of every collection, in order, with the collector on as a test expects it."""
    seen: list[tuple[int, int]] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            seen.append((info["generation"], info["collected"]))

    assert gc.isenabled()
    gc.collect()
    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        gc.enable()


def _environments() -> set[int]:
    return {id(o) for o in gc.get_objects() if isinstance(o, Environment)}


def test_a_job_collects_once_at_its_end_and_leaves_none_of_its_episodes(collections: list[tuple[int, int]]) -> None:
    """A real job (a realistic workspace, its probe runs) makes environments that hold cycles; none is collected
    while it runs, and every one it made is gone after the collection that ends it."""
    before = _environments()
    gc.collect()  # the test's own allocations do not reach a collection before the job pauses it
    collections.clear()
    entry = run_named(CONFIG, 0)
    assert entry["status"] == "admitted"
    [(generation, freed)] = collections
    assert generation == 1 and freed > 0, "one collection of the young generations, at the end"
    assert gc.isenabled()
    assert _environments() <= before, "the job's environments were freed with it"


def test_the_old_generation_is_collected_every_so_many_jobs(collections: list[tuple[int, int]]) -> None:
    for _ in range(FULL_COLLECTION_JOBS):
        gc.collect(1)  # what that many jobs' ends count
    collections.clear()  # (and none of these allocations reaches a collection of its own)
    run_named(CONFIG, 1)
    assert [g for g, _ in collections] == [2]
    collections.clear()
    run_named(CONFIG, 1)
    assert [g for g, _ in collections] == [1], "the count starts over"


def test_a_failing_job_turns_the_collector_back_on(
    collections: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(config: BankConfig, index: int) -> runners.Entry:
        raise ValueError("a broken blueprint")

    monkeypatch.setattr(runners, "run_job", broken)
    with pytest.raises(JobFailed, match=r"job 2 \(seed 3\) failed: ValueError"):
        run_named(CONFIG, 2)
    assert gc.isenabled() and [g for g, _ in collections] == [1]


def test_a_caller_that_turned_collection_off_keeps_it_off(collections: list[tuple[int, int]]) -> None:
    gc.disable()
    run_named(CONFIG, 1)
    assert not gc.isenabled() and collections == [], "the caller's choice stands: no collection, none turned on"
    assert gc.collect() > 0, "the job's garbage waits for the caller's own collection"
