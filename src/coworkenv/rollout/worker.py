"""Running episodes inside a worker, under a per-episode time budget.

Policy calls are the slow part (the environment is pure Python and fast), so the budget is
enforced around them: a call that starts after the deadline raises at once, and a call
still running at the deadline is interrupted by SIGALRM (main thread only; elsewhere the
deadline is checked between calls). Either way the episode ends, keeps its partial
trajectory and is recorded with status ``timeout`` rather than lost.
"""

from __future__ import annotations

import _signal
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from coworkenv.interop.client import client_for
from coworkenv.rollout.environments import make_environment
from coworkenv.rollout.policies import make_policy
from coworkenv.rollout.lines import ToolMenu
from coworkenv.rollout.store import Encoded, episode_key
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.episode import run_episode, run_lockstep
from coworkenv.runtime.policy import actor_for
from coworkenv.spec.models import TaskSpec
from coworkenv.trajectory import EpisodeRecord, EpisodeStatus, Trajectory


class EpisodeTimeout(Exception):
    """The episode's time budget ran out."""


class _Alarm(BaseException):
    """Raised by SIGALRM inside a policy call: a BaseException so that client libraries'
    ``except Exception`` (the OpenAI SDK turns those into retryable connection errors)
    cannot swallow it; :class:`Deadline` turns it into an EpisodeTimeout."""


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


def open_environment(spec: TaskSpec, seed: int, options: RunOptions) -> Any:
    """A local environment, or a session on ``coworkenv serve http`` when ``options.env_server`` is set."""
    if not options.env_server:
        return make_environment(
            spec, seed, user=options.user, fault_rate=options.fault_rate, max_turns=options.max_turns
        )
    return client_for(options.env_server, options.env_token).make(spec=spec, seed=seed, max_turns=options.max_turns)


def close_environment(env: Any) -> None:
    """Free a remote session (local environments hold nothing to free)."""
    if hasattr(env, "close"):
        env.close()


@contextmanager
def alarm(seconds: float) -> Iterator[None]:
    """Interrupt the main thread after ``seconds``; a no-op elsewhere."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def _fire(signum: int, frame: Any) -> None:
        raise _Alarm

    # _signal.signal: signal.signal is the same call wrapped in enum conversions that cost ~20 µs each, and this
    # runs twice per policy call (an oracle episode makes about seven)
    previous = _signal.signal(signal.SIGALRM, _fire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _signal.signal(signal.SIGALRM, previous)


class Deadline:
    """Wraps a policy call (``act`` or ``act_batch``) with the episode's deadline."""

    def __init__(self, call: Callable[..., Any], timeout: float | None, name: str) -> None:
        self.call = call
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.name = name
        self.expired = False
        """Set when the budget ran out: the episode's error is then a timeout, whatever its text."""

    def __call__(self, *args: Any) -> Any:
        if self.deadline is None:
            return self.call(*args)
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.expired = True
            raise EpisodeTimeout("episode exceeded its time budget")
        try:
            with alarm(left):
                return self.call(*args)
        except _Alarm:
            self.expired = True
            raise EpisodeTimeout(f"episode exceeded its time budget (interrupted after {left:.1f}s)") from None

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return self(messages, tools)


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
    menu: ToolMenu | None = None,
) -> Encoded:
    """The store line of an episode; one whose trajectory cannot be serialised is kept as an error record."""
    try:
        return Encoded.of(episode_record(task, policy_name, traj, error, timed_out=timed_out), menu)
    except (ValueError, TypeError, RecursionError) as exc:
        return Encoded.of(episode_record(task, policy_name, None, f"cannot serialise the trajectory: {_failure(exc)}"))


class SpecEpisodes:
    """The episodes of one spec in a worker, played one after another in one environment.

    Building an Environment costs about what a short episode does, and every episode starts with ``reset``
    (which puts the workspace, user, events, checks and seeded faults back), so a local environment is built
    once and reseeded per episode; its tool menu is encoded once for all the records (:class:`ToolMenu`). An
    episode that raised leaves its environment behind: the next one builds a fresh one."""

    def __init__(self, spec: TaskSpec, options: RunOptions) -> None:
        self.spec = spec
        self.options = options
        self.env: Environment | None = None
        self.menu: ToolMenu | None = None

    def environment(self, seed: int) -> Any:
        if self.options.env_server or self.options.user:  # remote sessions and LLM users: one per episode
            return open_environment(self.spec, seed, self.options)
        if self.env is None:
            self.env = open_environment(self.spec, seed, self.options)
            self.menu = ToolMenu(self.env.router.schemas())
        self.env.seed = seed
        return self.env

    def run(self, task: EpisodeTask, policy: Any) -> Encoded:
        """Run one episode; never raises (a broken environment or trajectory becomes an ``error`` record)."""
        name = getattr(policy, "name", type(policy).__name__)
        try:
            env = self.environment(task.seed)
            actor = actor_for(policy, self.spec)
            deadline = Deadline(actor.act, self.options.timeout, name)
            traj = run_episode(env, deadline, sample=task.sample)
            close_environment(env)
        except Exception as exc:  # recorded, so the run goes on and the failure is visible
            self.env = self.menu = None
            return encode_record(task, name, None, _failure(exc))
        menu = self.menu if env is self.env else None
        return encode_record(task, name, traj, None, timed_out=deadline.expired, menu=menu)


def run_task(task: EpisodeTask, policy: Any, options: RunOptions, spec: TaskSpec | None = None) -> Encoded:
    """Run one episode; never raises (a broken spec, environment or trajectory becomes an ``error`` record)."""
    try:
        spec = spec or TaskSpec.model_validate(task.spec)
    except Exception as exc:  # recorded, so the run goes on and the failure is visible
        return encode_record(task, getattr(policy, "name", type(policy).__name__), None, _failure(exc))
    return SpecEpisodes(spec, options).run(task, policy)


def run_lockstep_tasks(tasks: list[EpisodeTask], policy: Any, options: RunOptions) -> list[Encoded]:
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
    deadline = Deadline(policy.act_batch, options.timeout, name)
    try:
        trajs: list[Trajectory | None] = list(
            run_lockstep(
                envs,
                deadline,
                policy_name=name,
                samples=[tasks[i].sample for i in playing],
            )
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


def run_tasks(tasks: list[EpisodeTask], policy: Any, options: RunOptions) -> list[Encoded]:
    """Episodes one after another, validating each distinct spec once and playing its samples in one
    environment (:class:`SpecEpisodes`)."""
    specs: dict[str, SpecEpisodes] = {}
    out = []
    for task in tasks:
        spec_id = task.spec["id"]
        if spec_id not in specs:
            try:
                specs[spec_id] = SpecEpisodes(TaskSpec.model_validate(task.spec), options)
            except Exception:  # run_task records the validation error on the episode
                out.append(run_task(task, policy, options))
                continue
        out.append(specs[spec_id].run(task, policy))
    return out


# --- process-pool workers: the policy is built once per process --------------------------------

_POLICY: Any = None
_POLICY_ERROR: str | None = None


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


def init_worker(policy_spec: str, policy_options: dict[str, Any], parent: int | None = None) -> None:
    global _POLICY, _POLICY_ERROR
    if parent is not None:
        exit_with_parent(parent)
    try:
        _POLICY = make_policy(policy_spec, **policy_options)
    except Exception as exc:  # raised by run_chunk, so the driver reports it once
        _POLICY_ERROR = f"cannot build policy {policy_spec!r}: {_failure(exc)}"


def run_chunk(tasks: list[EpisodeTask], options: RunOptions) -> list[Encoded]:
    if _POLICY_ERROR is not None:
        raise PolicyLoadError(_POLICY_ERROR)
    return run_tasks(tasks, _POLICY, options)


class RayRolloutWorker:
    """The body of a Ray actor (wrapped with ``ray.remote`` by the runner): one policy per actor."""

    def __init__(self, policy_spec: str, policy_options: dict[str, Any]) -> None:
        self.policy = make_policy(policy_spec, **policy_options)

    def run(self, tasks: list[EpisodeTask], options: RunOptions) -> list[Encoded]:
        return run_tasks(tasks, self.policy, options)
