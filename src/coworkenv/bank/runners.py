"""Where a bank's jobs run: in this process, on a pool of worker processes, or as Ray actors.

Every runner yields job results in job order from a given index on, whichever worker finishes
first, so a bank's bytes do not depend on where it was built. Each also times itself: the
start-up (until its workers can take jobs) apart from the steady part, whose rate is the
marginal one that a longer build would see; the figures go to the bank's ``builds.jsonl``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from itertools import count

from coworkenv.bank.entry import Entry
from coworkenv.bank.jobs import BankConfig, run_job
from coworkenv.cluster import actors, cluster_cpus, connect, ordered_map

BATCH_PER_WORKER = 32
"""Jobs per worker between two writes of the bank; also what the process pool is handed at a time."""
RAY_CHUNK = 8
"""Jobs per call to a Ray actor: long enough that a call's overhead does not count, short enough to share out."""

STARTUP_TIMEOUT = 300.0
"""Seconds for the Ray actors to come up (a cluster with fewer free CPUs than actors never starts the rest)."""

BUILD_FIELDS = frozenset(
    {"backend", "workers", "jobs", "admitted", "seconds", "startup_seconds", "rate", "marginal_rate", "per_worker_rate"}
)
"""What every line of ``builds.jsonl`` holds (:meth:`Runner.record`); ``per_cpu_second`` may be None."""


class JobFailed(RuntimeError):
    """A job raised: the build stops there, naming it; the jobs before it are kept and a rerun resumes."""


class WorkerLost(RuntimeError):
    """A worker died (a Ray actor or node lost): the build stops; a rerun resumes."""


def run_named(config: BankConfig, index: int) -> Entry:
    """:func:`run_job`, its failure raised as :class:`JobFailed` naming the job."""
    try:
        with _collected_after():
            return run_job(config, index)
    except Exception as exc:
        raise JobFailed(f"job {index} (seed {config.seed}) failed: {type(exc).__name__}: {exc}") from exc


FULL_COLLECTION_JOBS = 500
"""Jobs between two collections of the old generation too (where cached records a job evicted lie in cycles)."""


@contextmanager
def _collected_after() -> Iterator[None]:
    """A job run with the cyclic garbage collector paused, its garbage collected when it ends.

    A job allocates hundreds of thousands of objects (a realistic workspace's records, forked for each probe run)
    and keeps few: collecting while it runs promoted them to the old generation, whose passes over every cached
    workspace took 17-22 % of a bank's CPU time. Collecting the young generations once the job is done frees the
    same garbage (its episodes' cycles); the old generation, which then holds what outlives jobs, is collected
    every :data:`FULL_COLLECTION_JOBS` jobs (counted by the collector: each young collection adds one)."""
    if not gc.isenabled():  # the caller's choice: leave collection to it
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.collect(2 if gc.get_count()[2] >= FULL_COLLECTION_JOBS else 1)
        gc.enable()


@dataclass(frozen=True)
class Runner:
    """Results from an index on (``stream``), and how the runner is timed: wall clock from ``began``, and the
    CPU time its workers spent after start-up (``cpu``, where it can be read: None from a process pool)."""

    backend: str
    workers: int
    began: float
    startup: float
    stream: Callable[[int], Iterator[Entry]]
    cpu: Callable[[], float | None] = lambda: None
    cpu_start: float = 0.0

    def record(self, jobs: int, admitted: int) -> dict[str, object]:
        """This build's figures: admitted environments per second overall, after start-up, per worker, and per
        CPU-second of the workers (what a machine shared with other work still measures)."""
        seconds = time.perf_counter() - self.began
        steady = seconds - self.startup
        marginal = admitted / steady if steady > 0 else 0.0
        cpu = self.cpu()
        used = None if cpu is None else cpu - self.cpu_start
        return {
            "backend": self.backend,
            "workers": self.workers,
            "jobs": jobs,
            "admitted": admitted,
            "seconds": round(seconds, 3),
            "startup_seconds": round(self.startup, 3),
            "rate": round(admitted / seconds, 2) if seconds > 0 else 0.0,
            "marginal_rate": round(marginal, 2),
            "per_worker_rate": round(marginal / self.workers, 2),
            "worker_cpu_seconds": None if used is None else round(used, 3),
            "per_cpu_second": round(admitted / used, 2) if used else None,
        }


@contextmanager
def open_runner(config: BankConfig, workers: int, ray_address: str | None = None) -> Iterator[Runner]:
    """The runner for ``workers`` (with Ray: actors, 0 for one per cluster CPU) on ``ray_address`` or here."""
    began = time.perf_counter()
    if ray_address is not None:
        with _ray_runner(config, workers, ray_address, began) as runner:
            yield runner
    elif workers > 1:
        with _pool_runner(config, workers, began) as runner:
            yield runner
    else:
        jobs = lambda start: (run_named(config, i) for i in count(start))  # noqa: E731
        yield Runner("inline", 1, began, 0.0, jobs, time.process_time, time.process_time())


def _ready(_: int) -> bool:
    """A first task for a pool process: unpickling it imports the job code, as start-up."""
    return True


@contextmanager
def _pool_runner(config: BankConfig, workers: int, began: float) -> Iterator[Runner]:
    import multiprocessing

    pool = multiprocessing.get_context("spawn").Pool(workers)
    batch = BATCH_PER_WORKER * workers

    def stream(start: int) -> Iterator[Entry]:
        for first in count(start, batch):
            yield from pool.imap(partial(run_named, config), range(first, first + batch), chunksize=4)

    try:
        pool.map(_ready, range(workers), chunksize=1)
        yield Runner("processes", workers, began, time.perf_counter() - began, stream)
    finally:
        pool.terminate()
        pool.join()


class SynthWorker:
    """The body of a Ray actor (made one by :func:`coworkenv.cluster.actors`): runs chunks of a bank's jobs."""

    def __init__(self, config: BankConfig) -> None:
        self.config = config

    def cpu_time(self) -> float:
        """The CPU seconds this actor's process has used (asked once it is up, then at the end)."""
        return time.process_time()

    def run(self, indices: range) -> tuple[list[Entry], str | None]:
        """The chunk's results up to its first failed job, and that failure (None if every job ran)."""
        done = []
        for index in indices:
            try:
                done.append(run_named(self.config, index))
            except JobFailed as exc:
                return done, str(exc)
        return done, None


@contextmanager
def _ray_runner(config: BankConfig, workers: int, address: str, began: float) -> Iterator[Runner]:
    # lazy: an optional extra (ray); bank building and the CLI run without it
    import ray
    from ray.exceptions import RayError

    connect(address, workers or None)
    size = workers or cluster_cpus()
    with actors(SynthWorker, size, config) as handles:
        with _worker_errors():
            try:
                cpu_start = sum(ray.get([handle.cpu_time.remote() for handle in handles], timeout=STARTUP_TIMEOUT))
            except ray.exceptions.GetTimeoutError:
                total = int(ray.cluster_resources().get("CPU", 0))
                raise WorkerLost(
                    f"{size} Ray actors did not start within {STARTUP_TIMEOUT:.0f} s (the cluster has {total} CPUs, "
                    "one per actor is needed)"
                ) from None

        def cpu() -> float | None:
            try:
                return float(sum(ray.get([handle.cpu_time.remote() for handle in handles], timeout=30)))
            except RayError:  # an actor lost: its time is not known
                return None

        def stream(start: int) -> Iterator[Entry]:
            chunks = (range(first, first + RAY_CHUNK) for first in count(start, RAY_CHUNK))
            with _worker_errors():
                for entries, failure in ordered_map(handles, lambda handle, chunk: handle.run.remote(chunk), chunks):
                    yield from entries
                    if failure is not None:
                        raise JobFailed(failure)

        yield Runner("ray", size, began, time.perf_counter() - began, stream, cpu, cpu_start)


@contextmanager
def _worker_errors() -> Iterator[None]:
    """Ray's errors as the build's: a job's own failure as :class:`JobFailed`, a lost actor as :class:`WorkerLost`."""
    # lazy: an optional extra (ray); bank building and the CLI run without it
    from ray.exceptions import RayActorError, RayTaskError

    try:
        yield
    except RayTaskError as exc:
        cause = exc.cause
        raise (cause if isinstance(cause, JobFailed) else JobFailed(str(cause))) from None
    except RayActorError as exc:
        raise WorkerLost(f"a Ray worker died: {str(exc).splitlines()[0][:300]}") from None
