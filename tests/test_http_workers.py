"""Session worker processes behind the real HTTP server: steps run outside the server's process, so /health
answers while sessions burn CPU; a killed worker fails its own session only; closing a session ends its worker."""

from __future__ import annotations

import http.client
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi", reason="needs the serve extra")
pytest.importorskip("uvicorn", reason="needs the serve extra")

from coworkenv.interop import sessions
from coworkenv.interop.catalog import Catalog
from coworkenv.interop.client import EnvClient, RemoteError
from coworkenv.interop.env import Env
from coworkenv.interop.http_server import create_app, running
from coworkenv.interop.sessions import Limits, SessionStore
from coworkenv.interop.workers import Worker
from coworkenv.spec.models import TaskSpec

EXAMPLES = Path(__file__).parent.parent / "examples"
ENV = "external_quote_confirmation"
SLOW = "thursday_afternoon_narrowed_cancel"
CATALOG = Catalog.load([EXAMPLES / f"{name}.yaml" for name in (ENV, SLOW)])
HEAVY = "Should I cancel 12:00 on 6 March in 3 days, Sam Ortiz 1,200? " * 16_000
"""About 1 MB of text dense with dates: some tenths of a second of CPU for the user of :data:`SLOW`."""


def test_steps_run_in_the_sessions_own_processes_and_answer_as_in_process() -> None:
    app = create_app(CATALOG, Limits(max_sessions=4))
    with running(app) as base:
        remote = EnvClient(base).make(ENV, seed=3)
        local = Env(CATALOG.get(ENV), seed=3)
        local.reset()
        workers = [s.worker for s in app.state.store.sessions.values()]
        other = EnvClient(base).make(ENV)
        pids = {s.worker.pid for s in app.state.store.sessions.values()}
        assert len(pids) == 2 and os.getpid() not in pids
        for turn in ("hello", {"content": "", "tool_calls": [{"id": "1", "name": "mail.search", "arguments": {}}]}):
            assert remote.step(turn).messages == local.step(turn).messages
        assert remote.state()["state_hash"] == local.state()["state_hash"]
        assert remote.grade() == local.grade()
        assert other.state()["step"] == 0, "one session's steps never reach another's"
        assert workers[0].process.is_alive()


def test_health_answers_while_four_sessions_run_cpu_heavy_steps() -> None:
    with running(create_app(CATALOG, Limits(max_sessions=8, step_timeout=60))) as base:
        heavy = [EnvClient(base).make(SLOW) for _ in range(4)]
        innocent = EnvClient(base).make(ENV)
        stop = threading.Event()
        slowest = [0.0]

        def hammer(session: EnvClient) -> None:
            while not stop.is_set():
                session.step(HEAVY)

        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(hammer, s) for s in heavy]
            probe = EnvClient(base)
            time.sleep(0.5)
            until = time.monotonic() + 3
            while time.monotonic() < until:
                start = time.perf_counter()
                probe.health()
                slowest[0] = max(slowest[0], time.perf_counter() - start)
                time.sleep(0.02)
            assert innocent.step("hello").step == 1
            stop.set()
            for future in futures:
                future.result()
        assert slowest[0] < 0.5, slowest  # steps in the server's process held /health for about a second


def test_a_killed_worker_fails_its_own_session_only_and_frees_its_slot() -> None:
    app = create_app(CATALOG, Limits(max_sessions=2))
    with running(app) as base:
        client = EnvClient(base)
        victim, bystander = client.make(ENV), client.make(ENV)
        os.kill(app.state.store.sessions[victim.session_id].worker.pid, signal.SIGKILL)
        with pytest.raises(RemoteError) as err:
            victim.step("hi")
        assert err.value.status == 502 and "worker process ended" in str(err.value)
        with pytest.raises(RemoteError) as err:
            victim.grade()
        assert err.value.status == 404
        assert bystander.step("hi").step == 1
        assert client.make(ENV).step("hi").step == 1, "the dead session's slot is free"


def test_closing_or_ending_a_session_ends_or_releases_its_worker() -> None:
    app = create_app(CATALOG, Limits(max_sessions=1))
    with running(app) as base:
        client = EnvClient(base)
        first = client.make(ENV)
        worker = app.state.store.sessions[first.session_id].worker
        first.close()
        assert worker.process.exitcode is not None, "a closed session's worker is ended"
        second = client.make(ENV)
        second.end("done")
        third = client.make(ENV)  # takes the ended session's place, and its process
        assert third.step("hi").step == 1 and len(app.state.store) == 1


def _hang_up_during(base: str, path: str, method: str = "POST", body: bytes | None = None) -> None:
    """Send a request, give the server time to start its work, and disconnect before it answers."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    conn.request(method, path, body=body)
    time.sleep(0.3)
    conn.close()


def _wait_until_no_sessions(store: SessionStore) -> None:
    deadline = time.monotonic() + 10
    while (len(store) or store.starting) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_client_that_disconnects_mid_step_frees_its_slot_and_worker() -> None:
    app = create_app(CATALOG, Limits(max_sessions=1, step_timeout=60))
    with running(app) as base:
        session = EnvClient(base).make(ENV)
        worker = app.state.store.sessions[session.session_id].worker
        os.kill(worker.pid, signal.SIGSTOP)  # the step will not finish on its own
        _hang_up_during(base, f"/sessions/{session.session_id}/step", body=b'{"turn": "hi"}')
        _wait_until_no_sessions(app.state.store)
        assert len(app.state.store) == 0 and worker.process.exitcode == -signal.SIGKILL
        assert EnvClient(base).make(ENV).step("hi").step == 1, "the slot is free"


SESSION_CALLS = [("GET", "state", None), ("POST", "grade", None), ("POST", "reset", None), ("GET", "trajectory", None)]
SESSION_CALLS += [("POST", "end", b'{"reason": "gone"}')]


@pytest.mark.parametrize(("method", "route", "body"), SESSION_CALLS, ids=[r for _, r, _ in SESSION_CALLS])
def test_every_session_route_that_calls_the_worker_notices_a_vanished_client(
    method: str, route: str, body: bytes | None
) -> None:
    app = create_app(CATALOG, Limits(max_sessions=1, step_timeout=60))
    with running(app) as base:
        session = EnvClient(base).make(ENV)
        worker = app.state.store.sessions[session.session_id].worker
        os.kill(worker.pid, signal.SIGSTOP)
        _hang_up_during(base, f"/sessions/{session.session_id}/{route}", method, body)
        _wait_until_no_sessions(app.state.store)
        assert len(app.state.store) == 0 and worker.process.exitcode == -signal.SIGKILL


@pytest.mark.parametrize("route", ["tools/mail_search", "grade"])
def test_a_client_that_disconnects_mid_call_on_a_per_tool_endpoint_frees_its_slot_and_worker(route: str) -> None:
    app = create_app(CATALOG, Limits(max_sessions=1, step_timeout=60))
    with running(app) as base:
        client = EnvClient(base)
        standing = client.request("POST", f"/environments/{ENV}/reset")["session_id"]
        worker = app.state.store.sessions[standing].worker
        os.kill(worker.pid, signal.SIGSTOP)  # the call will not finish on its own
        _hang_up_during(base, f"/environments/{ENV}/{route}", body=b'{"query": "quote"}')
        _wait_until_no_sessions(app.state.store)
        assert len(app.state.store) == 0 and worker.process.exitcode == -signal.SIGKILL
        answer = client.request("POST", f"/environments/{ENV}/tools/mail_search", {"query": "quote"})
        assert answer["done"] is False and "messages" in answer["content"], "a fresh standing session took the slot"
        assert len(app.state.store) == 1


OPENS = [("/sessions", f'{{"env_id": "{ENV}"}}'.encode()), (f"/environments/{ENV}/reset", None)]


@pytest.mark.parametrize(("path", "body"), OPENS, ids=["session", "standing_session"])
def test_a_client_that_disconnects_while_its_session_opens_leaves_no_worker_behind(
    path: str, body: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Worker] = []

    class Recorded(Worker):  # the real worker, remembered: the test must see how the late one ended
        def __init__(self, spec: TaskSpec, seed: int, max_turns: int | None) -> None:
            super().__init__(spec, seed, max_turns)
            started.append(self)

    monkeypatch.setattr(sessions, "Worker", Recorded)
    app = create_app(CATALOG, Limits(max_sessions=1, step_timeout=60))
    with running(app) as base:
        forkserver = multiprocessing.forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
        os.kill(forkserver, signal.SIGSTOP)  # no worker can be forked: the open waits
        try:
            _hang_up_during(base, path, body=body)
        finally:
            os.kill(forkserver, signal.SIGCONT)
        deadline = time.monotonic() + 10  # the open goes on in its thread: its worker comes up late
        while not (started and started[0].process.exitcode is not None) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [w.process.exitcode for w in started] == [-signal.SIGKILL], "killed once up, not left to run"
        assert len(app.state.store) == 0 and app.state.store.starting == 0 and not multiprocessing.active_children()
        assert EnvClient(base).make(ENV).step("hi").step == 1, "the slot is free"
