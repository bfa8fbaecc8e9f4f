"""The rollout's process pool: spawned workers write what forked ones and one process write, a chunk that raises
or a worker that dies stops the run after handing on what finished, chunks stay within the window, and a driver
that stops early leaves no worker behind."""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path
from typing import Any

import pytest

from coworkenv.bank.sources import load_specs
from coworkenv.rollout import pool, rollout_bank, worker
from coworkenv.rollout.runner import RolloutError, chunked, tasks_of
from coworkenv.rollout.store import outcomes_of

EXAMPLES = Path(__file__).parent.parent / "examples"
SPECS = load_specs(EXAMPLES)[:4]
PLANNED = [f"{s.id}#{k}" for s in SPECS for k in range(4)]


def untimed(run: Path) -> list[str]:
    out = []
    for line in (run / "episodes.jsonl").read_text().splitlines():
        data = json.loads(line)
        data["seconds"] = data["trajectory"]["seconds"] = None
        out.append(json.dumps(data, sort_keys=True))
    return out


def test_spawned_workers_write_what_one_process_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "start_method", lambda policy: "spawn")
    sent: list[Any] = []
    real = pool.Worker.send
    outstanding: list[int] = []

    def send(self: pool.Worker, i: int, item: Any) -> None:
        sent.append(item)
        real(self, i, item)
        outstanding.append(len(self.sent))

    monkeypatch.setattr(pool.Worker, "send", send)
    rollout_bank(SPECS, "oracle", 3, tmp_path / "spawned", workers=2, chunk_size=2, progress=False)
    rollout_bank(SPECS, "oracle", 3, tmp_path / "inline", progress=False)
    assert sent and all(isinstance(item, list) for item in sent)  # a spawned worker gets the chunk itself
    assert max(outstanding) == 1, "one at a time: a chunk sent ahead could hold the driver in send"
    assert untimed(tmp_path / "spawned") == untimed(tmp_path / "inline")


def test_a_chunk_that_raises_in_a_worker_stops_the_run_after_what_finished_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool, "start_method", lambda policy: "fork")
    real = worker.run_tasks

    def fail_on_the_third(tasks: Any, *args: Any) -> Any:
        if tasks[0].sample == 2 and tasks[0].spec["id"] == SPECS[0].id:  # chunk 1: the worker's (it gets 0 and 1)
            raise MemoryError("out of memory in a worker")
        return real(tasks, *args)

    monkeypatch.setattr(worker, "run_tasks", fail_on_the_third)  # forked workers inherit it; the driver plays on
    with pytest.raises(RolloutError, match="MemoryError: out of memory in a worker"):
        rollout_bank(SPECS, "oracle", 4, tmp_path, workers=2, chunk_size=2, progress=False)
    keys = _stored_keys(tmp_path)
    assert keys == sorted(keys, key=PLANNED.index), "what finished is handed on in chunk order"
    assert f"{SPECS[0].id}#2" not in keys and f"{SPECS[0].id}#3" not in keys
    assert f"{SPECS[0].id}#0" in keys, "the chunk its worker finished just before is kept"
    assert not list(tmp_path.glob(".spool-*"))


def test_a_chunk_that_raises_in_the_driver_stops_the_run_after_what_finished_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool, "start_method", lambda policy: "fork")

    def fail_on_its_first(tasks: Any, *args: Any) -> Any:
        time.sleep(0.5)  # the worker is done with its two chunks meanwhile: their answers wait in its pipe
        raise MemoryError("out of memory in the driver")

    monkeypatch.setattr(pool, "run_tasks", fail_on_its_first)  # the driver's episodes only
    with pytest.raises(RolloutError, match="MemoryError: out of memory in the driver"):
        rollout_bank(SPECS, "oracle", 4, tmp_path, workers=2, chunk_size=2, progress=False)
    assert _stored_keys(tmp_path) == PLANNED[:4], "the worker's chunks (0 and 1) are kept; the driver's (2) is not"
    assert not list(tmp_path.glob(".spool-*"))


def test_a_scripted_pool_of_n_plays_in_the_driver_and_n_minus_1_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool, "start_method", lambda policy: "fork")
    played: list[str] = []
    real = pool.run_tasks

    def watched(tasks: Any, *args: Any) -> Any:
        played.extend(t.key for t in tasks)
        return real(tasks, *args)

    monkeypatch.setattr(pool, "run_tasks", watched)
    tasks = tasks_of([s.model_dump(mode="json") for s in SPECS], 20, 0)
    with pool.Pool(chunked(tasks, 4), "oracle", {}, worker.RunOptions(), 3, worker.SpecCache(), tmp_path) as p:
        assert len(p.workers) == 2 and len(multiprocessing.active_children()) == 2
        out = list(p.batches())
    assert [o.key for batch in out for o in outcomes_of(batch)] == [t.key for t in tasks]
    mine = [batch for batch in out if isinstance(batch, list)]
    assert mine and played == [o.key for batch in mine for o in outcomes_of(batch)], "the driver played those"
    assert len(played) < len(tasks), "and the workers the rest"


def test_a_model_pool_of_n_is_n_workers(tmp_path: Path) -> None:
    running = pool.Pool([], "hf:tiny", {}, worker.RunOptions(), 2, worker.SpecCache(), tmp_path)
    assert not running.plays and running.method == "spawn", "a model's driver only feeds its workers"


def _stored_keys(run: Path) -> list[str]:
    return [json.loads(line)["key"] for line in (run / "episodes.jsonl").read_text().splitlines()]


def test_chunks_out_stay_within_the_window_and_every_worker_has_its_next_one_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool, "start_method", lambda policy: "fork")
    tasks = tasks_of([s.model_dump(mode="json") for s in SPECS], 20, 0)
    chunks = chunked(tasks, 1)
    seen: list[tuple[bool, int, int]] = []
    real = pool.Pool.top_up

    def watched(self: pool.Pool) -> None:
        real(self)
        unsent = self.next_sent < len(self.chunks)
        seen.append((unsent, self.next_sent - self.next_out, min(len(w.sent) for w in self.workers)))

    monkeypatch.setattr(pool.Pool, "top_up", watched)
    real_run = worker.run_tasks

    def first_one_slow(tasks: Any, *args: Any) -> Any:
        if tasks[0] is chunks[0][0]:
            time.sleep(1.0)  # the other worker runs on until the window stops it
        return real_run(tasks, *args)

    monkeypatch.setattr(worker, "run_tasks", first_one_slow)
    known = worker.SpecCache()
    with pool.Pool(chunks, "oracle", {}, worker.RunOptions(), 2, known, tmp_path) as running:
        out = list(running.batches())
    assert [o.key for batch in out for o in _outcomes(batch)] == [t.key for t in tasks]
    window = max(4 * 2, 64)
    assert seen and max(ahead for _, ahead, _ in seen) <= window
    assert any(ahead == window for _, ahead, _ in seen), "the window is reached: the bound is what was tested"
    assert all(least >= 2 for unsent, ahead, least in seen if unsent and ahead < window), "one playing, one waiting"


def _outcomes(batch: Any) -> Any:
    return outcomes_of(batch)


def test_a_driver_that_stops_early_ends_its_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "start_method", lambda policy: "fork")
    tasks = tasks_of([s.model_dump(mode="json") for s in SPECS], 30, 0)
    running = pool.Pool(chunked(tasks, 2), "oracle", {}, worker.RunOptions(), 2, worker.SpecCache(), tmp_path)
    with pytest.raises(KeyboardInterrupt), running:
        next(running.batches())
        assert len(multiprocessing.active_children()) == 1, "the driver and one worker play"
        raise KeyboardInterrupt
    assert not multiprocessing.active_children()
    assert worker._CHUNKS == []


def test_workers_told_to_exit_are_waited_for_when_the_pool_is_left(tmp_path: Path) -> None:
    tasks = tasks_of([s.model_dump(mode="json") for s in SPECS], 3, 0)
    with pool.Pool(chunked(tasks, 2), "oracle", {}, worker.RunOptions(), 2, worker.SpecCache(), tmp_path) as p:
        batches = list(p.batches())
        assert p.finished
    assert [o.key for b in batches for o in outcomes_of(b)] == [t.key for t in tasks]
    assert all(w.process.exitcode == 0 for w in p.workers), "they exited on their own, not terminated"
