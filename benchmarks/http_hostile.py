"""``/health`` latency of ``coworkenv serve http`` while hostile clients run, and what they got back.

The server runs as its own process (as deployed; clients in this process do not share its interpreter
lock). ``--clients`` hostile sessions send, in a loop, turns of about a megabyte dense with dates and
amounts (each a step that runs past ``--step-timeout`` and is stopped), bodies over the size limit,
``NaN`` and lone surrogates; meanwhile one innocent session steps plain turns and one client polls
``/health``. For each count of hostile clients (a fresh server each), prints the latency of ``/health``
and of the innocent session's steps (median, p99, worst), the load average (the machine may be shared)
and the count of each status the hostile requests got (no 500 may appear). Target: ``/health`` <= 100 ms.

    python benchmarks/http_hostile.py [--clients 0 4 8] [--seconds 10] [--step-timeout 0.2]
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from coworkenv.interop.client import EnvClient, RemoteError

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "thursday_afternoon_narrowed_cancel.yaml"
HEAVY = "Should I cancel 12:00 on 6 March in 3 days, Sam Ortiz 1,200? " * 16_000
BODIES = [
    b'{"turn": "' + HEAVY.encode() + b'"}',
    b'{"turn": "' + b"x" * 1_100_000 + b'"}',
    b'{"turn": NaN}',
    b'{"turn": {"content": "Done \\ud800", "tool_calls": [{"id": "c", "name": "mail_\\udfff", "arguments": "{}"}]}}',
    b'{"turn": "ok"}',
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def hostile(url: str, port: int, stop: threading.Event, statuses: Counter[int]) -> None:
    """One client: a session, then every hostile body in turn (a new session once the server closes it)."""
    client = EnvClient(url)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    sid = client.make(EXAMPLE.stem).session_id
    i = 0
    while not stop.is_set():
        conn.request("POST", f"/sessions/{sid}/step", body=BODIES[i % len(BODIES)])
        resp = conn.getresponse()
        resp.read()
        statuses[resp.status] += 1
        if resp.status in (404, 504):
            sid = client.make(EXAMPLE.stem).session_id
        i += 1


def innocent(url: str, stop: threading.Event, latencies: list[float]) -> None:
    """One well-behaved session stepping plain turns (a new session once the episode ends)."""
    client = EnvClient(url)
    env = client.make(EXAMPLE.stem)
    while not stop.is_set():
        start = time.perf_counter()
        obs = env.step("Which meetings are on Thursday afternoon?")
        latencies.append(time.perf_counter() - start)
        if obs.done:
            env.close()
            env = client.make(EXAMPLE.stem)
        time.sleep(0.01)


def start_server(step_timeout: float) -> tuple[subprocess.Popen[bytes], str, int]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-c", "from coworkenv.cli import main; main()", "serve", "http", str(EXAMPLE)]
    cmd += ["--port", str(port), "--step-timeout", str(step_timeout)]
    server = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            EnvClient(url).health()
            return server, url, port
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server did not start") from None
            time.sleep(0.2)


def measure(clients: int, seconds: float, step_timeout: float) -> None:
    """One fresh server, ``clients`` hostile sessions and one innocent one for ``seconds``; prints the figures."""
    server, url, port = start_server(step_timeout)
    try:
        stop = threading.Event()
        statuses: Counter[int] = Counter()
        steps: list[float] = []
        threads = [threading.Thread(target=hostile, args=(url, port, stop, statuses)) for _ in range(clients)]
        threads.append(threading.Thread(target=innocent, args=(url, stop, steps)))
        for t in threads:
            t.start()
        probe, latencies = EnvClient(url), []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            start = time.perf_counter()
            try:
                probe.health()
            except (OSError, RemoteError) as exc:
                raise SystemExit(f"/health failed: {exc}") from None
            latencies.append(time.perf_counter() - start)
            time.sleep(0.01)
        stop.set()
        for t in threads:
            t.join()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"{clients} hostile clients, {seconds:g} s, load average {os.getloadavg()[0]:.1f}:")
    print(f"  /health: {len(latencies)} answers, {summary(latencies)} (target <= 100 ms)")
    print(f"  innocent session's steps: {len(steps)} answers, {summary(steps)}")
    print("  hostile requests by status:", dict(sorted(statuses.items())))


def summary(seconds: list[float]) -> str:
    ms = sorted(x * 1000 for x in seconds) or [float("nan")]
    p99 = ms[max(0, int(len(ms) * 0.99) - 1)]
    return f"median {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms, worst {ms[-1]:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[0, 4, 8])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--step-timeout", type=float, default=0.2)
    opts = parser.parse_args()
    for clients in opts.clients:
        measure(clients, opts.seconds, opts.step_timeout)


if __name__ == "__main__":
    main()
