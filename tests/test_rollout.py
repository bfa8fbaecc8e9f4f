"""Rollouts: process pool vs inline, timeouts, errors, lockstep batching, the CLI, resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coworkenv.cli import app
from coworkenv.rollout import RolloutStore, RunOptions, rollout_bank
from coworkenv.rollout.store import StoreMismatch
from coworkenv.runtime.turn import AssistantTurn
from rollout_specs import SlowOracle, mail_reply_spec, store_outcomes, write_specs

TESTS = Path(__file__).parent
SPECS = [mail_reply_spec(i) for i in range(6)]


def test_process_pool_matches_inline(tmp_path: Path) -> None:
    inline = rollout_bank(SPECS, "oracle", 2, tmp_path / "inline", progress=False)
    pooled = rollout_bank(SPECS, "oracle", 2, tmp_path / "pool", workers=2, chunk_size=3, progress=False)
    assert inline.ran == pooled.ran == 12 and inline.counts == pooled.counts
    assert inline.counts["passed"] == 12 and inline.counts["by_status"] == {"ok": 12}
    assert store_outcomes(tmp_path / "inline") == store_outcomes(tmp_path / "pool")
    assert sorted(store_outcomes(tmp_path / "pool")) == sorted(f"{s.id}#{k}" for s in SPECS for k in range(2))
    manifest = json.loads((tmp_path / "pool" / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["episodes"] == 12 and manifest["config"]["samples"] == 2


def test_max_turns_caps_episodes_below_the_spec_limit(tmp_path: Path) -> None:
    rollout_bank(SPECS[:2], "oracle", 1, tmp_path, options=RunOptions(max_turns=1), progress=False)
    records = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [len(r["trajectory"]["steps"]) for r in records] == [1, 1]
    assert {r["trajectory"]["done_reason"] for r in records} == {"max_turns"}
    assert not any(r["trajectory"]["grade"]["passed"] for r in records)


def test_rerun_skips_done_episodes_and_extends_samples(tmp_path: Path) -> None:
    rollout_bank(SPECS[:2], "oracle", 1, tmp_path, progress=False)
    again = rollout_bank(SPECS[:2], "oracle", 3, tmp_path, progress=False)
    assert (again.skipped, again.ran) == (2, 4)
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 6
    with pytest.raises(StoreMismatch, match="seed"):
        rollout_bank(SPECS[:2], "oracle", 3, tmp_path, seed=5, progress=False)


def test_timeout_keeps_the_partial_episode(tmp_path: Path) -> None:
    start = time.perf_counter()
    summary = rollout_bank(SPECS[:1], SlowOracle(0.3), 1, tmp_path, options=RunOptions(timeout=0.5), progress=False)
    assert time.perf_counter() - start < 3
    (record,) = RolloutStore(tmp_path).records()
    assert summary.counts["by_status"] == {"timeout": 1}
    assert record.status == "timeout" and record.error is not None and record.error.startswith("EpisodeTimeout")
    traj = record.trajectory
    assert traj is not None and traj.done_reason == "timeout" and 1 <= len(traj.steps) < 4 and not record.passed


class Swallowing:
    """Catches every Exception around a stalled call, as HTTP client libraries do."""

    name = "swallowing"

    def act(self, messages: list, tools: list) -> AssistantTurn:
        try:
            time.sleep(5)
        except Exception:
            return AssistantTurn(content="swallowed")
        return AssistantTurn(content="finished")


def test_timeout_interrupts_a_stalled_call_even_under_broad_excepts(tmp_path: Path) -> None:
    start = time.perf_counter()
    rollout_bank(SPECS[:1], Swallowing(), 1, tmp_path, options=RunOptions(timeout=0.3), progress=False)
    (record,) = RolloutStore(tmp_path).records()
    assert time.perf_counter() - start < 2
    assert record.status == "timeout" and record.trajectory is not None and record.trajectory.steps == []


class Crashing:
    name = "crashing"

    def act(self, messages: list, tools: list) -> AssistantTurn:
        raise ConnectionError("backend down")


def test_backend_errors_are_recorded_not_lost(tmp_path: Path) -> None:
    summary = rollout_bank(SPECS[:2], Crashing(), 1, tmp_path, progress=False)
    assert summary.counts["by_status"] == {"error": 2}
    record = next(RolloutStore(tmp_path).records())
    assert record.error == "ConnectionError: backend down"
    assert record.trajectory is not None and record.trajectory.done_reason == "policy_error"


def test_policy_objects_cannot_go_to_workers(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="spec string"):
        rollout_bank(SPECS, Crashing(), 1, tmp_path, workers=2, progress=False)


def test_batching_policy_plays_episodes_in_lockstep(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from coworkenv.agents.tiny import make_tiny_model, make_tiny_tokenizer
    from coworkenv.agents.transformers_policy import TransformersPolicy

    tok = make_tiny_tokenizer()
    policy = TransformersPolicy(make_tiny_model(tok), tok, max_new_tokens=6, name="tiny")
    calls: list[int] = []
    batch = policy.act_batch
    policy.act_batch = lambda items: calls.append(len(items)) or batch(items)  # type: ignore[method-assign]
    summary = rollout_bank(SPECS[:3], policy, 2, tmp_path, batch_size=4, progress=False)
    assert summary.ran == 6 and summary.counts["by_status"] == {"ok": 6}
    assert max(calls) == 4 and sum(calls) >= 6  # two lockstep chunks of 4 and 2 episodes
    record = next(RolloutStore(tmp_path).records())
    assert record.policy == "tiny" and record.trajectory is not None
    assert record.trajectory.usage["completion_tokens"] > 0


def test_cli_rollout_on_a_spec_folder(tmp_path: Path) -> None:
    bank = write_specs(tmp_path / "specs", SPECS[:3])
    result = CliRunner().invoke(
        app, ["rollout", "--bank", str(bank), "--out", str(tmp_path / "run"), "-k", "2", "--workers", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "6 episodes run" in result.output and len(list(RolloutStore(tmp_path / "run").records())) == 6


DRIVER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from rollout_specs import SlowOracle, mail_reply_spec
    from coworkenv.rollout import rollout_bank
    rollout_bank([mail_reply_spec(i) for i in range(20)], SlowOracle({delay}), 2, sys.argv[1], progress=False)
    """
)


def run_driver(out: Path, delay: float) -> subprocess.Popen[bytes]:
    code = DRIVER.format(tests=str(TESTS), delay=delay)
    return subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_resume_after_sigkill_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    episodes = tmp_path / "episodes.jsonl"
    proc = run_driver(tmp_path, delay=0.02)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not episodes.exists() or len(episodes.read_bytes().splitlines()) < 5):
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    before = episodes.read_bytes()
    done_before = len(before.splitlines())
    assert 5 <= done_before < 40, "the run should have been killed midway"
    with episodes.open("ab") as fh:  # a crash in the middle of a write leaves a torn line
        fh.write(b'{"key": "torn')
    proc = run_driver(tmp_path, delay=0.0)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    after = episodes.read_bytes()
    assert after.startswith(before), "finished episodes are kept as they were"
    keys = [json.loads(line)["key"] for line in after.splitlines()]
    assert len(keys) == len(set(keys)) == 40
    assert set(keys) == {f"{mail_reply_spec(i).id}#{k}" for i in range(20) for k in range(2)}
    assert all(r.status == "ok" and r.passed for r in RolloutStore(tmp_path).records())
    assert json.loads((tmp_path / "manifest.json").read_text())["status"] == "complete"


def test_spec_sources(tmp_path: Path) -> None:
    from coworkenv.bank.sources import load_specs

    folder = write_specs(tmp_path / "specs", [SPECS[1], SPECS[0]])
    assert [s.id for s in load_specs(folder)] == [SPECS[0].id, SPECS[1].id]
    assert [s.id for s in load_specs(folder / f"{SPECS[1].id}.yaml")] == [SPECS[1].id]
    with pytest.raises(ValueError, match="not a bank"):
        load_specs(folder, "heldout")
    (folder / "copy.yaml").write_text((folder / f"{SPECS[0].id}.yaml").read_text())
    with pytest.raises(ValueError, match="duplicate"):
        load_specs(folder)


class EpisodeTimeout(Exception):
    """A policy's own exception that merely shares the name of the rollout's timeout."""


class Impostor:
    name = "impostor"

    def act(self, messages: list, tools: list) -> AssistantTurn:
        raise EpisodeTimeout("not the deadline")


def test_an_error_named_like_a_timeout_is_not_a_timeout(tmp_path: Path) -> None:
    """A timeout is what the Deadline says, not what an error message starts with."""
    summary = rollout_bank(SPECS[:1], Impostor(), 1, tmp_path, options=RunOptions(timeout=30), progress=False)
    (record,) = RolloutStore(tmp_path).records()
    assert record.error is not None and record.error.startswith("EpisodeTimeout") and record.status == "error"
    assert summary.counts["by_status"] == {"error": 1}
    assert record.trajectory is not None and record.trajectory.done_reason == "policy_error"
