"""Server-side sessions: isolated, bounded in number, expiring when idle, each step time-limited.

Every session's :class:`~coworkenv.interop.env.Env` lives in a worker process of its own
(:mod:`coworkenv.interop.workers`): its workspace, user and logs are that process's memory, and the
server only routes calls to it. Requests on one session are serialised by its lock. A step that
overruns its time limit has its worker killed and its session closed (504); a worker that dies closes
its session only (502). An ended episode keeps its session for reading (grade, trajectory) but no
longer holds a slot: a new session takes the place of the longest-idle ended one. Closing, expiring or
replacing a session ends its worker, and so does cancelling the request that opens it or runs a call on it
(the HTTP server cancels one whose client disconnects).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from coworkenv.interop.env import Observation
from coworkenv.interop.workers import Method, StepFailed, StepOverrun, Worker, WorkerDied
from coworkenv.spec.models import TaskSpec

T = TypeVar("T")


class SessionError(Exception):
    """A request the store refuses; ``status`` is the HTTP status it maps to."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Session:
    id: str
    spec_id: str
    seed: int
    worker: Worker
    last_used: float
    done: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


MAX_BODY = 1_000_000
"""Bytes of one request body, by default: what the server parses and hands to a worker for one call."""


@dataclass(frozen=True)
class Limits:
    max_sessions: int = 256
    idle_ttl: float = 600.0
    step_timeout: float = 10.0
    workers: int = 8
    """Threads moving calls and results through the workers' pipes (the steps themselves run in the workers)."""
    max_body: int = MAX_BODY


class SessionStore:
    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits or Limits()
        self.clock = clock
        self.sessions: dict[str, Session] = {}
        self.starting = 0
        self.pool = ThreadPoolExecutor(max_workers=self.limits.workers, thread_name_prefix="coworkenv-pipe")

    def __len__(self) -> int:
        return len(self.sessions)

    def expire(self) -> int:
        """Drop sessions idle longer than the TTL (locked ones are in use, so never idle)."""
        cutoff = self.clock() - self.limits.idle_ttl
        stale = [s.id for s in self.sessions.values() if s.last_used < cutoff and not s.lock.locked()]
        for sid in stale:
            self._drop(sid)
        return len(stale)

    async def open(self, spec: TaskSpec, seed: int = 0, max_turns: int | None = None) -> Session:
        """A new session with its worker started (off the event loop: the start waits for the fork server)."""
        self.expire()
        if len(self.sessions) + self.starting >= self.limits.max_sessions:
            self._drop_ended()
        if len(self.sessions) + self.starting >= self.limits.max_sessions:
            raise SessionError(503, f"session limit reached ({self.limits.max_sessions}); close one or retry later")
        self.starting += 1  # holds the slot while the worker starts
        starting = self.pool.submit(Worker, spec, seed, max_turns)
        try:
            worker = await asyncio.wrap_future(starting)
        except asyncio.CancelledError:  # the start goes on in its thread: the worker is ended once it is up
            starting.add_done_callback(_end_unclaimed)
            raise
        finally:
            self.starting -= 1
        session = Session(secrets.token_urlsafe(16), spec.id, seed, worker, self.clock())
        self.sessions[session.id] = session
        return session

    def _drop_ended(self) -> None:
        """Free the slot of the longest-idle session whose episode has ended (and that no request is using)."""
        ended = [s for s in self.sessions.values() if s.done and not s.lock.locked()]
        if ended:
            self._drop(min(ended, key=lambda s: s.last_used).id)

    def _drop(self, sid: str) -> None:
        session = self.sessions.pop(sid, None)
        if session is not None:
            session.worker.kill()

    def get(self, sid: str) -> Session:
        session = self.sessions.get(sid)
        if session is None or session.last_used < self.clock() - self.limits.idle_ttl:
            self._drop(sid)
            raise SessionError(404, f"no session {sid!r} (closed or expired)")
        return session

    def close(self, sid: str) -> None:
        self.get(sid)
        self._drop(sid)

    async def run(self, sid: str, kind: type[T], method: Method, *args: object) -> T:
        """``method(*args)`` on the session's environment, in its worker, under the session's lock, stopped past
        the step time limit; its result must be a ``kind``. A request cancelled meanwhile (its client gone) ends
        the worker and the session."""
        session = self.get(sid)
        async with session.lock:
            session.last_used = self.clock()
            limit = self.limits.step_timeout
            try:
                result = await session.worker.call(self.pool, method, args, limit)
            except StepOverrun:
                self._drop(sid)
                raise SessionError(504, f"step exceeded the {limit:g}s time limit; the session is closed") from None
            except WorkerDied as exc:
                self._drop(sid)
                raise SessionError(
                    502, f"the session's worker process ended (exit code {exc.args[0]}); the session is closed"
                ) from None
            except StepFailed as exc:
                raise SessionError(500, f"{method} failed: {exc}") from None
            except asyncio.CancelledError:
                self._drop(sid)
                raise
            session.last_used = self.clock()
            session.done = session.done or method == "end" or (isinstance(result, Observation) and result.done)
            if not isinstance(result, kind):
                raise SessionError(500, f"{method} answered a {type(result).__name__}, not a {kind.__name__}")
            return result

    async def sweep(self, every: float | None = None) -> None:
        """Expire idle sessions periodically (runs for the server's lifetime)."""
        interval = every or max(self.limits.idle_ttl / 4, 0.05)
        while True:
            await asyncio.sleep(interval)
            self.expire()

    def shutdown(self) -> None:
        for sid in list(self.sessions):
            self._drop(sid)
        self.pool.shutdown(wait=False, cancel_futures=True)


def _end_unclaimed(started: Future[Worker]) -> None:
    """End a worker whose session was given up while it started (its request was cancelled)."""
    if not started.cancelled() and started.exception() is None:
        started.result().kill()


def describe(session: Session) -> dict[str, object]:
    return {"session_id": session.id, "env_id": session.spec_id, "seed": session.seed}
