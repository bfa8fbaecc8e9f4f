"""Work on a thread pool within a time limit that really stops it: an overrun is interrupted, not abandoned.

The HTTP server checks an inline spec this way, on a thread of its own process (sessions' steps run in
worker processes: :mod:`coworkenv.interop.workers`). A timed-out ``wait_for`` only stops waiting: the
thread goes on running, holding a pool worker that the next requests queue behind. Here an overrun
raises :class:`Cancelled` inside the worker thread (``PyThreadState_SetAsyncExc``: the interpreter
raises it at the thread's next bytecode), so the work unwinds and the worker is free again. An interrupt
cannot reach into a single long call into C, which the body size limit bounds.

The time limit counts from when the work starts on a worker, not from when it was queued."""

from __future__ import annotations

import asyncio
import ctypes
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Generic, TypeVar

T = TypeVar("T")


class Cancelled(BaseException):
    """Raised inside a worker thread whose work overran its time limit (a BaseException: no ``except
    Exception`` in the work swallows it)."""


class Overrun(Exception):
    """The work ran past its time limit and was stopped."""


class _Job(Generic[T]):
    """One piece of work and the thread running it; the lock orders its start and end against a cancel."""

    def __init__(self, work: Callable[[], T], started: Callable[[], None]) -> None:
        self.work = work
        self.started = started
        self.lock = threading.Lock()
        self.thread: int | None = None
        self.state = "queued"  # then "running" and "finished", or "cancelled"

    def __call__(self) -> T:
        with self.lock:
            if self.state == "cancelled":
                raise Cancelled
            self.state, self.thread = "running", threading.get_ident()
        self.started()
        try:
            return self.work()
        finally:
            with self.lock:
                self.state = "finished"

    def cancel(self) -> bool:
        """Stop the work: before it starts, it never runs; while it runs, it is interrupted. Whether it was
        still running (an interrupt that lands inside a callback the interpreter runs for it, a weakref's or
        a finaliser's, is swallowed there: the caller sends another)."""
        with self.lock:
            if self.state == "queued":
                self.state = "cancelled"
            elif self.state == "running" and self.thread is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.thread), ctypes.py_object(Cancelled))
                return True
            return False


_STOPPING: set[asyncio.Task[None]] = set()
"""The interrupts still being sent (held: the loop keeps only weak references to its tasks)."""

RETRY = 0.02
"""Seconds between interrupts of work that is still running."""


async def _stop(job: _Job[T]) -> None:
    """Interrupt ``job`` until it stops running (at most a hundred times)."""
    for _ in range(100):
        if not job.cancel():
            return
        await asyncio.sleep(RETRY)


async def run_limited(pool: Executor, work: Callable[[], T], limit: float | None) -> T:
    """``work()`` on ``pool``, stopped with :class:`Overrun` when it runs longer than ``limit`` seconds."""
    loop = asyncio.get_running_loop()
    began = asyncio.Event()

    def started() -> None:
        loop.call_soon_threadsafe(began.set)

    job = _Job(work, started)
    future: asyncio.Future[T] = loop.run_in_executor(pool, job)
    if limit is None:
        return await future
    future.add_done_callback(lambda _: began.set())  # work that ends without starting (refused) ends the wait
    await began.wait()
    done, _ = await asyncio.wait({future}, timeout=limit)
    if not done:
        task = asyncio.ensure_future(_stop(job))
        _STOPPING.add(task)
        task.add_done_callback(_STOPPING.discard)
        future.cancel()
        raise Overrun(limit)
    try:
        return future.result()
    except Cancelled:  # the interrupt landed as the work was finishing on its own
        raise Overrun(limit) from None
