"""coworkenv environments on OpenEnv's protocol: openenv-core's own clients reset and step them on loopback, over
HTTP and over WebSocket sessions that stay apart, and the grade comes back as the reward at the end."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openenv.core.env_server", reason="needs the openenv extra (openenv-core)")
pytest.importorskip("uvicorn", reason="needs the serve extra")

from openenv.core.generic_client import GenericEnvClient

from coworkenv.agents import OracleTeacher
from coworkenv.interop.catalog import Catalog
from coworkenv.interop.http_server import running
from coworkenv.interop.openenv_server import CoworkAction, CoworkEnvClient, create_openenv_app
from coworkenv.runtime import Environment, run_episode

EXAMPLES = Path(__file__).parent.parent / "examples"
IDS = ("expense_over_limit_approval", "external_quote_confirmation")


@pytest.fixture(scope="module")
def served() -> Any:
    catalog = Catalog.load([EXAMPLES / f"{i}.yaml" for i in IDS])
    with running(create_openenv_app(catalog)) as url:
        yield catalog, url


def turns(catalog: Catalog, env_id: str) -> tuple[list[dict[str, Any]], Any]:
    """The assistant turns of coworkenv's own episode loop with the oracle, and that episode's trajectory."""
    traj = run_episode(Environment(catalog.get(env_id)), OracleTeacher())
    return [m for m in traj.messages if m["role"] == "assistant"], traj


def test_openenvs_generic_client_plays_an_episode_to_the_same_reward(served: Any) -> None:
    catalog, url = served
    played, traj = turns(catalog, IDS[0])
    with GenericEnvClient(base_url=url).sync() as client:
        first = client.reset(env_id=IDS[0])
        assert first.reward is None and not first.done and first.observation["tools"]
        assert first.observation["messages"][-1]["role"] == "user"
        result = first
        for i, turn in enumerate(played):
            assert not result.done, i
            result = client.step({"content": turn.get("content") or "", "tool_calls": turn.get("tool_calls") or []})
            assert result.done or result.reward is None  # the reward comes at the end
        assert result.done and result.reward == traj.grade.score == 1.0
        assert result.observation["grade"]["passed"]
        assert client.state()["state_hash"] == traj.final_state_hash
        with pytest.raises(Exception, match="over"):
            client.step({"content": "one more"})


def test_sessions_are_apart_and_the_typed_client_sees_errors_as_observations(served: Any) -> None:
    catalog, url = served
    played, traj = turns(catalog, IDS[1])
    hashes: dict[str, str] = {}

    def idle() -> None:  # a second session, reset and left alone while the first plays
        with CoworkEnvClient(base_url=url).sync() as other:
            other.reset(env_id=IDS[1])
            started.wait(30)
            hashes["before"] = other.state().state_hash
            finished.wait(30)
            hashes["after"] = other.state().state_hash

    started, finished = threading.Event(), threading.Event()
    thread = threading.Thread(target=idle)
    thread.start()
    with CoworkEnvClient(base_url=url).sync() as client:
        result = client.reset(env_id=IDS[1])
        started.set()
        bad = client.step(CoworkAction(tool_calls=[{"name": "no_such_tool", "arguments": {}}]))
        assert "unknown tool 'no_such_tool'" in bad.observation.messages[-1]["content"] and not bad.done
        result = client.reset(env_id=IDS[1])
        for turn in played:
            result = client.step(
                CoworkAction(content=turn.get("content") or "", tool_calls=turn.get("tool_calls") or [])
            )
        assert result.done and result.reward == traj.grade.score and client.state().state_hash == traj.final_state_hash
    finished.set()
    thread.join(30)
    assert hashes["before"] == hashes["after"] != traj.final_state_hash


def test_http_reset_answers_the_first_observation_and_a_bad_action_is_refused(served: Any) -> None:
    import requests

    _, url = served
    body = requests.post(f"{url}/reset", json={"env_id": IDS[1]}, timeout=30).json()
    assert body["done"] is False and body["observation"]["env_id"] == IDS[1]
    assert requests.post(f"{url}/reset", json={"seed": 1}, timeout=30).json()["observation"]["env_id"] == IDS[1]
    refused = requests.post(f"{url}/step", json={"action": {"shell": "rm -rf /"}}, timeout=30)
    assert refused.status_code == 422
    schema = requests.get(f"{url}/schema", timeout=30).json()
    assert "tool_calls" in str(schema["action"])
