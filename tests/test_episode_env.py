"""Every environment front end is an ``EpisodeEnv``: the runtime Environment, the env ``coworkenv.make`` returns and
the HTTP client's env (on a real server on loopback). Each has every member of the protocol with the protocol's
parameters, returns the one ``Observation`` class, and plays the same episode to the same grade."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import coworkenv
from coworkenv.interop.catalog import Catalog
from coworkenv.rollout.policies import make_policy
from coworkenv.runtime import Environment, EpisodeEnv, Observation, run_episode
from coworkenv.runtime import observation as observation_module

EXAMPLES = Path(__file__).parent.parent / "examples"
SPEC_ID = "external_quote_confirmation"
MEMBERS = sorted(
    name
    for name, value in vars(EpisodeEnv).items()
    if not name.startswith("_") and (callable(value) or isinstance(value, property))
)


def _remote() -> Iterator[Any]:
    pytest.importorskip("fastapi", reason="needs the serve extra")
    pytest.importorskip("uvicorn", reason="needs the serve extra")
    from coworkenv.interop.client import EnvClient
    from coworkenv.interop.http_server import create_app, running

    with running(create_app(Catalog.load([EXAMPLES]))) as url:
        yield EnvClient(url).make(SPEC_ID, seed=3)


@pytest.fixture(params=["runtime", "make", "http"])
def env(request: pytest.FixtureRequest) -> Iterator[Any]:
    spec = Catalog.load([EXAMPLES]).get(SPEC_ID)
    if request.param == "runtime":
        yield Environment(spec, seed=3)
    elif request.param == "make":
        yield coworkenv.make(spec, seed=3)
    else:
        yield from _remote()


def test_the_protocol_names_what_the_episode_loops_use() -> None:
    assert {"reset", "step", "grade", "spec", "messages", "done", "end", "trajectory", "astep"} <= set(MEMBERS)
    assert coworkenv.Observation is Observation is observation_module.Observation
    assert coworkenv.EpisodeEnv is EpisodeEnv


def test_every_front_end_has_the_protocol_members_with_its_parameters(env: Any) -> None:
    assert isinstance(env, EpisodeEnv)
    for name in MEMBERS:
        declared = vars(EpisodeEnv)[name]
        if isinstance(declared, property):
            assert hasattr(env, name), name
            continue
        theirs = inspect.signature(getattr(env, name)).parameters
        ours = list(inspect.signature(declared).parameters)[1:]  # without self
        assert list(theirs) == ours, (type(env).__name__, name)
        assert inspect.iscoroutinefunction(getattr(env, name)) == inspect.iscoroutinefunction(declared), name


def test_every_front_end_returns_the_one_observation_and_plays_the_same_episode(env: Any) -> None:
    first = env.reset()
    assert type(first) is Observation and not first.done and first.step == 0
    traj = run_episode(env, make_policy("oracle"))
    assert env.done and traj.grade is not None and traj.grade.score == 1.0
    local = run_episode(Environment(env.spec, seed=3), make_policy("oracle"))
    assert traj.grade == local.grade and traj.final_state_hash == local.final_state_hash
    assert type(env.step("anything more?")) is Observation  # a step after the end still observes


def test_a_front_end_missing_a_member_is_not_one() -> None:
    """The check above can fail: an object without ``end`` is refused."""

    class Partial:
        spec = messages = done = None

        def reset(self) -> Observation: ...
        def step(self, turn: Any) -> Observation: ...
        def grade(self) -> Any: ...
        def trajectory(self, policy: str = "", sample: int = 0) -> Any: ...

    assert not isinstance(Partial(), EpisodeEnv)
