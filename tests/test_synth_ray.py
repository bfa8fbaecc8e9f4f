"""Bank synthesis on a local two-CPU Ray: the bytes of a local run, resumable after a kill, loud failures."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from itertools import count, islice
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coworkenv.bank import runners
from coworkenv.bank.runners import JobFailed, WorkerLost
from coworkenv.bank.store import BUILDS, read_builds, read_manifest, synthesize_bank
from coworkenv.cli import app
from coworkenv.cluster import ClusterError, actors, ordered_map

ray = pytest.importorskip("ray")

FAILING_SEED, FAILING_JOB = 13, 5


def _fail_one_job() -> None:
    """Run in every Ray worker process: job 5 of seed 13 raises there (and only there)."""
    import coworkenv.bank.runners as runners

    original = runners.run_job

    def run_job(config: runners.BankConfig, index: int) -> runners.Entry:
        if (config.seed, index) == (FAILING_SEED, FAILING_JOB):
            raise ValueError("a broken blueprint")
        return original(config, index)

    runners.run_job = run_job


class Sleeper:
    """An actor whose calls finish out of order (every third item is slow); item 7 fails."""

    def run(self, item: int) -> int:
        time.sleep(0.2 if item % 3 == 0 else 0.0)
        if item == 7:
            raise KeyError("item 7")
        return item * 10


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    if ray.is_initialized():  # an earlier test module's Ray (rollouts) has other settings
        ray.shutdown()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"worker_process_setup_hook": _fail_one_job},
    )
    yield
    ray.shutdown()


def _bank_bytes(bank: Path) -> dict[str, bytes]:
    """Every file of a bank but its build log (the one that depends on the machine)."""
    return {
        str(p.relative_to(bank)): p.read_bytes() for p in sorted(bank.rglob("*")) if p.is_file() and p.name != BUILDS
    }


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ordered_map_keeps_the_items_order(local_ray: None) -> None:
    with actors(Sleeper, 2) as handles:
        call = lambda actor, item: actor.run.remote(item)  # noqa: E731
        assert list(islice(ordered_map(handles, call, count()), 7)) == [i * 10 for i in range(7)]  # 7 unseen
        with pytest.raises(KeyError, match="item 7"):
            list(ordered_map(handles, call, range(10)))
        assert list(ordered_map(handles, call, [])) == []


def test_two_actors_build_the_bytes_of_a_local_run(local_ray: None, tmp_path: Path) -> None:
    synthesize_bank(tmp_path / "local", 30, seed=3)
    manifest = synthesize_bank(tmp_path / "ray", 30, seed=3, workers=2, ray_address="local")
    assert manifest["admitted"] == 30
    assert _bank_bytes(tmp_path / "ray") == _bank_bytes(tmp_path / "local")
    [build] = read_builds(tmp_path / "ray")
    assert (build["backend"], build["workers"], build["admitted"]) == ("ray", 2, 30)
    assert build["jobs"] == manifest["jobs"]
    assert 0 < build["rate"] < build["marginal_rate"] and build["per_worker_rate"] == pytest.approx(
        build["marginal_rate"] / 2, abs=0.01
    )
    assert [b["backend"] for b in read_builds(tmp_path / "local")] == ["inline"]


def test_a_killed_ray_build_resumes_to_the_local_bytes(local_ray: None, tmp_path: Path) -> None:
    bank, n = tmp_path / "bank", 200
    cmd = [sys.executable, "-c", "from coworkenv.cli import main; main()", "synth", "--n", str(n), "--seed", "8"]
    proc = subprocess.Popen(
        [*cmd, "--out", str(bank), "--ray", "local", "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    journal = bank / "journal.jsonl"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and journal.read_text().count("\n") >= 64:  # the first write of two workers' jobs
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not read_manifest(bank)["complete"], "the run finished before it could be killed"
    assert read_builds(bank) == []  # a killed run leaves no figures
    synthesize_bank(bank, n, seed=8, workers=2, ray_address="local")
    synthesize_bank(tmp_path / "local", n, seed=8)
    assert _bank_bytes(bank) == _bank_bytes(tmp_path / "local"), "no job lost, none twice, all in job order"
    [resumed] = read_builds(bank)
    assert resumed["backend"] == "ray" and 0 < resumed["jobs"] < read_manifest(bank)["jobs"]


def test_a_failing_job_stops_the_build_naming_it(local_ray: None, tmp_path: Path) -> None:
    with pytest.raises(JobFailed, match=rf"job {FAILING_JOB} \(seed {FAILING_SEED}\) failed: ValueError"):
        synthesize_bank(tmp_path / "api", 20, seed=FAILING_SEED, workers=2, ray_address="local")
    manifest = read_manifest(tmp_path / "api")
    assert not manifest["complete"] and manifest["jobs"] == FAILING_JOB  # every job before it, none from it on
    assert read_builds(tmp_path / "api")[0]["jobs"] == FAILING_JOB
    done = synthesize_bank(tmp_path / "short", 3, seed=FAILING_SEED, workers=2, ray_address="local")
    assert done["complete"] and done["jobs"] < FAILING_JOB, "a failure past the last job needed goes unseen"
    args = ["synth", "--n", "20", "--seed", str(FAILING_SEED), "--out", str(tmp_path / "cli"), "--ray", "local"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert f"job {FAILING_JOB} (seed {FAILING_SEED}) failed" in result.output


def test_more_actors_than_the_cluster_has_cpus_is_an_error_not_a_hang(
    local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runners, "STARTUP_TIMEOUT", 3.0)
    with pytest.raises(WorkerLost, match=r"3 Ray actors did not start within 3 s \(the cluster has 2 CPUs"):
        synthesize_bank(tmp_path / "bank", 5, workers=3, ray_address="local")
    assert read_builds(tmp_path / "bank") == [] and read_manifest(tmp_path / "bank")["jobs"] == 0


@pytest.mark.parametrize(
    ("address", "message"),
    [
        (f"127.0.0.1:{_closed_port()}", "cannot reach a Ray cluster at '127.0.0.1:"),
        ("ray://no-such-host.invalid:10001", "cannot reach a Ray cluster at 'ray://no-such-host.invalid:10001'"),
        ("somewhere", "expected local, auto, HOST:PORT or ray://HOST:PORT, got 'somewhere'"),
        ("host:99999", "expected local, auto"),
    ],
)
def test_a_bad_address_is_a_clear_error_before_anything_is_written(address: str, message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["synth", "--n", "5", "--out", str(tmp_path / "bank"), "--ray", address])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split()) and "Traceback" not in result.output
    assert not (tmp_path / "bank").exists()
    with pytest.raises(ClusterError, match=r"Ray cluster|expected local"):
        synthesize_bank(tmp_path / "api", 5, ray_address=address)
