"""The Gymnasium environment: the real checker, registration, an oracle episode through text actions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("gymnasium", reason="needs the gym extra")

import gymnasium
from gymnasium.utils.env_checker import check_env

import coworkenv.gym
from coworkenv.agents import OracleTeacher
from coworkenv.interop.catalog import Catalog
from coworkenv.runtime import Environment, run_episode

EXAMPLES = Path(__file__).parent.parent / "examples"
SPEC = EXAMPLES / "external_quote_confirmation.yaml"


def as_text(message: dict) -> str:
    """An assistant message written the way a text model writes it."""
    calls = [
        f'<tool_call>{{"name": "{c["function"]["name"]}", "arguments": {c["function"]["arguments"]}}}</tool_call>'
        for c in message.get("tool_calls", [])
    ]
    return "\n".join([message.get("content") or "", *calls]).strip()


def test_passes_the_gymnasium_checker_over_a_bank_and_a_spec() -> None:
    for kwargs in ({"bank": EXAMPLES}, {"spec": SPEC}):
        env = gymnasium.make(coworkenv.gym.ENV_ID, **kwargs)
        check_env(env.unwrapped, skip_render_check=True)


def test_reset_is_seeded_and_options_choose_the_environment() -> None:
    env = gymnasium.make("coworkenv/Bank-v0", bank=EXAMPLES)
    firsts = {env.reset(seed=s)[1]["env_id"] for s in range(12)}
    assert len(firsts) > 3 and env.reset(seed=5) == env.reset(seed=5)
    obs, info = env.reset(options={"env_id": "external_quote_confirmation"})
    assert info["env_id"] == "external_quote_confirmation" and info["tools"]
    assert json.loads(obs)[-1]["role"] == "user" and env.observation_space.contains(obs)


def test_oracle_text_actions_earn_the_full_reward_only_at_the_end() -> None:
    spec = Catalog.load([SPEC]).get("external_quote_confirmation")
    reference = run_episode(Environment(spec), OracleTeacher())
    env = gymnasium.make("coworkenv/Bank-v0", spec=SPEC)
    env.reset(seed=0)
    rewards, done, info = [], False, {}
    for message in (m for m in reference.messages if m["role"] == "assistant"):
        obs, reward, terminated, truncated, info = env.step(as_text(message))
        assert env.observation_space.contains(obs)
        rewards.append(reward)
        done = terminated or truncated
    assert done and terminated and rewards[-1] == 1.0 and set(rewards[:-1]) == {0.0}
    assert info["grade"]["passed"] and info["done_reason"] == "user_done"


def test_limits_truncate_and_long_observations_fit_the_space() -> None:
    env = coworkenv.gym.CoworkEnv(spec=SPEC, max_chars=300)
    obs, _ = env.reset(seed=0)
    assert len(obs) <= 300 and env.observation_space.contains(obs)
    truncated = False
    for _ in range(40):
        obs, reward, terminated, truncated, info = env.step(
            '<tool_call>{"name": "contacts_search", "arguments": {"query": "a"}}</tool_call>'
        )
        if terminated or truncated:
            break
    assert truncated and not terminated and info["done_reason"] in {"max_turns", "max_tool_calls"}
    assert reward < 0.75


def test_the_docs_gymnasium_snippet_runs_as_written() -> None:
    import re
    import subprocess
    import sys

    root = EXAMPLES.parent
    section = (root / "docs" / "serving.md").read_text().split("## Gymnasium", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1) + "\nassert not terminated and 'Kenji' in obs\n"
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
