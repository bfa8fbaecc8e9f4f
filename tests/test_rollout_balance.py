"""What a pooled rollout does around its episodes: chunks that taper so workers finish together, the same store
as one process writes, workers that collect their young objects rarely, and the environment's fault generator
seeded only when drawn from, exactly as an eager seeding would have it."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from coworkenv.agents import OracleTeacher
from coworkenv.bank.sources import load_specs
from coworkenv.rollout import rollout_bank
from coworkenv.rollout.runner import auto_chunk_size, tapered
from coworkenv.rollout.worker import EpisodeTask
from coworkenv.runtime import Environment, run_episode
from coworkenv.trajectory import Trajectory

EXAMPLES = Path(__file__).parent.parent / "examples"
_SECONDS = re.compile(rb'"seconds": [0-9.e-]+')


def _tasks(n: int) -> list[EpisodeTask]:
    return [EpisodeTask({"id": f"s{i // 7}"}, i % 7, i % 7) for i in range(n)]


@pytest.mark.parametrize(("n", "workers"), [(0, 2), (1, 2), (7, 2), (100, 2), (1440, 2), (1440, 8), (333, 3)])
def test_tapered_chunks_hold_every_task_once_in_order_and_shrink(n: int, workers: int) -> None:
    tasks = _tasks(n)
    size = auto_chunk_size("oracle", n, workers)
    chunks = tapered(tasks, size, workers)
    assert [t for chunk in chunks for t in chunk] == tasks  # nothing lost, repeated or reordered
    sizes = [len(c) for c in chunks]
    assert all(0 < s <= size for s in sizes)
    assert sizes == sorted(sizes, reverse=True)  # large first (few messages), small last (an even finish)
    if n >= 8 * size:  # a long run: the tail ends well below a full chunk, the head is full chunks
        assert sizes[0] == size and sizes[-1] <= max(1, size // 8) + 1


def test_a_last_chunk_is_never_more_than_its_share_of_what_is_left() -> None:
    chunks = tapered(_tasks(1440), 64, 2)
    left = 1440
    for chunk in chunks:
        assert len(chunk) <= max(8, -(-left // 4))  # at most a quarter of the rest (2 workers), or the smallest
        left -= len(chunk)


def _lines(out: Path) -> bytes:
    return _SECONDS.sub(b'"seconds": 0', (out / "episodes.jsonl").read_bytes())


def test_a_pool_with_tapered_chunks_writes_the_store_one_process_writes(tmp_path: Path) -> None:
    specs = load_specs(EXAMPLES)[:6]
    inline = rollout_bank(specs, "oracle", 5, tmp_path / "inline", progress=False)
    pooled = rollout_bank(specs, "oracle", 5, tmp_path / "pool", workers=2, progress=False)
    assert inline.ran == pooled.ran == 30 and inline.counts == pooled.counts
    assert _lines(tmp_path / "inline") == _lines(tmp_path / "pool")  # byte for byte, in the same order


def test_the_fault_generator_plays_as_one_seeded_at_every_reset() -> None:
    """Random faults drawn from the lazily seeded generator hit the calls an eagerly seeded one hits, episode after
    episode of one environment (each reset seeds again, whatever the last episode drew)."""
    spec = next(s for s in load_specs(EXAMPLES) if not s.stages)
    lazy = Environment(spec, seed=0, fault_rate=0.4)
    eager = Environment(spec, seed=0, fault_rate=0.4)
    for seed in (3, 3, 11):
        lazy.seed = eager.seed = seed
        lazy_traj = run_episode(lazy, OracleTeacher())
        eager.reset()
        eager.rng = random.Random(seed)  # as reset seeded it before
        eager_traj = _play_on(eager)
        assert any(c.fault for c in lazy_traj.calls) or seed == 11
        assert lazy_traj.calls == eager_traj.calls and lazy_traj.grade == eager_traj.grade
        assert lazy.rng.getstate() == eager.rng.getstate()  # drawn alike
    lazy.seed = 5
    lazy.reset()
    assert lazy.rng.getstate() == random.Random(5).getstate()


def _play_on(env: Environment) -> Trajectory:
    """Play the oracle on ``env`` as it stands (already reset), and return its trajectory."""
    actor = OracleTeacher().for_task(env.spec)
    obs = None
    while obs is None or not obs.done:
        obs = env.step(actor.act(list(env.messages), env.router.schemas()))
    return env.trajectory(policy="oracle")


def test_the_driver_digests_initial_records_before_its_workers_fork() -> None:
    """Forked workers inherit the initial records' digests (which every episode's state hash adds to) computed,
    instead of each computing them again; and the state hash they then give is the one computed from scratch."""
    from coworkenv.rollout.worker import _SPECS, RunOptions, forget_prepared, prepare_for_fork
    from coworkenv.runtime.digest import full_digest

    spec = load_specs(EXAMPLES)[0]  # freshly loaded: fixtures no workspace has been built from
    task = EpisodeTask(spec.model_dump(mode="json"), 0, 0)
    prepare_for_fork([task], RunOptions())
    try:
        env = _SPECS.get(task, RunOptions()).env
        assert env is not None
        initial = env.workspace._digest._initial
        assert initial._parts is not None and len(initial._parts) > 0
        assert env.workspace.state_hash() == full_digest(env.workspace.state)
    finally:
        forget_prepared()
