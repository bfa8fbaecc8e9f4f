"""Running episodes inside a worker, each under its time budget (:mod:`coworkenv.rollout.deadline`),
into encoded store records."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from coworkenv.interop.client import client_for
from coworkenv.rollout.deadline import Deadline
from coworkenv.rollout.environments import make_environment
from coworkenv.rollout.policies import make_policy
from coworkenv.rollout.store import Batch, Encoded, Spool, episode_key
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.episode import run_episode, run_lockstep
from coworkenv.runtime.observation import EpisodeEnv
from coworkenv.runtime.policy import BatchPolicy, Policy, TaskPolicy, actor_for
from coworkenv.spec.models import TaskSpec
from coworkenv.trajectory import EpisodeRecord, EpisodeStatus, Trajectory


@dataclass(frozen=True)
class EpisodeTask:
    """One episode to run; the spec travels as plain data so any process or Ray node can take it."""

    spec: dict[str, Any]
    sample: int
    seed: int

    @property
    def key(self) -> str:
        return episode_key(self.spec["id"], self.sample)


@dataclass(frozen=True)
class RunOptions:
    """How each episode runs: its time budget in seconds (None: unlimited), the user (an LLM
    phrasing the scripted one), random transient faults, a turn cap below the spec's own, and
    a ``coworkenv serve http`` server (and token) to play it on instead of in-process."""

    timeout: float | None = 300.0
    user: str | None = None
    fault_rate: float = 0.0
    max_turns: int | None = None
    env_server: str | None = None
    env_token: str | None = None


def open_environment(spec: TaskSpec, seed: int, options: RunOptions) -> EpisodeEnv:
    """A local environment, or a session on ``coworkenv serve http`` when ``options.env_server`` is set."""
    if not options.env_server:
        return make_environment(
            spec, seed, user=options.user, fault_rate=options.fault_rate, max_turns=options.max_turns
        )
    return client_for(options.env_server, options.env_token).make(spec=spec, seed=seed, max_turns=options.max_turns)


def close_environment(env: EpisodeEnv) -> None:
    """Free a remote session (local environments hold nothing to free)."""
    if hasattr(env, "close"):
        env.close()


def episode_record(
    task: EpisodeTask, policy_name: str, traj: Trajectory | None, error: str | None, *, timed_out: bool = False
) -> EpisodeRecord:
    """The store record of one finished (or failed) episode; ``timed_out``: its Deadline expired."""
    status: EpisodeStatus
    if traj is not None and traj.error and timed_out:
        traj.done_reason = "timeout"
        status = "timeout"
    else:
        status = "error" if traj is None or traj.error else "ok"
    grade = traj.grade if traj is not None else None
    return EpisodeRecord(
        key=task.key,
        spec_id=task.spec["id"],
        sample=task.sample,
        seed=task.seed,
        policy=policy_name,
        status=status,
        error=error or (traj.error if traj is not None else None),
        score=grade.score if grade else None,
        passed=grade.passed if grade else False,
        seconds=traj.seconds if traj is not None else None,
        trajectory=traj,
    )


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:500]}"


def encode_record(
    task: EpisodeTask,
    policy_name: str,
    traj: Trajectory | None,
    error: str | None,
    *,
    timed_out: bool = False,
) -> Encoded:
    """The store line of an episode; one whose trajectory cannot be serialised is kept as an error record."""
    try:
        return Encoded.of(episode_record(task, policy_name, traj, error, timed_out=timed_out))
    except (ValueError, TypeError, RecursionError) as exc:
        return Encoded.of(episode_record(task, policy_name, None, f"cannot serialise the trajectory: {_failure(exc)}"))


class SpecEpisodes:
    """The episodes of one spec in a worker, played one after another in one environment.

    Building an Environment costs about what a short episode does, and every episode starts with ``reset``
    (which puts the workspace, user, events, checks and seeded faults back), so a local environment is built
    once and reseeded per episode. An episode that raised leaves its environment behind: the next one builds a
    fresh one."""

    def __init__(self, spec: TaskSpec, options: RunOptions) -> None:
        self.spec = spec
        self.options = options
        self.env: Environment | None = None

    @property
    def shared(self) -> bool:
        """Whether its episodes share one local environment (not remote sessions, not LLM users)."""
        return not (self.options.env_server or self.options.user)

    def environment(self, seed: int) -> EpisodeEnv:
        if not self.shared:  # remote sessions and LLM users: one per episode
            return open_environment(self.spec, seed, self.options)
        return self.local(seed)

    def local(self, seed: int) -> Environment:
        """The shared local environment, built on first use and reseeded to ``seed``."""
        if self.env is None:
            self.env = make_environment(
                self.spec, seed, fault_rate=self.options.fault_rate, max_turns=self.options.max_turns
            )
        self.env.seed = seed
        return self.env

    def run(self, task: EpisodeTask, policy: Policy | TaskPolicy) -> Encoded:
        """Run one episode; never raises (a broken environment or trajectory becomes an ``error`` record)."""
        name = getattr(policy, "name", type(policy).__name__)
        try:
            env = self.environment(task.seed)
            actor = actor_for(policy, self.spec)
            with Deadline(actor.act, self.options.timeout, name) as deadline:
                traj = run_episode(env, deadline, sample=task.sample)
            close_environment(env)
        except Exception as exc:  # recorded, so the run goes on and the failure is visible
            self.env = None
            return encode_record(task, name, None, _failure(exc))
        return encode_record(task, name, traj, None, timed_out=deadline.expired)


def run_task(
    task: EpisodeTask, policy: Policy | TaskPolicy, options: RunOptions, spec: TaskSpec | None = None
) -> Encoded:
    """Run one episode; never raises (a broken spec, environment or trajectory becomes an ``error`` record)."""
    try:
        spec = spec or TaskSpec.model_validate(task.spec)
    except Exception as exc:  # recorded, so the run goes on and the failure is visible
        return encode_record(task, getattr(policy, "name", type(policy).__name__), None, _failure(exc))
    return SpecEpisodes(spec, options).run(task, policy)


def run_lockstep_tasks(tasks: list[EpisodeTask], policy: BatchPolicy, options: RunOptions) -> list[Encoded]:
    """Episodes of a batching policy (``act_batch``) played together, one batched turn at a time.

    Never raises: episodes whose spec or environment cannot be built are error records, the
    rest play on.
    """
    name = getattr(policy, "name", type(policy).__name__)
    records: dict[int, Encoded] = {}
    envs, playing = [], []
    for i, task in enumerate(tasks):
        try:
            envs.append(open_environment(TaskSpec.model_validate(task.spec), task.seed, options))
            playing.append(i)
        except Exception as exc:  # recorded, so the batch goes on
            records[i] = encode_record(task, name, None, _failure(exc))
    start = time.perf_counter()
    try:
        with Deadline(policy.act_batch, options.timeout, name) as deadline:
            trajs: list[Trajectory | None] = list(
                run_lockstep(envs, deadline, policy_name=name, samples=[tasks[i].sample for i in playing])
            )
        failure = None
    except Exception as exc:  # the environments themselves failed: every episode of the batch is an error
        trajs, failure = [None] * len(playing), _failure(exc)
    seconds = round(time.perf_counter() - start, 6)
    for env in envs:
        close_environment(env)
    for i, traj in zip(playing, trajs, strict=True):
        if traj is not None:
            traj.seconds = seconds
        records[i] = encode_record(tasks[i], name, traj, failure, timed_out=deadline.expired)
    return [records[i] for i in range(len(tasks))]


class SpecCache:
    """The :class:`SpecEpisodes` of a worker's life (an inline run, a pool process, a Ray actor), so that a spec
    met in an earlier chunk keeps its validated spec and its environment. A spec is known by its id and options,
    and used again only if its data is equal (a cheap check next to validating it and building its environment).

    After an equal check the entry keeps the data just compared: a chunk's tasks share one copy of their spec
    (pickled once per chunk), so the rest of the chunk is known by identity, not compared again (comparing a
    spec's data costs a third of an episode)."""

    def __init__(self, limit: int = 256) -> None:
        self.limit = limit
        self.entries: dict[tuple[str, RunOptions], tuple[dict[str, object], SpecEpisodes]] = {}

    def get(self, task: EpisodeTask, options: RunOptions) -> SpecEpisodes:
        """The spec's episodes; raises what validating the spec raises."""
        key = (task.spec["id"], options)
        entry = self.entries.get(key)
        if entry is not None:
            if entry[0] is task.spec:
                return entry[1]
            if entry[0] == task.spec:
                self.entries[key] = (task.spec, entry[1])
                return entry[1]
        return self.add(task.spec, TaskSpec.model_validate(task.spec), options)

    def add(self, data: dict[str, object], spec: TaskSpec, options: RunOptions) -> SpecEpisodes:
        """Know ``data`` as ``spec``: the caller vouches that ``spec`` is ``data`` validated (a spec and its own
        dump: rollout_bank dumps the validated specs it was given, so validating the dumps again is skipped)."""
        key = (str(data["id"]), options)
        episodes = SpecEpisodes(spec, options)
        self.entries.pop(key, None)
        if len(self.entries) >= self.limit:
            del self.entries[next(iter(self.entries))]
        self.entries[key] = (data, episodes)
        return episodes


def run_tasks(
    tasks: list[EpisodeTask], policy: Policy | TaskPolicy, options: RunOptions, cache: SpecCache | None = None
) -> list[Encoded]:
    """Episodes one after another, validating each distinct spec once and playing its samples in one
    environment (:class:`SpecEpisodes`); ``cache`` carries both over to the next call."""
    cache = cache or SpecCache()
    out = []
    for task in tasks:
        try:
            episodes = cache.get(task, options)
        except Exception:  # run_task records the validation error on the episode
            out.append(run_task(task, policy, options))
            continue
        out.append(episodes.run(task, policy))
    return out


# --- process-pool workers: the policy is built once per process --------------------------------

_POLICY: Policy | TaskPolicy | None = None
_POLICY_ERROR: str | None = None
_SPECS = SpecCache()
_SPOOL: Spool | None = None


class PolicyLoadError(RuntimeError):
    """A worker could not build the policy: reported once by the driver, not as a traceback per worker."""


def exit_with_parent(parent: int, interval: float = 0.5) -> None:
    """End this process soon after ``parent`` dies (a SIGKILLed driver can't shut its pool down,
    and its workers would otherwise wait on their queue forever)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


WorkerInit = tuple[str, dict[str, object], int | None, str | None]
""":func:`init_worker`'s arguments, as a pool hands them to each worker process."""


def init_worker(
    policy_spec: str, policy_options: dict[str, object], parent: int | None = None, spool: str | None = None
) -> None:
    """Set up a pool worker: its policy and the run's spool folder (``spool``: its chunks' lines go there, see
    :class:`~coworkenv.rollout.store.Spool`)."""
    global _POLICY, _POLICY_ERROR, _SPOOL
    _SPOOL = None if spool is None else Spool(spool)
    if parent is not None:
        exit_with_parent(parent)
    try:
        _POLICY = build_policy(policy_spec, policy_options)
    except PolicyLoadError as exc:  # raised by run_chunk, so the driver reports it once
        _POLICY_ERROR = str(exc)


def build_policy(policy_spec: str, policy_options: dict[str, object]) -> Policy | TaskPolicy:
    """:func:`~coworkenv.rollout.policies.make_policy`, a failure raised as :class:`PolicyLoadError` naming the
    policy (a pool worker's, or a pool driver's that plays episodes too)."""
    try:
        return make_policy(policy_spec, **policy_options)
    except Exception as exc:
        raise PolicyLoadError(f"cannot build policy {policy_spec!r}: {_failure(exc)}") from None


def prepare_for_fork(
    tasks: list[EpisodeTask], options: RunOptions, known: SpecCache | None = None, *, environments: bool = True
) -> None:
    """Validate each spec of ``tasks`` and (``environments``) build its environment in this process's worker cache,
    so that pool workers forked next inherit them instead of each doing it again (a worker still checks a task's
    spec data against the inherited one); the digests of its initial records too, which every episode's state hash
    adds to and each worker would otherwise compute for itself. ``known``: specs already validated (see
    :meth:`SpecCache.add`). A spec that fails here is left to the worker, which records its error.

    A driver that plays beside its workers asks for specs alone: then each process builds the environments of the
    chunks it plays, at the same time as the others (built here, all of them would be built before any episode
    began, on one core while the others wait), and a process's own environments are its own memory pages, not
    pages shared with the fork that the first write copies."""
    if known is not None:
        _SPECS.entries.update(known.entries)
    for task in tasks:
        try:
            episodes = _SPECS.get(task, options)
            if environments and episodes.shared and episodes.env is None:
                episodes.local(task.seed).workspace.state_hash()
        except Exception:  # the worker meets it again and records it on the episode
            continue


def forget_prepared() -> None:
    """Drop what :func:`prepare_for_fork` kept here, once the workers have forked."""
    _SPECS.entries.clear()


def run_chunk(tasks: list[EpisodeTask], options: RunOptions) -> Batch:
    """A pool worker's chunk: its records, left in the spool where the run has one."""
    if _POLICY is None:
        raise PolicyLoadError(_POLICY_ERROR or "this worker was not set up: init_worker builds its policy")
    records = run_tasks(tasks, _POLICY, options, _SPECS)
    return records if _SPOOL is None else _SPOOL.put(records)


_CHUNKS: list[list[EpisodeTask]] = []


def share_chunks(chunks: list[list[EpisodeTask]]) -> None:
    """Keep the run's chunks here for pool workers forked next, which then take a chunk by its index: its tasks
    (the very objects the driver made, specs and all) travel by the fork instead of being pickled into each
    message, and a worker knows their specs by identity instead of comparing each chunk's copy again."""
    global _CHUNKS
    _CHUNKS = chunks


def run_shared_chunk(index: int, options: RunOptions) -> Batch:
    """:func:`run_chunk` of the ``index``-th chunk shared by :func:`share_chunks` before the fork."""
    return run_chunk(_CHUNKS[index], options)


class RayRolloutWorker:
    """The body of a Ray actor (wrapped with ``ray.remote`` by the runner): one policy per actor."""

    def __init__(self, policy_spec: str, policy_options: dict[str, object]) -> None:
        self.policy = make_policy(policy_spec, **policy_options)
        self.specs = SpecCache()

    def run(self, tasks: list[EpisodeTask], options: RunOptions) -> list[Encoded]:
        return run_tasks(tasks, self.policy, options, self.specs)
