"""The HTTP environment server on a real uvicorn server on loopback, driven by the real client."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="needs the serve extra")
pytest.importorskip("uvicorn", reason="needs the serve extra")

from coworkenv.interop.catalog import Catalog
from coworkenv.interop.client import EnvClient, RemoteError
from coworkenv.interop.env import Env
from coworkenv.interop.http_server import check_binding, create_app, running
from coworkenv.interop.sessions import Limits
from coworkenv.rollout.policies import make_policy
from coworkenv.runtime import run_episode

EXAMPLES = Path(__file__).parent.parent / "examples"
N_EXAMPLES = len(list(EXAMPLES.glob("*.yaml")))
CATALOG = Catalog.load([EXAMPLES])
N_EXAMPLES = len(list(EXAMPLES.glob("*.yaml")))
EXTERNAL = "external_quote_confirmation"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with running(create_app(CATALOG, Limits(max_sessions=200, workers=8))) as base:
        yield base


def test_health_environments_and_openapi(url: str) -> None:
    client = EnvClient(url)
    assert client.health()["environments"] == len(CATALOG) == N_EXAMPLES
    listed = client.environments()
    assert [e["id"] for e in listed] == CATALOG.ids()
    assert "reference" not in listed[0] and "user" not in listed[0]
    paths = client.request("GET", "/openapi.json")["paths"]
    for path in ("/sessions", "/sessions/{sid}/step", "/sessions/{sid}/state", "/sessions/{sid}/grade"):
        assert path in paths


def test_oracle_episode_over_http_matches_local(url: str) -> None:
    oracle = make_policy("oracle")
    remote = EnvClient(url).make(EXTERNAL, seed=3)
    traj = run_episode(remote, oracle)
    local = run_episode(Env(CATALOG.get(EXTERNAL), seed=3), oracle)
    assert traj.grade == local.grade and traj.grade.score == 1.0
    assert traj.final_state_hash == local.final_state_hash
    assert remote.messages == local.messages == traj.messages
    assert remote.state()["state_hash"] == local.final_state_hash


def test_a_notes_stage_starts_the_remote_view_over(url: str) -> None:
    """The client keeps what the agent sees: after a notes stage begins, the system prompt and the notice only."""
    oracle = make_policy("oracle")
    remote = EnvClient(url).make("checkout_outage_postmortem")
    traj = run_episode(remote, oracle)
    env = Env(CATALOG.get("checkout_outage_postmortem"))
    local = run_episode(env, oracle)
    assert traj.grade == local.grade and traj.grade.score == 1.0 and len(traj.grade.stages) == 2
    assert remote.messages == env.messages and remote.messages[0]["role"] == "system"
    assert traj.messages == local.messages and len(traj.messages) > len(remote.messages)


def test_openai_tool_call_format_and_malformed_turns(url: str) -> None:
    env = EnvClient(url).make(EXTERNAL)
    call = {"id": "c1", "type": "function", "function": {"name": "contacts_search", "arguments": '{"query": "Kenji"}'}}
    obs = env.step({"role": "assistant", "content": "", "tool_calls": [call]})
    assert obs.step == 1 and not obs.done and "kenji" in obs.messages[0]["content"].lower()
    obs = env.step({"tool_calls": [{"function": {"name": "no_such_tool", "arguments": "{bad"}}]})
    assert "no_such_tool" in obs.messages[0]["content"] and not obs.done
    obs = env.step({"content": 7})
    assert "malformed" in obs.messages[0]["content"]
    assert 0.0 <= obs.reward < 0.75 and obs.info["done_reason"] == ""


def test_sessions_are_isolated_and_closed(url: str) -> None:
    client = EnvClient(url)
    a, b = client.make(EXTERNAL), client.make(EXTERNAL)
    send = {"name": "mail_send", "arguments": {"to": ["x@y.com"], "subject": "s", "body": "b"}}
    a.step({"tool_calls": [send]})
    assert a.state()["state_hash"] != b.state()["state_hash"]
    assert b.state()["diff"] == {} and a.state()["diff"]
    b.close()
    with pytest.raises(RemoteError) as err:
        b.step("hello")
    assert err.value.status == 404
    with pytest.raises(RemoteError) as err:
        client.make("nope")
    assert err.value.status == 404


def test_inline_spec_and_bad_spec(url: str) -> None:
    client = EnvClient(url)
    spec = CATALOG.get(EXTERNAL).model_copy(update={"id": "inline_copy"})
    env = client.make(spec=spec)
    assert env.spec.id == "inline_copy" and env.state()["env_id"] == "inline_copy"
    with pytest.raises(RemoteError) as err:
        client.request("POST", "/sessions", {"spec": {"id": "x"}})
    assert err.value.status == 422 and "request.spec" in str(err.value.detail)
    with pytest.raises(RemoteError) as err:
        client.request("POST", "/sessions", {})
    assert err.value.status == 422


def test_hundred_concurrent_sessions_have_no_cross_talk(url: str) -> None:
    """100 sessions step in parallel; each final state hash and grade equals the same episode run locally."""
    client = EnvClient(url)
    ids = CATALOG.ids()
    jobs = [(ids[i % len(ids)], i) for i in range(100)]
    oracle = make_policy("oracle")
    expected = {}
    for env_id in ids:
        local = run_episode(Env(CATALOG.get(env_id)), oracle)
        expected[env_id] = (local.final_state_hash, local.grade)

    def play(job: tuple[str, int]) -> tuple[str, str, object]:
        env = client.make(job[0], seed=0)
        traj = run_episode(env, oracle)
        state = env.state()["state_hash"]
        env.close()
        assert traj.final_state_hash == state
        return job[0], state, traj.grade

    with ThreadPoolExecutor(max_workers=100) as pool:
        results = list(pool.map(play, jobs))
    assert len(results) == 100
    for env_id, state, grade in results:
        assert (state, grade) == expected[env_id], env_id


def test_session_bound_expiry_and_step_time_limit() -> None:
    limits = Limits(max_sessions=2, idle_ttl=0.3, step_timeout=0.05)
    app = create_app(CATALOG, limits)
    with running(app) as base:
        client = EnvClient(base)
        first, _ = client.make(EXTERNAL), client.make(EXTERNAL)
        with pytest.raises(RemoteError) as err:
            client.make(EXTERNAL)
        assert err.value.status == 503
        time.sleep(0.5)
        with pytest.raises(RemoteError) as err:
            first.step("hi")
        assert err.value.status == 404 and "expired" in str(err.value)
        slow = client.make(EXTERNAL)
        store = app.state.store
        worker = store.sessions[slow.session_id].worker
        os.kill(worker.pid, signal.SIGSTOP)  # a step that cannot finish in time
        with pytest.raises(RemoteError) as err:
            slow.step("hi")
        assert err.value.status == 504
        assert worker.process.exitcode == -signal.SIGKILL, "the overrunning step's worker is killed"
        with pytest.raises(RemoteError) as err:
            slow.grade()
        assert err.value.status == 404


def test_token_is_required_beyond_loopback_and_enforced() -> None:
    with pytest.raises(ValueError, match="token"):
        check_binding("0.0.0.0", None)
    check_binding("0.0.0.0", "s3cret")
    check_binding("127.0.0.1", None)
    check_binding("::1", None)
    with running(create_app(CATALOG, token="s3cret")) as base:
        assert EnvClient(base).health()["status"] == "ok"
        for token in (None, "wrong"):
            with pytest.raises(RemoteError) as err:
                EnvClient(base, token=token).environments()
            assert err.value.status == 401
        assert len(EnvClient(base, token="s3cret").environments()) == N_EXAMPLES


def test_cli_serves_until_stopped_and_refuses_open_binding_without_token() -> None:
    import os
    import socket
    import subprocess
    import sys

    from typer.testing import CliRunner

    from coworkenv.cli import app

    result = CliRunner().invoke(app, ["serve", "http", str(EXAMPLES), "--host", "0.0.0.0"], env={"COWORKENV_TOKEN": ""})
    assert result.exit_code == 2 and "token" in result.output
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-c", "from coworkenv.cli import main; main()", "serve", "http", str(EXAMPLES)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([*cmd, "--port", str(port), "--max-body", "20000"], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                assert EnvClient(f"http://127.0.0.1:{port}").health()["environments"] == N_EXAMPLES
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.2)
        session = EnvClient(f"http://127.0.0.1:{port}").make(EXTERNAL)
        with pytest.raises(RemoteError) as err:
            session.step("x" * 30_000)  # past --max-body
        assert err.value.status == 413
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_rollout_against_the_server_matches_local(tmp_path: Path) -> None:
    import json

    from coworkenv.rollout import RunOptions, rollout_bank

    def outcomes(folder: Path) -> dict[str, tuple]:
        lines = [json.loads(x) for x in (folder / "episodes.jsonl").read_text().splitlines()]
        return {r["key"]: (r["score"], r["trajectory"]["final_state_hash"], r["status"]) for r in lines}

    with running(create_app(CATALOG)) as base:
        rollout_bank(EXAMPLES, "oracle", 2, tmp_path / "local", progress=False)
        rollout_bank(
            EXAMPLES, "oracle", 2, tmp_path / "remote", workers=2, options=RunOptions(env_server=base), progress=False
        )
        assert EnvClient(base).health()["sessions"] == 0  # every session was closed
        with pytest.raises(ValueError, match="--env-server"):
            rollout_bank(
                EXAMPLES,
                "oracle",
                1,
                tmp_path / "x",
                options=RunOptions(env_server=base, fault_rate=0.1),
                progress=False,
            )
    local, remote = outcomes(tmp_path / "local"), outcomes(tmp_path / "remote")
    assert len(local) == 2 * N_EXAMPLES and local == remote
    assert all(score == 1.0 and status == "ok" for score, _, status in remote.values())
