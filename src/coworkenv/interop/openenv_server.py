"""coworkenv environments on OpenEnv's protocol, built on ``openenv-core``'s own server pieces.

:class:`CoworkOpenEnv` is an ``openenv.core.env_server.Environment``: ``reset`` starts an episode
of one environment of a catalog (``env_id=...``, else the ``seed``-th, else the first), ``step``
plays one assistant turn (text to the user and/or OpenAI-format tool calls), and the reward is
the grade's score once the episode is done (None before). :func:`create_openenv_app` serves it
with OpenEnv's app factory, so OpenEnv's clients (``GenericEnvClient``, or :class:`CoworkEnvClient`)
reset and step it over HTTP and over its WebSocket session, one environment per session.
Needs the ``openenv`` extra (``openenv-core``); this module is imported only where it is used.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server import Action, Environment, State, create_app
from openenv.core.env_server import Observation as OpenEnvObservation
from pydantic import Field

from coworkenv.interop.catalog import Catalog
from coworkenv.interop.env import Env, Observation


class CoworkAction(Action):
    """One assistant turn: text to the user, tool calls (``{"name", "arguments"}``), or both."""

    content: str = ""
    tool_calls: list[dict[str, object]] = Field(default_factory=list)


class CoworkObservation(OpenEnvObservation):
    """The new messages, the tools, and the grade once the episode is done."""

    env_id: str = ""
    messages: list[dict[str, object]] = Field(default_factory=list)
    tools: list[dict[str, object]] = Field(default_factory=list)
    step: int = 0
    done_reason: str = ""
    grade: dict[str, object] | None = None


class CoworkState(State):
    """Where the session's episode stands."""

    env_id: str = ""
    done: bool = False
    state_hash: str = ""


class CoworkOpenEnv(Environment[CoworkAction, CoworkObservation, CoworkState]):
    """One session's episodes over the environments of a catalog."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, catalog: Catalog) -> None:
        super().__init__()
        self.catalog = catalog
        self.env: Env | None = None
        self.episode_id: str | None = None

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, env_id: str | None = None, **kwargs: object
    ) -> CoworkObservation:
        """Start an episode of ``env_id`` (else the ``seed``-th environment, else the first)."""
        ids = self.catalog.ids()
        chosen = env_id if env_id is not None else ids[(seed or 0) % len(ids)]
        self.env = Env(self.catalog.get(chosen), seed=seed or 0)
        self.episode_id = episode_id
        return self._observe(self.env.reset())

    def step(self, action: CoworkAction, timeout_s: float | None = None, **kwargs: object) -> CoworkObservation:
        """Play one assistant turn; an episode not started, or over, is an error the client sees."""
        if self.env is None:
            raise RuntimeError("no episode: call reset first")
        if self.env.done:
            raise RuntimeError("the episode is over: call reset")
        turn = {"role": "assistant", "content": action.content, "tool_calls": action.tool_calls}
        return self._observe(self.env.step(turn))

    @property
    def state(self) -> CoworkState:
        if self.env is None:
            return CoworkState(episode_id=self.episode_id)
        now = self.env.state()
        return CoworkState(
            episode_id=self.episode_id,
            step_count=now["step"],
            env_id=now["env_id"],
            done=now["done"],
            state_hash=now["state_hash"],
        )

    def _observe(self, obs: Observation) -> CoworkObservation:
        assert self.env is not None
        return CoworkObservation(
            env_id=self.env.spec.id,
            messages=obs.messages,
            tools=obs.tools,
            step=obs.step,
            done=obs.done,
            done_reason=str(obs.info.get("done_reason") or ""),
            reward=obs.reward if obs.done else None,
            grade=obs.info.get("grade"),
        )


def create_openenv_app(catalog: Catalog, max_sessions: int = 64) -> FastAPI:
    """The FastAPI app OpenEnv's factory builds for a catalog: ``/reset``, ``/step``, ``/state``, ``/schema``,
    ``/ws`` (a WebSocket session per client, up to ``max_sessions`` at once)."""
    if not len(catalog):
        raise ValueError("the catalog holds no environment to serve")
    return create_app(
        lambda: CoworkOpenEnv(catalog), CoworkAction, CoworkObservation, "coworkenv", max_concurrent_envs=max_sessions
    )


class CoworkEnvClient(EnvClient[CoworkAction, CoworkObservation, CoworkState]):
    """OpenEnv's WebSocket client, typed for coworkenv's actions and observations."""

    def _step_payload(self, action: CoworkAction) -> dict[str, object]:
        return dict(action.model_dump(exclude={"metadata"}))

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CoworkObservation]:
        obs = CoworkObservation(**payload.get("observation", {}), reward=payload.get("reward"), done=payload["done"])
        return StepResult(observation=obs, reward=payload.get("reward"), done=bool(payload.get("done")))

    def _parse_state(self, payload: dict[str, object]) -> CoworkState:
        return CoworkState(**payload)
