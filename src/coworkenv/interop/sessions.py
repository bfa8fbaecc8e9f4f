"""Server-side sessions: isolated, bounded in number, expiring when idle, each step time-limited.

Every session owns its own :class:`~coworkenv.interop.env.Env` (its own workspace, user and
logs); only the immutable specs are shared. Requests on one session are serialised by its
lock; different sessions run in parallel on a small thread pool. A step that overruns its
time limit is interrupted on its worker (:mod:`coworkenv.interop.cancel`) and its session
closed, because its state is no longer trustworthy. An ended episode keeps its session for
reading (grade, trajectory) but no longer holds a slot: a new session takes the place of the
longest-idle ended one.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from coworkenv.interop.cancel import Overrun, run_limited
from coworkenv.interop.env import Env

T = TypeVar("T")


class SessionError(Exception):
    """A request the store refuses; ``status`` is the HTTP status it maps to."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Session:
    id: str
    env: Env
    last_used: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


MAX_BODY = 1_000_000
"""Bytes of one request body, by default.

A step runs on a worker thread, but one call into C (a regular expression over a turn's text) holds the
interpreter lock while it runs, and the event loop waits for it: the body limit is also what bounds that
wait (see :mod:`coworkenv.interop.cancel`)."""


@dataclass(frozen=True)
class Limits:
    max_sessions: int = 256
    idle_ttl: float = 600.0
    step_timeout: float = 10.0
    workers: int = 8
    max_body: int = MAX_BODY


class SessionStore:
    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits or Limits()
        self.clock = clock
        self.sessions: dict[str, Session] = {}
        self.pool = ThreadPoolExecutor(max_workers=self.limits.workers, thread_name_prefix="coworkenv-step")

    def __len__(self) -> int:
        return len(self.sessions)

    def expire(self) -> int:
        """Drop sessions idle longer than the TTL (locked ones are in use, so never idle)."""
        cutoff = self.clock() - self.limits.idle_ttl
        stale = [s.id for s in self.sessions.values() if s.last_used < cutoff and not s.lock.locked()]
        for sid in stale:
            del self.sessions[sid]
        return len(stale)

    def open(self, env: Env) -> Session:
        self.expire()
        if len(self.sessions) >= self.limits.max_sessions:
            self._drop_ended()
        if len(self.sessions) >= self.limits.max_sessions:
            raise SessionError(503, f"session limit reached ({self.limits.max_sessions}); close one or retry later")
        session = Session(id=secrets.token_urlsafe(16), env=env, last_used=self.clock())
        self.sessions[session.id] = session
        return session

    def _drop_ended(self) -> None:
        """Free the slot of the longest-idle session whose episode has ended (and that no request is using)."""
        ended = [s for s in self.sessions.values() if s.env.done and not s.lock.locked()]
        if ended:
            del self.sessions[min(ended, key=lambda s: s.last_used).id]

    def get(self, sid: str) -> Session:
        session = self.sessions.get(sid)
        if session is None or session.last_used < self.clock() - self.limits.idle_ttl:
            self.sessions.pop(sid, None)
            raise SessionError(404, f"no session {sid!r} (closed or expired)")
        return session

    def close(self, sid: str) -> None:
        self.get(sid)
        del self.sessions[sid]

    async def run(self, sid: str, work: Callable[[Env], T], timed: bool = True) -> T:
        """Run ``work(env)`` under the session's lock, on the pool, stopped past the step time limit."""
        session = self.get(sid)
        async with session.lock:
            session.last_used = self.clock()
            try:
                result = await run_limited(
                    self.pool, lambda: work(session.env), self.limits.step_timeout if timed else None
                )
            except Overrun:
                self.sessions.pop(sid, None)
                raise SessionError(
                    504, f"step exceeded the {self.limits.step_timeout:g}s time limit; the session is closed"
                ) from None
            session.last_used = self.clock()
            return result

    async def sweep(self, every: float | None = None) -> None:
        """Expire idle sessions periodically (runs for the server's lifetime)."""
        interval = every or max(self.limits.idle_ttl / 4, 0.05)
        while True:
            await asyncio.sleep(interval)
            self.expire()

    def shutdown(self) -> None:
        self.sessions.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)


def describe(session: Session) -> dict[str, object]:
    return {"session_id": session.id, "env_id": session.env.spec.id, "seed": session.env.runtime.seed}
