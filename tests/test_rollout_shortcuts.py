"""The rollout's shortcuts, each attacked: a reused environment plays as a fresh one, the pool writes in task
order and hands on what finished when a worker dies, fsync batches without losing a line, the episode-wide
deadline ends the same episodes, the summary needs no re-read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from coworkenv.agents import OracleTeacher
from coworkenv.bank.sources import load_specs
from coworkenv.rollout import RolloutStore, RunOptions, rollout_bank, worker
from coworkenv.rollout import store as store_module
from coworkenv.rollout.deadline import Deadline, EpisodeTimeout
from coworkenv.rollout.runner import plan_tasks
from coworkenv.rollout.store import SyncPolicy, counts
from coworkenv.rollout.worker import EpisodeTask, SpecCache, SpecEpisodes, run_task, run_tasks
from rollout_specs import mail_reply_spec, write_specs
from test_rollout_hostile import Scripted, _children

TESTS = Path(__file__).parent
EXAMPLES = load_specs(TESTS.parent / "examples")
SPECS = [mail_reply_spec(i) for i in range(6)]


def _lines(encoded: list[Any]) -> list[str]:
    """Store lines without their timing fields."""
    out = []
    for e in encoded:
        data = json.loads(e.line)
        data["seconds"] = None
        if data["trajectory"]:
            data["trajectory"]["seconds"] = None
        out.append(json.dumps(data, sort_keys=True))
    return out


def test_a_reused_environment_plays_every_sample_as_a_fresh_one() -> None:
    """Seeded random faults make each sample differ: a reseeded, reset environment must replay them exactly."""
    options = RunOptions(fault_rate=0.4)
    tasks = plan_tasks(EXAMPLES[:4], 4, seed=3)
    reused = run_tasks(tasks, OracleTeacher(), options)
    fresh = [run_task(task, OracleTeacher(), options) for task in tasks]
    assert _lines(reused) == _lines(fresh)
    assert len({line for line in _lines(fresh)}) == len(tasks)


def test_an_episode_that_raised_leaves_its_environment_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    episodes = SpecEpisodes(EXAMPLES[0], RunOptions())
    task = EpisodeTask(EXAMPLES[0].model_dump(mode="json"), 0, 0)
    first = episodes.run(task, OracleTeacher())
    broken = episodes.env
    assert broken is not None
    monkeypatch.setattr(broken, "step", lambda turn: (_ for _ in ()).throw(RuntimeError("boom")))
    failed = episodes.run(task, OracleTeacher())
    assert failed.outcome.status == "error" and episodes.env is None
    again = episodes.run(task, OracleTeacher())
    assert episodes.env is not broken and _lines([again]) == _lines([first])


def test_the_spec_cache_knows_a_spec_by_its_data_not_its_id() -> None:
    cache = SpecCache()
    one, other = SPECS[0].model_dump(mode="json"), SPECS[1].model_dump(mode="json")
    other["id"] = one["id"]
    first = cache.get(EpisodeTask(one, 0, 0), RunOptions())
    assert cache.get(EpisodeTask(dict(one), 1, 1), RunOptions()) is first  # equal data: the same environment
    changed = cache.get(EpisodeTask(other, 0, 0), RunOptions())
    assert changed is not first and changed.spec.title != first.spec.title
    assert cache.get(EpisodeTask(one, 0, 0), RunOptions(max_turns=3)) is not first  # other options: its own


def test_the_pool_writes_lines_in_task_order(tmp_path: Path) -> None:
    inline = rollout_bank(SPECS, "oracle", 3, tmp_path / "inline", progress=False)
    pooled = rollout_bank(SPECS, "oracle", 3, tmp_path / "pool", workers=2, chunk_size=1, progress=False)
    keys = [
        [json.loads(x)["key"] for x in (tmp_path / run / "episodes.jsonl").read_text().splitlines()]
        for run in ("inline", "pool")
    ]
    assert keys[0] == keys[1] == [f"{s.id}#{k}" for s in SPECS for k in range(3)]
    assert inline.counts == pooled.counts


def test_fsync_runs_once_a_second_and_at_the_end_not_per_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real(fd))[1])
    start = time.monotonic()
    rollout_bank(SPECS, "oracle", 2, tmp_path, chunk_size=1, progress=False)
    episodes = [p for p in synced if p.endswith("episodes.jsonl")]
    assert 1 <= len(episodes) <= 1 + (time.monotonic() - start), "12 batches: one fsync a second, one at the end"
    synced.clear()
    store = RolloutStore(tmp_path / "every", sync=SyncPolicy(interval=0.0))
    store.open({})
    rollout_line = (tmp_path / "episodes.jsonl").read_text().splitlines()[0]
    for _ in range(3):
        store.append([store_module.Encoded(rollout_line.encode(), store_module.Outcome("k", "s", 0, "ok", 1.0, True))])
    assert len([p for p in synced if p.endswith("episodes.jsonl")]) == 3


def test_the_summary_is_what_rereading_the_store_gives(tmp_path: Path) -> None:
    first = rollout_bank(SPECS[:3], Scripted([RuntimeError("down")], "flaky"), 2, tmp_path, progress=False)
    assert first.counts == counts(RolloutStore(tmp_path).records())
    second = rollout_bank(SPECS, Scripted([], "flaky"), 3, tmp_path, progress=False)  # retries, new samples, new specs
    assert second.counts == counts(RolloutStore(tmp_path).records()) and second.counts["episodes"] == 18
    assert json.loads((tmp_path / "manifest.json").read_text())["by_status"] == second.counts["by_status"]


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
def test_an_episode_wide_deadline_spent_between_calls_stops_the_next_call() -> None:
    def outer(signum: int, frame: Any) -> None:
        raise AssertionError("the alarm reached the outer handler")

    previous = signal.signal(signal.SIGALRM, outer)
    try:
        with Deadline(lambda *a: "ok", 0.05, "quick") as deadline:
            assert deadline.act([], []) == "ok"
            time.sleep(0.1)  # the environment stepping: the alarm comes here and must not raise
            assert deadline.expired
            with pytest.raises(EpisodeTimeout):
                deadline.act([], [])
        assert signal.getsignal(signal.SIGALRM) is outer
        with Deadline(lambda *a: time.sleep(2), 0.05, "slow") as slow:
            start = time.monotonic()
            with pytest.raises(EpisodeTimeout, match="interrupted"):
                slow.act([], [])
            assert time.monotonic() - start < 1 and slow.expired
        assert signal.getsignal(signal.SIGALRM) is outer
    finally:
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the workers in /proc")
def test_a_worker_killed_mid_run_loses_nothing_reported_and_the_command_fails(tmp_path: Path) -> None:
    bank = write_specs(tmp_path / "specs", SPECS)
    out = tmp_path / "run"
    episodes = out / "episodes.jsonl"
    args = ["rollout", "--bank", str(bank), "--policy", "oracle", "--samples", "150", "--out", str(out), "-w", "2"]
    script = "import sys; from coworkenv.cli import app; app(sys.argv[1:])"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)])}
    command = [sys.executable, "-c", script, *args]
    driver = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not episodes.exists() or episodes.stat().st_size == 0):
            time.sleep(0.02)
        workers = _children(driver.pid)
        assert workers, "the pool's workers should be running"
        before = len(episodes.read_bytes().splitlines())
        os.kill(workers[0], signal.SIGKILL)
        output, _ = driver.communicate(timeout=60)
    finally:
        driver.kill()
    assert driver.returncode == 2, output.decode()
    assert "a worker process died" in output.decode()
    lines = episodes.read_bytes().splitlines()
    assert before <= len(lines) < 900, "what was written stays, and the run stopped"
    keys = [json.loads(line)["key"] for line in lines]  # every line whole
    planned = [f"{s.id}#{k}" for s in SPECS for k in range(150)]
    assert len(keys) == len(set(keys)) and set(keys) <= set(planned)
    assert keys[:before] == planned[:before], "written in task order until the failure"
    assert not list(out.glob(".spool-*")), "the failed run's spool folder is removed with it"
    resumed = subprocess.run(command, env=env, capture_output=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout.decode() + resumed.stderr.decode()
    assert len(list(RolloutStore(out).records())) == 900


class _Counted(dict):  # type: ignore[type-arg]
    """A spec's data that counts how often it is compared."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return dict.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]


def test_the_spec_cache_compares_a_chunks_copy_of_a_spec_once() -> None:
    cache = SpecCache()
    data = SPECS[0].model_dump(mode="json")
    first = cache.get(EpisodeTask(data, 0, 0), RunOptions())
    copy = _Counted(data)  # what a worker unpickles: equal data, another object, shared by the chunk's tasks
    _Counted.compared = 0
    assert all(cache.get(EpisodeTask(copy, k, k), RunOptions()) is first for k in range(5))
    assert _Counted.compared <= 1  # the first task of the chunk compares; the rest are known by identity
    changed = {**data, "title": "another"}
    assert cache.get(EpisodeTask(changed, 0, 0), RunOptions()) is not first  # still told apart by data


def test_a_run_given_validated_specs_validates_none_again_and_writes_the_same_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = plan_tasks(SPECS, 2, 0)
    slow = [_untimed_line(r.line) for r in run_tasks(tasks, OracleTeacher(), RunOptions(), SpecCache())]
    validated: list[Any] = []
    real = worker.TaskSpec.model_validate
    monkeypatch.setattr(worker.TaskSpec, "model_validate", lambda data: validated.append(data) or real(data))
    rollout_bank(SPECS, "oracle", 2, tmp_path / "inline", progress=False)
    assert not validated  # the specs given were validated when built: their dumps are not validated again
    lines = (tmp_path / "inline" / "episodes.jsonl").read_text().splitlines()
    assert [_untimed_line(x) for x in lines] == slow


def _untimed_line(line: str) -> str:
    data = json.loads(line)
    data["seconds"] = data["trajectory"]["seconds"] = None
    return json.dumps(data, sort_keys=True)


def test_forked_workers_take_chunks_by_index_and_write_what_one_process_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coworkenv.rollout import pool

    sent: list[Any] = []
    real = pool.Worker.send

    def send(self: Any, index: int, item: Any) -> None:
        sent.append(item)
        real(self, index, item)

    monkeypatch.setattr(pool.Worker, "send", send)
    monkeypatch.setattr(pool, "start_method", lambda policy: "fork")  # whatever threads earlier tests left
    rollout_bank(SPECS, "oracle", 3, tmp_path / "forked", workers=2, chunk_size=2, progress=False)
    assert sent and all(type(x) is int for x in sent)  # an index, not the chunk's tasks and their specs
    assert worker._CHUNKS == []  # let go of once the pool is done
    rollout_bank(SPECS, "oracle", 3, tmp_path / "inline", progress=False)
    lines = [(tmp_path / run / "episodes.jsonl").read_text().splitlines() for run in ("forked", "inline")]
    assert [_untimed_line(x) for x in lines[0]] == [_untimed_line(x) for x in lines[1]]
