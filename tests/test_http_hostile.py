"""A hostile client against the real HTTP server on loopback: what it sends is refused or cleaned at the door,
its heavy steps are stopped, and the server goes on answering everyone else."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi", reason="needs the serve extra")
pytest.importorskip("uvicorn", reason="needs the serve extra")

from coworkenv.interop.cancel import Overrun, run_limited
from coworkenv.interop.catalog import Catalog
from coworkenv.interop.client import EnvClient, RemoteError
from coworkenv.interop.http_server import create_app, running
from coworkenv.interop.sessions import MAX_BODY, Limits

EXAMPLES = Path(__file__).parent.parent / "examples"
CATALOG = Catalog.load(
    [EXAMPLES / f"{name}.yaml" for name in ("external_quote_confirmation", "thursday_afternoon_narrowed_cancel")]
)
ENV = "external_quote_confirmation"
SLOW = "thursday_afternoon_narrowed_cancel"
"""Its user reads a turn for the dates its confirmation names: about 0.3 s of CPU for :data:`HEAVY`."""
HEAVY = "Should I cancel 12:00 on 6 March in 3 days, Sam Ortiz 1,200? " * 16_000
"""About 1 MB of text dense with dates, times, names and amounts (under the body limit)."""


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with running(create_app(CATALOG, Limits(max_sessions=50, workers=4))) as base:
        yield base


def raw(url: str, method: str, path: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """One request with exactly these bytes (the client would encode them itself)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


def test_bodies_over_the_limit_bad_json_and_nan_are_refused_with_clear_errors(url: str) -> None:
    session = EnvClient(url).make(ENV)
    path = f"/sessions/{session.session_id}/step"
    status, text = raw(url, "POST", path, b'{"turn": "' + b"x" * MAX_BODY + b'"}')
    assert status == 413 and "larger than" in text
    for body, status_wanted, words in (
        (b'{"turn": NaN}', 400, "NaN is not a JSON number"),
        (b'{"turn": {"content": "a", "tool_calls": [{"arguments": {"x": Infinity}}]}}', 400, "Infinity"),
        (b'{"turn": ', 400, "not valid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, 400, "not valid JSON"),
        (b'{"turn": 5}', 422, "body.turn"),
        (b"\xff\xfe\x00", 400, "not valid JSON"),
    ):
        status, text = raw(url, "POST", path, body)
        assert status == status_wanted and words in json.loads(text)["detail"], (body[:40], status, text[:200])
    assert session.step("still here").step == 1  # the refused bodies changed nothing


def test_lone_surrogates_in_turns_tool_names_and_end_reasons_never_break_a_session(url: str) -> None:
    client = EnvClient(url)
    session = client.make(ENV)
    session.step(
        {"content": "Done \ud800", "tool_calls": [{"id": "c\udfff", "name": "mail_\ud800", "arguments": "{}"}]}
    )
    session.step(
        {"content": "x", "tool_calls": [{"id": "c2", "name": "mail_search", "arguments": {"query": "\ud800"}}]}
    )
    state = client.request("GET", f"/sessions/{session.session_id}/state")
    trajectory = session.trajectory()
    contents = [m.get("content") or "" for m in trajectory.messages]
    assert "Done \ufffd" in contents and state["session_id"] == session.session_id
    client.request("POST", f"/sessions/{session.session_id}/end", {"reason": "bye \ud800"})
    assert session.trajectory().done_reason == "bye \ufffd"
    answer = client.request("POST", f"/environments/{ENV}/tools/mail_search", {"query": "q \udc00"})
    assert "content" in answer


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # an interrupt swallowed in a callback
def test_a_step_past_its_limit_is_stopped_and_the_others_are_served() -> None:
    """One worker, a heavy step, a limit of a twentieth of a second: the heavy step is stopped (504, session closed)
    and its worker freed, so the next session's cheap step gets its own full time; /health answers throughout
    (its latency is bounded by the longest single call into C a step makes, which the body limit bounds)."""
    app = create_app(CATALOG, Limits(workers=1, step_timeout=0.05))
    with running(app) as base:
        client = EnvClient(base)
        heavy, innocent = client.make(SLOW), client.make(SLOW)
        slowest = [0.0]
        stop = threading.Event()

        def poll() -> None:
            probe = EnvClient(base)
            while not stop.is_set():
                start = time.perf_counter()
                probe.health()
                slowest[0] = max(slowest[0], time.perf_counter() - start)
                time.sleep(0.01)

        with ThreadPoolExecutor(2) as pool:
            poller = pool.submit(poll)
            stepping = pool.submit(heavy.step, HEAVY)
            time.sleep(0.05)
            assert innocent.step("hello").step == 1  # queued behind the heavy step, served once it is stopped
            with pytest.raises(RemoteError) as err:
                stepping.result()
            stop.set()
            poller.result()
        assert err.value.status == 504
        assert slowest[0] < 0.5, (
            slowest
        )  # about 0.07 s on an idle machine; an event loop running a check stalls for seconds


def test_run_limited_interrupts_pure_python_work_and_frees_its_worker() -> None:
    import asyncio

    pool = ThreadPoolExecutor(1)

    def spin() -> None:
        n = 0
        while True:
            n += 1

    async def main() -> float:
        start = time.perf_counter()
        with pytest.raises(Overrun):
            await run_limited(pool, spin, 0.1)
        assert await run_limited(pool, lambda: "next", 1.0) == "next"
        return time.perf_counter() - start

    assert asyncio.run(main()) < 2.0
    pool.shutdown(wait=True)


def test_ended_sessions_free_their_slots() -> None:
    with running(create_app(CATALOG, Limits(max_sessions=2))) as base:
        client = EnvClient(base)
        first, second = client.make(ENV), client.make(ENV)
        with pytest.raises(RemoteError) as err:
            client.make(ENV)
        assert err.value.status == 503
        first.end("done")
        third = client.make(ENV)  # takes the ended session's place
        assert third.step("hi").step == 1 and second.step("hi").step == 1


def test_the_token_guards_the_docs_and_only_bearer_is_accepted() -> None:
    with running(create_app(CATALOG, token="s3cret")) as base:
        for path in ("/docs", "/openapi.json", "/redoc"):
            assert raw(base, "GET", path, b"")[0] == 401
            assert raw(base, "GET", path, b"", {"Authorization": "Bearer s3cret"})[0] == 200
        for header in ("s3cret", "Basic s3cret", "Token s3cret", "Bearer"):
            assert raw(base, "GET", "/environments", b"", {"Authorization": header})[0] == 401, header
        assert "/sessions/{sid}/step" in EnvClient(base, token="s3cret").request("GET", "/openapi.json")["paths"]
