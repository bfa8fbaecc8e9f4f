"""Rollouts under hostile policies and failures: every episode stored, errors retried on resume,
a bad policy reported once, no orphan workers after the driver is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from coworkenv.cli import app
from coworkenv.rollout import RolloutStore, RunOptions, rollout_bank
from rollout_specs import mail_reply_spec, write_specs
from test_hostile_input import ARGUMENT_TEXTS, CONTENTS

TESTS = Path(__file__).parent
SPECS = [mail_reply_spec(i) for i in range(3)]
TOOLS = ["mail_search", "mail_reply", "mail_read", "nope"]


class Scripted:
    """Plays a fixed list of turns (hostile ones among them), then raises or answers."""

    def __init__(self, turns: list[Any], name: str = "hostile") -> None:
        self.turns = turns
        self.name = name

    def for_task(self, spec: Any) -> Any:
        turns = iter(self.turns)

        class Run:
            def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
                turn = next(turns, {"role": "assistant", "content": "Done."})
                if isinstance(turn, Exception):
                    raise turn
                return turn

        return Run()


def _call(tool: str, arguments: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": tool, "arguments": arguments}}],
    }


hostile_turn = st.one_of(
    st.builds(_call, st.sampled_from(TOOLS), st.sampled_from(sorted(ARGUMENT_TEXTS.values()))),
    st.builds(lambda c: {"role": "assistant", "content": c}, st.sampled_from(sorted(CONTENTS.values()))),
    st.sampled_from([RuntimeError("backend down"), ValueError("bad \ud800"), KeyError("x")]),
    st.text(max_size=20),
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(hostile_turn, min_size=1, max_size=4))
def test_hostile_policy_never_aborts_a_batch_and_every_episode_is_stored(tmp_path: Path, turns: list[Any]) -> None:
    out = tmp_path / f"run{time.monotonic_ns()}"
    summary = rollout_bank(SPECS, Scripted(turns), 2, out, progress=False, options=RunOptions(timeout=None))
    records = list(RolloutStore(out).records())
    assert summary.ran == 6 and len(records) == 6
    assert {r.key for r in records} == {f"{s.id}#{k}" for s in SPECS for k in range(2)}
    assert all(r.status in ("ok", "error") for r in records)


def test_errored_episodes_are_retried_on_resume(tmp_path: Path) -> None:
    first = rollout_bank(SPECS, Scripted([RuntimeError("endpoint down")], "flaky"), 1, tmp_path, progress=False)
    assert first.counts["by_status"] == {"error": 3}
    second = rollout_bank(SPECS, Scripted([], "flaky"), 1, tmp_path, progress=False)
    assert second.ran == 3 and second.skipped == 0
    assert second.counts["by_status"] == {"ok": 3}
    assert [r.status for r in RolloutStore(tmp_path).records()] == ["ok"] * 3
    third = rollout_bank(SPECS, Scripted([], "flaky"), 1, tmp_path, progress=False)
    assert third.ran == 0 and third.skipped == 3


def test_a_policy_typo_is_one_clean_error_and_writes_nothing(tmp_path: Path) -> None:
    bank = write_specs(tmp_path / "specs", SPECS)
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["rollout", "--bank", str(bank), "--policy", "oracel", "--out", str(out), "--workers", "2"]
    )
    assert result.exit_code == 2
    assert "unknown policy or model 'oracel'" in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_a_policy_that_fails_to_load_in_workers_is_reported_once(tmp_path: Path) -> None:
    import pytest

    from coworkenv.rollout.runner import RolloutError

    with pytest.raises(RolloutError, match=r"cannot build policy 'oracle'.*takes no options"):
        rollout_bank(SPECS, "oracle", 1, tmp_path, workers=2, policy_options={"temperature": 0.5}, progress=False)


def test_bank_errors_and_resume_with_another_bank(tmp_path: Path) -> None:
    runner = CliRunner()
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.txt").write_text("x")
    for bank in (empty, tmp_path / "junk", tmp_path / "missing"):
        result = runner.invoke(app, ["rollout", "--bank", str(bank), "--out", str(tmp_path / "r"), "-w", "1"])
        assert result.exit_code == 2 and str(bank.name) in result.output, result.output
    a = write_specs(tmp_path / "a", SPECS[:2])
    b = write_specs(tmp_path / "b", [mail_reply_spec(i) for i in range(5, 8)])
    assert runner.invoke(app, ["rollout", "--bank", str(a), "--out", str(tmp_path / "run"), "-w", "1"]).exit_code == 0
    result = runner.invoke(app, ["rollout", "--bank", str(b), "--out", str(tmp_path / "run"), "-w", "1"])
    assert result.exit_code == 2 and "bank=" in result.output


def test_split_must_be_known(tmp_path: Path) -> None:
    from coworkenv.bank.sources import load_specs

    bank = write_specs(tmp_path / "specs", SPECS)
    try:
        load_specs(bank, "test")
    except ValueError as exc:
        assert "unknown split 'test'" in str(exc)
    else:
        raise AssertionError("--split test was accepted")


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_killing_the_driver_ends_its_workers(tmp_path: Path) -> None:
    if not Path("/proc").is_dir():
        return
    bank = write_specs(tmp_path / "specs", SPECS)
    script = textwrap.dedent(f"""
        from coworkenv.rollout import rollout_bank
        rollout_bank({str(bank)!r}, "oracle", 400, {str(tmp_path / "run")!r}, workers=3, chunk_size=1, progress=False)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)])}
    driver = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (tmp_path / "run" / "episodes.jsonl").exists():
            time.sleep(0.2)
        workers = _children(driver.pid)
        assert len(workers) >= 2, "a pool of 3 plays in the driver and 2 workers"
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        assert not any(_alive(w) for w in workers)
    finally:
        driver.kill()
    lines = (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()
    assert lines and json.loads(lines[0])["status"] == "ok"
