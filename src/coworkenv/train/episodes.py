"""Sampling groups of multi-turn episodes and keeping the tokens each turn generated.

RL needs the exact token ids the policy sampled (not a re-rendering of the parsed turn),
so the policy's model is wrapped in a recorder that keeps each batched ``generate``
call's inputs and outputs; :func:`collect_groups` pairs them with the environments
that acted (via :func:`coworkenv.eval.runner.run_lockstep`). Everything else — prompt
rendering, sampling settings, stop tokens, parsing — is the ordinary TransformersPolicy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from coworkenv.agents.transformers_policy import TransformersPolicy
from coworkenv.rollout.environments import make_environment
from coworkenv.runtime.episode import run_lockstep
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec.models import TaskSpec
from coworkenv.trajectory import Trajectory

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase


@dataclass
class TurnTokens:
    """One assistant turn as the model produced it: its prompt and its sampled completion."""

    prompt_ids: list[int]
    completion_ids: list[int]


@dataclass
class Episode:
    trajectory: Trajectory
    group: int
    turns: list[TurnTokens]


class GenerateRecorder:
    """Stands in for the model inside a TransformersPolicy and keeps the last generate call."""

    def __init__(self, model: Any, stop_ids: Sequence[int]) -> None:
        self.model = model
        self.stop_ids = set(stop_ids)
        self.last: list[TurnTokens] = []

    @property
    def device(self) -> torch.device:
        device: torch.device = self.model.device
        return device

    def generate(self, **kwargs: Any) -> torch.Tensor:
        out: torch.Tensor = self.model.generate(**kwargs)
        ids, mask = kwargs["input_ids"], kwargs["attention_mask"]
        width = ids.shape[1]
        self.last = []
        for row, row_mask, gen in zip(ids.tolist(), mask.tolist(), out[:, width:].tolist(), strict=True):
            prompt = [t for t, m in zip(row, row_mask, strict=True) if m]
            cut = next((i + 1 for i, t in enumerate(gen) if t in self.stop_ids), len(gen))  # keep the stop token
            self.last.append(TurnTokens(prompt, gen[:cut]))
        return out


def sampling_policy(
    model: Any, tokenizer: PreTrainedTokenizerBase, *, temperature: float, max_new_tokens: int
) -> TransformersPolicy:
    """A TransformersPolicy whose model records the tokens of every turn."""
    policy = TransformersPolicy(model, tokenizer, max_new_tokens=max_new_tokens, temperature=temperature, name="grpo")
    policy.model = GenerateRecorder(model, policy.stop_ids)
    return policy


def collect_groups(
    policy: TransformersPolicy,
    specs: Sequence[TaskSpec],
    group_size: int,
    *,
    env_seed: int = 0,
    max_turns: int | None = None,
) -> list[Episode]:
    """``group_size`` episodes of every spec, all played in one lockstep batch.

    Episodes of a group share the spec and the environment seed, so they differ only by
    the policy's sampling: the comparison group-relative advantages rely on.
    """
    recorder: GenerateRecorder = policy.model
    envs = [make_environment(spec, env_seed, max_turns=max_turns) for spec in specs for _ in range(group_size)]
    tokens: list[list[TurnTokens]] = [[] for _ in envs]

    def keep(indices: list[int], turns: list[AssistantTurn]) -> None:
        for i, turn_tokens in zip(indices, recorder.last, strict=True):
            tokens[i].append(turn_tokens)

    trajs = run_lockstep(
        envs,
        policy.act_batch,
        policy_name=policy.name,
        samples=[i % group_size for i in range(len(envs))],
        on_turns=keep,
    )
    return [Episode(traj, i // group_size, tokens[i]) for i, traj in enumerate(trajs)]
