"""Parallel rollouts of a policy over a bank, into a resumable store.

Three ways to run, same records out:
- inline (``workers <= 1``): in this process; a policy with ``act_batch`` (local models)
  plays ``batch_size`` episodes in lockstep so each turn is one batched generate call;
- a local process pool (``workers > 1``): each worker process builds the policy once; with a scripted policy
  this process plays too, beside ``workers - 1`` workers (:mod:`coworkenv.rollout.pool`);
- Ray (``ray_address``): one actor per worker holding the policy, fed chunks of episodes.
Only the driver writes the store, as results arrive, so a killed run resumes cleanly.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from coworkenv.bank.sources import load_specs
from coworkenv.cluster import ClusterError, actors, cluster_cpus, connect
from coworkenv.provenance import code_version
from coworkenv.rollout.environments import check_user
from coworkenv.rollout.policies import check_policy_spec, make_policy
from coworkenv.rollout.pool import SCRIPTED_POLICIES, Pool, PoolError
from coworkenv.rollout.store import RETRIED, Batch, Outcome, RolloutStore, counts, episode_key, outcomes_of, replaces
from coworkenv.rollout.worker import (
    EpisodeTask,
    RayRolloutWorker,
    RunOptions,
    SpecCache,
    run_lockstep_tasks,
    run_tasks,
)
from coworkenv.runtime.policy import BatchPolicy, Policy, TaskPolicy
from coworkenv.spec.models import TaskSpec


class RolloutError(RuntimeError):
    """The run could not go on (its policy cannot be built, its workers died, Ray is unreachable);
    what finished is kept and a re-run resumes."""


@dataclass
class RolloutSummary:
    out: Path
    planned: int
    skipped: int
    ran: int
    seconds: float
    counts: dict[str, object] = field(default_factory=dict)

    @property
    def episodes_per_second(self) -> float:
        return self.ran / self.seconds if self.seconds else 0.0


def plan_tasks(specs: Sequence[TaskSpec], samples: int, seed: int) -> list[EpisodeTask]:
    """K samples per spec; sample ``k`` runs with environment seed ``seed + k``. The K tasks of a spec share one
    dump of it (a dump costs about what a short episode does, and a chunk pickles a shared dict once)."""
    return tasks_of([s.model_dump(mode="json") for s in specs], samples, seed)


def tasks_of(dumps: list[dict[str, object]], samples: int, seed: int) -> list[EpisodeTask]:
    """:func:`plan_tasks` of specs already dumped."""
    return [EpisodeTask(spec=d, sample=k, seed=seed + k) for d in dumps for k in range(samples)]


def known_specs(dumps: list[dict[str, object]], specs: Sequence[TaskSpec], options: RunOptions) -> SpecCache:
    """The run's specs known by their dumps, so that no process of the run that has them (this one, and the pool
    workers it forks) validates a dump of a spec it was given validated."""
    known = SpecCache(limit=max(256, len(specs)))
    for data, spec in zip(dumps, specs, strict=True):
        known.add(data, spec, options)
    return known


def chunked(tasks: list[EpisodeTask], size: int) -> list[list[EpisodeTask]]:
    return [tasks[i : i + size] for i in range(0, len(tasks), size)]


def tapered(tasks: list[EpisodeTask], size: int, workers: int) -> list[list[EpisodeTask]]:
    """Chunks of at most ``size`` tasks that shrink toward the end of the run (each at most a ``2 * workers``-th of
    the tasks left, and at least an eighth of ``size``), so that the workers run out of work together: with equal
    chunks, one worker's last chunk runs on alone while the others are done, up to a chunk's time per run."""
    out, start, smallest = [], 0, max(1, size // 8)
    while start < len(tasks):
        n = max(smallest, min(size, math.ceil((len(tasks) - start) / (2 * workers))))
        out.append(tasks[start : start + n])
        start += n
    return out


def auto_chunk_size(policy: str, tasks: int, workers: int) -> int:
    """Scripted policies: a few chunks per worker (IPC dominates); model policies: one episode."""
    if not policy.startswith(SCRIPTED_POLICIES):
        return 1
    return max(1, min(64, math.ceil(tasks / (max(workers, 1) * 8))))


def rollout_bank(
    bank: str | Path | Sequence[TaskSpec],
    policy: str | Any = "oracle",
    samples: int = 1,
    out: str | Path = "runs/rollout",
    *,
    options: RunOptions = RunOptions(),
    seed: int = 0,
    split: str | None = None,
    workers: int = 1,
    ray_address: str | None = None,
    chunk_size: int | None = None,
    batch_size: int = 16,
    policy_options: Mapping[str, object] | None = None,
    progress: bool = True,
    console: Console | None = None,
) -> RolloutSummary:
    """Run ``samples`` episodes of ``policy`` on every spec of ``bank`` into the store at ``out``.

    ``bank`` is a bank folder, a folder or file of specs, or a list of TaskSpec; ``policy``
    is a spec string for :func:`coworkenv.rollout.policies.make_policy` (required for workers
    and Ray) or, inline only, a ready policy object. ``options`` are how each episode runs
    (:class:`RunOptions`: its time budget, user, fault rate, turn cap, or a ``coworkenv serve
    http`` server to play it on); the rest is what to run and where. Episodes already in the
    store are skipped; re-running after a crash or SIGKILL finishes the rest.
    """
    if options.env_server and (options.user or options.fault_rate):
        raise ValueError("--env-server runs the server's scripted user without random faults; drop --user/--fault-rate")
    from_specs = not isinstance(bank, str | Path)
    specs = load_specs(bank, split) if isinstance(bank, str | Path) else list(bank)
    if not specs:
        raise ValueError(f"{bank}: no environments to run" + (f" in split {split!r}" if split else ""))
    check_user(specs, options.user, options.env_server)
    name = policy if isinstance(policy, str) else getattr(policy, "name", type(policy).__name__)
    parallel = workers > 1 or ray_address is not None
    if parallel and not isinstance(policy, str):
        raise ValueError("workers and Ray build the policy themselves: pass a policy spec string")
    if isinstance(policy, str):
        check_policy_spec(policy)  # a typo is one clean error before any file is written or worker started
    store = RolloutStore(out)
    config = {
        "policy": name,
        "seed": seed,
        "user": options.user,
        "fault_rate": options.fault_rate,
        "max_turns": options.max_turns,
        "samples": samples,
        "timeout": options.timeout,
        "bank": None if from_specs else str(bank),  # a list of specs may grow between runs; a folder may not change
        "specs": len(specs),
        "split": split,
        "code": code_version(),
    }
    outcomes = store.open(config)
    dumps = [s.model_dump(mode="json") for s in specs]
    tasks = tasks_of(dumps, samples, seed)
    known = known_specs(dumps, specs, options)
    todo = [t for t in tasks if t.key not in outcomes or outcomes[t.key].status == RETRIED]
    store.write_manifest({"config": config, "status": "running", "planned": len(tasks)})
    size = chunk_size or auto_chunk_size(name, len(todo), workers)
    chunks = chunked(todo, size) if chunk_size or not parallel else tapered(todo, size, max(workers, 1))
    opts = dict(policy_options or {})
    start = time.perf_counter()
    with ExitStack() as cleanup:
        if ray_address is not None:
            batches = _ray(chunks, policy, opts, options, workers, ray_address)
        elif workers > 1:
            spool = cleanup.enter_context(store.spool())
            pool = cleanup.enter_context(Pool(chunks, policy, opts, options, workers, known, spool))
            batches = _as_rollout_errors(pool.batches())
        else:
            batches = _inline(todo, size, policy, opts, options, batch_size, known)
        try:
            _drain(store, batches, outcomes, len(tasks), len(tasks) - len(todo), name, progress, console)
        finally:
            store.flush()
    seconds = time.perf_counter() - start
    kept = sorted((outcomes[t.key] for t in tasks if t.key in outcomes), key=lambda o: (o.spec_id, o.sample))
    summary = counts(kept)  # in the store's order, so the mean score adds up the same
    store.write_manifest({"config": config, "status": "complete", "planned": len(tasks), **summary})
    return RolloutSummary(Path(out), len(tasks), len(tasks) - len(todo), len(todo), seconds, summary)


def _drain(
    store: RolloutStore,
    batches: Iterable[Batch],
    outcomes: dict[str, Outcome],
    total: int,
    done: int,
    name: str,
    show: bool,
    console: Console | None,
) -> None:
    """Append each batch of records as it arrives, with a progress bar; ``outcomes`` takes theirs as the store
    would keep them (so the summary needs no second read of the store)."""
    passed = seen = 0
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("pass {task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, disable=not show) as bar:
        label = name if len(name) <= 28 else name[:27] + "…"  # leave the bar room at 80 columns
        task = bar.add_task(f"rollout {label}", total=total, completed=done, rate="-")
        for batch in batches:
            store.append(batch)
            ended = outcomes_of(batch)
            for outcome in ended:
                if replaces(outcomes.get(outcome.key), outcome):
                    outcomes[outcome.key] = outcome
            seen += len(ended)
            passed += sum(1 for outcome in ended if outcome.passed)
            bar.update(task, advance=len(ended), rate=f"{passed / seen:.0%}")


def _inline(
    tasks: list[EpisodeTask],
    chunk: int,
    policy: str | Policy | TaskPolicy | BatchPolicy,
    opts: dict[str, object],
    options: RunOptions,
    batch_size: int,
    specs: SpecCache,
) -> Iterator[Batch]:
    actor: Policy | TaskPolicy | BatchPolicy = make_policy(policy, **opts) if isinstance(policy, str) else policy
    if isinstance(actor, BatchPolicy):
        for group in chunked(tasks, batch_size):
            yield run_lockstep_tasks(group, actor, options)
        return
    for group in chunked(tasks, chunk):
        yield run_tasks(group, actor, options, specs)


def _as_rollout_errors(batches: Iterator[Batch]) -> Iterator[Batch]:
    """The pool's batches, its failure raised as the run's."""
    try:
        yield from batches
    except PoolError as exc:
        raise RolloutError(str(exc)) from None


def _ray(
    chunks: list[list[EpisodeTask]],
    policy: str,
    opts: dict[str, object],
    options: RunOptions,
    workers: int,
    address: str,
) -> Iterator[Batch]:
    """One Ray actor per worker (``workers=0``: one per CPU of the cluster) on the cluster at ``address``
    (:func:`coworkenv.cluster.connect`)."""
    try:
        connect(address, workers or None)
    except ClusterError as exc:
        raise RolloutError(str(exc)) from None
    # lazy: an optional extra (ray); the core and the CLI must run without it
    from ray.util import ActorPool

    with actors(RayRolloutWorker, workers or cluster_cpus(), policy, opts) as handles:
        yield from ActorPool(handles).map_unordered(lambda actor, chunk: actor.run.remote(chunk, options), chunks)


__all__ = ["RolloutSummary", "episode_key", "plan_tasks", "rollout_bank"]
