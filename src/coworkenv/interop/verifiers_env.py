"""coworkenv environments as a ``verifiers`` environment (Prime Intellect's RL environment library).

:func:`load_environment` is the entry point verifiers looks for
(``vf.load_environment("coworkenv.interop.verifiers_env", bank=...)``, ``vf-eval``, the trainers that take
verifiers environments). Its dataset holds one row per environment of a bank or folder of specs: the prompt is
the episode's opening messages, ``info`` names the environment and carries its tool schemas. Each rollout opens
that environment (:class:`~coworkenv.interop.env.Env`) and every assistant turn is one ``Env.step``: the
environment's answers (tool results, error observations, the scripted user's replies, events) are the env
response, and the prompt of the next turn is the agent's view the runtime keeps, so multi-stage episodes that
start a fresh view look as they do in the project's own loop. The rollout ends when the episode does; the
reward is the grade's score, with pass, completion, robustness and safety as metrics.
Needs the ``verifiers`` extra; this module is imported only where it is used.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import cast

import verifiers as vf
from datasets import Dataset
from pydantic import BaseModel
from verifiers.utils.message_utils import normalize_messages

from coworkenv.grading import PASS_THRESHOLD
from coworkenv.interop.catalog import Catalog
from coworkenv.interop.env import Env

EPISODE = "coworkenv_env"
"""The state key of a rollout's open environment (not serialisable: leave it out of ``state_columns``)."""
GRADE_VALUES = ("score", "passed", "completion", "robustness", "safety")
"""The grade's values the rubric reports, as ``grade_<value>`` (verifiers flattens metrics into its results,
where a plain ``completion`` would overwrite the completion)."""


def tool_defs(tools: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """OpenAI-format tool schemas as verifiers' provider-agnostic tool definitions."""
    return [
        {"name": f["name"], "description": f.get("description") or "", "parameters": f.get("parameters") or {}}
        for f in (_function(t) for t in tools)
    ]


def _function(tool: Mapping[str, object]) -> Mapping[str, object]:
    """The function part of an OpenAI-format tool schema (a bare function schema is its own)."""
    function = tool.get("function", tool)
    return function if isinstance(function, dict) else tool


def dataset_rows(catalog: Catalog, seed: int = 0) -> list[dict[str, object]]:
    """One row per environment, in id order: its opening messages, and ``info`` as JSON text (tool schemas
    differ between environments, which one table column could not hold)."""
    rows = []
    for index, env_id in enumerate(catalog.ids()):
        obs = Env(catalog.get(env_id), seed=seed).reset()
        info = {"env_id": env_id, "seed": seed, "tool_defs": tool_defs(obs.tools)}
        prompt = [{"role": m["role"], "content": m["content"]} for m in obs.messages]
        rows.append({"example_id": index, "prompt": prompt, "answer": "", "info": json.dumps(info, sort_keys=True)})
    return rows


def assistant_turn(message: BaseModel) -> dict[str, object]:
    """A verifiers assistant message as the OpenAI-format turn ``Env.step`` reads; the runtime itself reports
    whatever is malformed in it (bad JSON arguments, an unknown tool) as an error observation."""
    data: dict[str, object] = message.model_dump(exclude_none=True)
    content = data.get("content")
    if isinstance(content, list):  # content parts: the text ones are the turn's text
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return {"role": "assistant", "content": content, "tool_calls": data.get("tool_calls") or []}


def _messages(messages: Sequence[Mapping[str, object]]) -> vf.Messages:
    return normalize_messages(list(messages), field_name="coworkenv messages")


def _grade_value(key: str) -> Callable[[vf.State], Awaitable[float]]:
    """A rubric function reading one value of the rollout's grade (0 when the rollout never opened one)."""

    async def value(state: vf.State) -> float:
        grade = state.get("grade") or {}
        return float(grade.get(key, 0.0))

    value.__name__ = f"grade_{key}"
    return value


def cowork_rubric() -> vf.Rubric:
    """The grade's score as the reward; pass, completion, robustness and safety as metrics (weight 0)."""
    score, *metrics = GRADE_VALUES
    rubric = vf.Rubric(funcs=[_grade_value(score)], weights=[1.0])
    for key in metrics:
        rubric.add_metric(_grade_value(key))
    return rubric


class CoworkVerifiersEnv(vf.MultiTurnEnv):
    """A verifiers multi-turn environment whose rows are coworkenv environments and whose turns are
    ``Env.step``: the episode's own limits end it, so verifiers' turn limit is left off."""

    def __init__(self, catalog: Catalog, *, seed: int = 0, max_turns: int | None = None, **kwargs: object) -> None:
        if not len(catalog):
            raise ValueError("the catalog holds no environment")
        self.catalog = catalog
        self.episode_max_turns = max_turns
        kwargs.setdefault("pass_threshold", PASS_THRESHOLD)
        super().__init__(dataset=Dataset.from_list(dataset_rows(catalog, seed)), rubric=cowork_rubric(), **kwargs)

    async def setup_state(self, state: vf.State) -> None:
        info = state["info"]
        env = Env(self.catalog.get(info["env_id"]), seed=int(info["seed"]), max_turns=self.episode_max_turns)
        await env.areset()
        state[EPISODE] = env

    async def get_prompt_messages(self, state: vf.State) -> vf.Messages:
        """Step the episode with the last assistant turn (after the first), then give the agent's view."""
        env = cast(Env, state[EPISODE])
        if state["trajectory"]:
            await self.env_response(state["trajectory"][-1]["completion"], state)
        return _messages(env.messages)

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: object) -> vf.Messages:
        """The environment's answer to the last assistant message: the new messages of one ``Env.step``."""
        env = cast(Env, state[EPISODE])
        obs = await env.astep(assistant_turn(messages[-1]))
        new = _messages(obs.messages)
        if obs.done:
            state["final_env_response"] = new
        return new

    async def render_completion(self, state: vf.State) -> None:
        """The completion is every message of the episode after the prompt (stages whose view started over
        included)."""
        env = state.get(EPISODE)
        if not isinstance(env, Env):
            await super().render_completion(state)
            return
        state["completion"] = _messages(env.runtime.transcript()[len(state["prompt"]) :])

    @vf.cleanup  # type: ignore[untyped-decorator]
    async def grade_episode(self, state: vf.State) -> None:
        """End an episode verifiers stopped early (a model error, a token or time budget), and keep its grade
        and final state hash in the state for the rubric and for the results."""
        env = state.get(EPISODE)
        if not isinstance(env, Env):
            return
        if not env.done:
            env.end("policy_error" if state.get("error") is not None else str(state.get("stop_condition") or "stopped"))
        state["grade"] = env.grade().model_dump(mode="json")
        state["state_hash"] = env.runtime.workspace.state_hash()
        state["done_reason"] = env.runtime.done_reason


def load_environment(
    bank: str | Path | Sequence[str | Path] = "bank",
    split: str | None = None,
    *,
    seed: int = 0,
    max_turns: int | None = None,
    **kwargs: object,
) -> CoworkVerifiersEnv:
    """The verifiers environment of a bank (``split``: "train" / "heldout"), a folder of specs or spec files;
    other keyword arguments go to verifiers' environment (``timeout_seconds``, ``max_seq_len``, ...)."""
    sources = [bank] if isinstance(bank, str | Path) else list(bank)
    return CoworkVerifiersEnv(Catalog.load(sources, split=split), seed=seed, max_turns=max_turns, **kwargs)
