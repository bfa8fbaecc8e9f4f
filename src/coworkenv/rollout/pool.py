"""The local process pool of a rollout: worker processes fed chunk after chunk over their own pipes.

Each worker has its own duplex pipe: the driver sends it a chunk (by index when the worker was forked with the
run's chunks, see :func:`~coworkenv.rollout.worker.share_chunks`), always one ahead so that a worker finishing a
chunk finds its next one waiting, and reads every worker's answers with one ``wait``. The driver runs no thread
and pickles nothing but indices, outcomes and file names: what ``concurrent.futures`` does per call (a feeder
thread for a shared call queue, a thread that reads results and settles futures, the waiters of ``wait``) costs
about twice the driver time on a run of scripted episodes, and the driver shares its cores with the workers.

With a scripted policy a pool of N plays in N processes: the driver and N - 1 workers. The driver takes chunks
like a worker and, between the episodes of its chunk, reads what the workers sent and sends them more, so none
waits. Its lines go to the store without a spool file, and the run has one process fewer to start and to share
the cores with (a driver that only fed its workers would cost a process's switches, start and copied memory
pages). A model policy's driver only feeds its N workers: it would have to load the model too.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import signal
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import suppress
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from coworkenv.rollout.store import Batch, Encoded
from coworkenv.rollout.worker import (
    EpisodeTask,
    PolicyLoadError,
    RunOptions,
    SpecCache,
    WorkerInit,
    build_policy,
    forget_prepared,
    init_worker,
    prepare_for_fork,
    run_chunk,
    run_shared_chunk,
    run_tasks,
    share_chunks,
)

SCRIPTED_POLICIES = ("oracle", "probe:")
"""Policies that run in microseconds: worth shipping many episodes per message to a worker, and forking for."""
AHEAD = 2
"""Chunks sent to a forked worker and not yet answered: the one it plays and the one waiting for it. A spawned
worker is sent its chunks' tasks themselves, which can outgrow a pipe's buffer: sent ahead, such a chunk would
hold the driver in ``send`` until the worker finished the one it plays, so a spawned worker gets one at a time
(it runs model policies, whose episodes dwarf the round trip)."""


class PoolError(RuntimeError):
    """The pool could not go on: a worker died, or could not build its policy (the message says which)."""


def start_method(policy: str) -> str:
    """How pool workers start: ``fork`` for a scripted policy in a single-threaded driver, ``spawn`` otherwise.

    A forked worker starts in milliseconds with this process's modules already imported; a spawned one imports
    coworkenv again (a second or more per worker, on a loaded machine several), which a run of oracle episodes
    spends most of its time waiting for. Spawn stays the rule for models (torch and its threads do not survive a
    fork) and wherever another thread runs (a fork copies its locks in whatever state they are)."""
    scripted = policy.startswith(SCRIPTED_POLICIES)
    if scripted and threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


def serve(conn: Connection, init: WorkerInit, options: RunOptions) -> None:
    """A worker's life: set up (:func:`~coworkenv.rollout.worker.init_worker`), then answer each chunk sent (an
    index of a shared chunk, or the chunk) with ``("ok", batch)`` or ``("raised", error)`` until ``None`` comes.
    Ctrl-C is the driver's to handle: it ends its workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    init_worker(*init)
    while (item := conn.recv()) is not None:
        try:
            answer: tuple[str, object] = (
                "ok",
                run_shared_chunk(item, options) if isinstance(item, int) else run_chunk(item, options),
            )
        except Exception as exc:  # handed to the driver, which stops the run with it
            answer = ("raised", exc if isinstance(exc, PolicyLoadError) else failed(exc))
        conn.send(answer)


def failed(exc: Exception) -> PoolError:
    """What a chunk that raised (in a worker or in the driver) stops the run with."""
    return PoolError(f"{type(exc).__name__}: {exc}")


class Worker:
    """The driver's side of one worker: its process, its pipe, and the chunks sent to it, in order."""

    def __init__(self, ctx: Any, init: WorkerInit, options: RunOptions) -> None:
        self.conn, theirs = ctx.Pipe()
        self.process: BaseProcess = ctx.Process(target=serve, args=(theirs, init, options), name="rollout-worker")
        self.process.start()
        theirs.close()  # only the worker holds its end, so its death reads as the end of the pipe
        self.sent: deque[int] = deque()

    def send(self, index: int, item: int | list[EpisodeTask]) -> None:
        self.conn.send(item)
        self.sent.append(index)

    def died(self) -> str:
        code = self.process.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return f"a worker process died (pid {self.process.pid}, {how}); re-run to resume"


class Pool:
    """``workers`` processes playing ``chunks`` of episodes of ``policy`` (the driver among them when the policy is
    scripted, see the module), the workers leaving their lines in files of the folder ``spool``, the batches handed
    back in the order of the chunks (so the store's lines come in the order one process writes them), at most
    ``window`` chunks out beyond the last one handed back.

    Entering starts the workers (so a fork happens before the caller starts a thread, such as a progress bar's);
    leaving ends them: once every batch is handed back they were told to exit already and are only waited for
    (so they exit while the caller makes its store durable), on an error or an early stop they are ended."""

    def __init__(
        self,
        chunks: list[list[EpisodeTask]],
        policy: str,
        opts: dict[str, object],
        options: RunOptions,
        workers: int,
        known: SpecCache,
        spool: Path,
    ) -> None:
        self.chunks = chunks
        self.method = start_method(policy)
        self.forked = self.method == "fork"
        self.ahead = AHEAD if self.forked else 1
        self.init = (policy, opts, os.getpid(), str(spool))
        self.options = options
        self.size = workers
        self.known = known
        self.window = max(4 * workers, 64 // max(1, len(chunks[0]) if chunks else 1))
        self.plays = policy.startswith(SCRIPTED_POLICIES) and workers > 1  # the driver plays chunks too
        self.policy_spec, self.policy_options = policy, opts
        self.policy: Any = None  # the driver's, built when the batches are first asked for
        self.poller: select.poll | None = (
            None  # the workers' pipes, looked at between the driver's episodes (see answered)
        )
        self.workers: list[Worker] = []
        self.done: dict[int, Batch] = {}
        self.next_sent = self.next_out = 0
        self.finished = False

    def __enter__(self) -> Pool:
        if self.forked:  # the workers inherit the validated specs (and environments: see prepare_for_fork) and chunks
            tasks = list({id(t.spec): t for chunk in self.chunks for t in chunk}.values())
            prepare_for_fork(tasks, self.options, self.known, environments=not self.plays)
            share_chunks(self.chunks)
        try:
            ctx = multiprocessing.get_context(self.method)
            for _ in range(self.size - 1 if self.plays else self.size):
                self.workers.append(Worker(ctx, self.init, self.options))
            if self.plays and hasattr(select, "poll"):
                self.poller = select.poll()
                for worker in self.workers:
                    self.poller.register(worker.conn.fileno(), select.POLLIN)
        except BaseException:
            self.__exit__()
            raise
        finally:
            forget_prepared()  # the workers have what they need
        return self

    def __exit__(self, *exc: object) -> None:
        for worker in self.workers:
            if not self.finished and worker.process.is_alive():
                worker.process.terminate()
        for worker in self.workers:
            worker.process.join(10 if self.finished else None)
            if worker.process.is_alive():  # stuck past the end of its work
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        share_chunks([])  # the run's chunks are the caller's to let go of

    def sendable(self) -> bool:
        """Whether a chunk is left to hand out and the window lets one more out."""
        return self.next_sent < len(self.chunks) and self.next_sent - self.next_out < self.window

    def top_up(self) -> None:
        """Send each worker chunks until it has ``ahead`` out (see :data:`AHEAD`), as far as the window allows."""
        for worker in self.workers:
            while len(worker.sent) < self.ahead and self.sendable():
                i = self.next_sent
                worker.send(i, i if self.forked else self.chunks[i])
                self.next_sent += 1

    def batches(self) -> Iterator[Batch]:
        """The batches in chunk order. A failure raises :class:`PoolError` once the batches that did finish have
        been handed on (in order), so nothing reported is lost."""
        if self.plays and self.policy is None:
            try:
                self.policy = build_policy(self.policy_spec, self.policy_options)
            except PolicyLoadError as exc:
                raise PoolError(str(exc)) from None
        self.top_up()
        while self.next_out < len(self.chunks):
            try:
                if self.plays and self.sendable():
                    self.play()
                else:
                    self.receive()
            except PoolError:
                yield from (self.done.pop(i) for i in sorted(self.done))
                raise
            while self.next_out in self.done:
                yield self.done.pop(self.next_out)
                self.next_out += 1
            self.top_up()
        for worker in self.workers:  # all done: they exit on their own while the caller finishes
            with suppress(OSError):
                worker.conn.send(None)
        self.finished = True

    def answered(self) -> bool:
        """Whether a worker's pipe holds something to read (an answer, or its end: the worker died), found with one
        ``poll`` system call: ``multiprocessing.connection.wait`` builds and registers a selector on every call, some
        45,000 instructions, which after each of the driver's episodes added about 1.3 % to them. Where the platform
        has no ``poll`` (Windows), :meth:`receive` looks."""
        return self.poller is None or bool(self.poller.poll(0))

    def play(self) -> None:
        """Play the next chunk in the driver, one episode at a time, each followed by a look at the workers'
        pipes (:meth:`answered`) so that a worker done with a chunk gets its next one."""
        i = self.next_sent
        self.next_sent += 1
        records: list[Encoded] = []
        for task in self.chunks[i]:
            try:
                records += run_tasks([task], self.policy, self.options, self.known)
            except Exception as exc:  # as if a worker had raised it: the run stops after what finished
                error = failed(exc)
                with suppress(PoolError):  # the workers' answers already in the pipes finished too
                    self.receive(timeout=0)
                raise error from None
            if self.answered():
                self.receive(timeout=0)
                self.top_up()
        self.done[i] = records

    def receive(self, timeout: float | None = None) -> None:
        """Wait for answers (``timeout``: at most that long; None: until one comes); keep each chunk's batch; raise
        :class:`PoolError` for a dead worker or a failure."""
        owners: dict[Any, Worker] = {}
        for w in self.workers:
            if w.sent:
                owners[w.conn] = owners[w.process.sentinel] = w
        if not owners:  # nothing out (the driver played the rest): nothing to wait for
            return
        for ready in wait(list(owners), timeout):
            worker = owners[ready]
            while worker.sent and worker.conn.poll():  # what it sent before it ended is still in the pipe
                try:
                    kind, value = worker.conn.recv()
                except (EOFError, OSError):
                    break
                index = worker.sent.popleft()
                if kind != "ok":
                    raise PoolError(str(value)) from None
                self.done[index] = value
            if worker.sent and not worker.process.is_alive():
                worker.process.join()
                raise PoolError(worker.died())
