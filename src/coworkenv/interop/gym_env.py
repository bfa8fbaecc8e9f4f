"""A Gymnasium environment over one spec or a bank: text in, text out, reward on the final step.

Observations are the new messages of each step as JSON (ASCII-escaped, so they always lie
in the declared :class:`~gymnasium.spaces.Text` space); the tool schemas come in ``info``
at reset. Actions are what a text model writes: plain text to the user and/or
``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks, parsed exactly as the
project's transformers policy parses them. The reward is 0 until the episode ends, then
the grade's score; ``info["grade"]`` holds the whole grade. Over a bank, ``reset`` draws the
environment from its seeded RNG (or takes ``options={"env_id": …}``).
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import gymnasium
from gymnasium import spaces

from coworkenv.agents.chat_format import parse_assistant_text
from coworkenv.interop.catalog import Catalog
from coworkenv.interop.env import Env, Observation, resolve_spec
from coworkenv.spec.models import TaskSpec

ENV_ID = "coworkenv/Bank-v0"
CHARSET = string.printable
TRUNCATED = "...[truncated]"
LIMIT_REASONS = {"max_turns", "max_tool_calls"}


class CoworkEnv(gymnasium.Env[str, str]):
    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        spec: TaskSpec | dict[str, object] | str | Path | None = None,
        bank: str | Path | None = None,
        env_id: str | None = None,
        split: str | None = None,
        max_chars: int = 1 << 20,
        render_mode: str | None = None,
    ) -> None:
        if (spec is None) == (bank is None):
            raise ValueError("give exactly one of spec= or bank=")
        if spec is not None:
            self.catalog = Catalog([resolve_spec(spec, env_id)])
        else:
            self.catalog = Catalog.load([bank], split=split)  # type: ignore[list-item]
            if env_id is not None:
                self.catalog = Catalog([self.catalog.get(env_id)])
        if not len(self.catalog):
            raise ValueError(f"{bank}: no environments")
        self.max_chars = max_chars
        self.render_mode = render_mode
        self.observation_space = spaces.Text(max_length=max_chars, min_length=0, charset=CHARSET)
        self.action_space = spaces.Text(max_length=4096, min_length=0, charset=CHARSET)
        self.env: Env | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, object] | None = None
    ) -> tuple[str, dict[str, object]]:
        super().reset(seed=seed)
        ids = self.catalog.ids()
        chosen = str((options or {}).get("env_id") or ids[int(self.np_random.integers(len(ids)))])
        episode_seed = int(self.np_random.integers(2**31))
        self.env = Env(self.catalog.get(chosen), seed=episode_seed)
        obs = self.env.reset()
        return self._text(obs.messages), {"env_id": chosen, "seed": episode_seed, "tools": obs.tools}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, object]]:
        if self.env is None:
            raise RuntimeError("call reset() before step()")
        obs: Observation = self.env.step(parse_assistant_text(str(action), self.env.runtime.step_count + 1))
        reason = obs.info.get("done_reason", "")
        truncated = obs.done and reason in LIMIT_REASONS
        terminated = obs.done and not truncated
        reward = float(obs.reward or 0.0) if obs.done else 0.0
        return self._text(obs.messages), reward, terminated, truncated, dict(obs.info, step=obs.step)

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.env is None:
            return None
        return "\n".join(f"{m['role']}: {m.get('content') or ''}" for m in self.env.messages)

    def _text(self, messages: list[dict[str, object]]) -> str:
        """ASCII JSON of the messages, contents shortened evenly if it would not fit the space."""
        text = json.dumps(messages, ensure_ascii=True)
        if len(text) <= self.max_chars:
            return text
        budget = max(self.max_chars // (2 * max(len(messages), 1)) - len(TRUNCATED), 0)
        short = [dict(m, content=str(m.get("content") or "")[:budget] + TRUNCATED) for m in messages]
        return json.dumps(short, ensure_ascii=True)[: self.max_chars]


def register() -> None:
    """Make ``gymnasium.make("coworkenv/Bank-v0", bank=… | spec=…)`` work (idempotent)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=f"{__name__}:CoworkEnv")
