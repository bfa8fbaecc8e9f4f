"""Session worker processes: each server session's environment lives in a process of its own.

Steps are Python: in the server's process they would share its interpreter lock with the event loop, so a
few CPU-heavy steps would hold up ``/health`` and every other session. In a worker process a step has its
own interpreter, the server only routes turns and results through a pipe, and a step past its limit is
stopped for certain (the process is killed) instead of being interrupted cooperatively.

Workers are forked by a fork server that has imported the environment code once (``forkserver`` with
this module preloaded): a new session costs a fork, not an interpreter start and its imports, and no
worker inherits the server's threads or sockets. One process per session, not a shared pool: a session's
state is its process's memory, so isolation is the operating system's, a crash or a kill takes down one
session only, and nothing is handed between processes but the calls and their results.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.forkserver
from concurrent.futures import Executor
from multiprocessing.connection import Connection
from typing import Literal

from coworkenv.interop.env import Env
from coworkenv.spec.models import TaskSpec

Method = Literal["reset", "step", "state", "grade", "end", "trajectory"]
"""What a worker runs on its environment (nothing else is looked up: a call names one of these)."""

_CONTEXT = multiprocessing.get_context("forkserver")
multiprocessing.forkserver.set_forkserver_preload([__name__])


class WorkerDied(Exception):
    """The worker process ended before answering (it crashed or was killed)."""


class StepFailed(Exception):
    """The environment raised while running the call; the message names the exception."""


class StepOverrun(Exception):
    """The call ran past its time limit; its worker was killed."""


def warm() -> None:
    """Start the fork server (it imports the environment code), so that the first session does not wait for it."""
    multiprocessing.forkserver.ensure_running()


def _serve(conn: Connection, spec: TaskSpec, seed: int, max_turns: int | None) -> None:
    """The worker's loop: build the environment, then answer each ``(method, args)`` until the pipe closes."""
    built: Env | Exception
    try:
        built = Env(spec, seed=seed, max_turns=max_turns)
    except Exception as exc:  # reported on the first call, as the step that cannot run
        built = exc
    conn.send(("ready", None))
    while True:
        try:
            method, args = conn.recv()
        except EOFError:
            return
        try:
            if isinstance(built, Exception):
                raise built
            reply: tuple[str, object] = ("ok", getattr(built, method)(*args))
        except Exception as exc:
            reply = ("error", f"{type(exc).__name__}: {exc}")
        conn.send(reply)


class Worker:
    """One session's process and the server's end of its pipe; constructing one waits until its environment is
    built (call it off the event loop)."""

    def __init__(self, spec: TaskSpec, seed: int, max_turns: int | None) -> None:
        self.conn, child = _CONTEXT.Pipe()
        self.process = _CONTEXT.Process(target=_serve, args=(child, spec, seed, max_turns), daemon=True)
        self.process.start()
        child.close()
        try:  # the environment is built before the session opens: a step's time is the step's own
            self.conn.recv()
        except EOFError:
            self.kill()
            raise WorkerDied(self.process.exitcode) from None

    @property
    def pid(self) -> int | None:
        return self.process.pid

    async def call(self, pool: Executor, method: Method, args: tuple[object, ...], limit: float | None) -> object:
        """``method(*args)`` on the worker's environment; past ``limit`` seconds (or if the caller is cancelled)
        the worker is killed and :class:`StepOverrun` raised. Pipe reads and writes run on ``pool``."""
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(pool, self.conn.send, (method, args))
            await asyncio.wait_for(self._readable(loop), limit)
            status, value = await loop.run_in_executor(pool, self.conn.recv)
        except TimeoutError:  # before OSError, its base class
            self.kill()
            raise StepOverrun(limit) from None
        except (EOFError, OSError):
            self.kill()
            raise WorkerDied(self.process.exitcode) from None
        except asyncio.CancelledError:
            self.kill()
            raise
        if status == "error":
            raise StepFailed(value)
        return value

    def _readable(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """Resolves when the pipe has data (or the worker's end closed): a wait that holds no thread."""
        ready: asyncio.Future[None] = loop.create_future()
        fd = self.conn.fileno()

        def done() -> None:
            loop.remove_reader(fd)
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(fd, done)
        ready.add_done_callback(lambda _: loop.remove_reader(fd))
        return ready

    def kill(self) -> None:
        """End the process now (a no-op once it has ended) and reap it."""
        if self.process.exitcode is None:
            self.process.kill()
            self.process.join(timeout=5)
        self.conn.close()
