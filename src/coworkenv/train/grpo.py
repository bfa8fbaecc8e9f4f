"""Multi-turn RL with the environment in the loop (group-relative policy gradient).

Each step samples ``group_size`` episodes of each of ``envs_per_step`` training
environments: the policy acts over several turns while tools answer, events fire and the
scripted user replies to questions, confirmations and follow-ups. The episodes are graded,
and :mod:`coworkenv.data.rl` turns each group into per-turn advantages under the selected
reward processing (``raw | binary | safety_gated``), group normalisation
(``none | grpo | rloo``) and credit assignment (``broadcast`` = trajectory level,
``discounted`` = per-turn returns, ``checks`` = check-attributed). Every assistant turn's
sampled tokens then carry its own advantage in a token-level policy-gradient loss.

What TRL does and does not do here: TRL's ``GRPOTrainer`` (even with
``environment_factory``/``rollout_func``) ends an episode at the first turn without a tool
call and computes one advantage per completion, so it cannot express a scripted user who
answers text turns, nor per-turn or check-attributed credit. This module therefore owns
the loop — group rollouts (:mod:`coworkenv.train.episodes`), the update
(:mod:`coworkenv.train.policy_loss`, built on TRL's ``selective_log_softmax`` and
``pad``), AdamW, logging — and reuses the scheme maths of :mod:`coworkenv.data.rl`
rather than re-deriving it. :func:`run_grid` trains several settings from the same start
checkpoint, bank and seed, so their curves and held-out scores compare like for like.
"""

from __future__ import annotations

import copy
import functools
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.agents.models import autocast, inference_weights, save_checkpoint
from coworkenv.data.rl import (
    RlSettings,
    ScoredEpisode,
    assign_group,
)
from coworkenv.runs import TRAIN_LOG, TRAIN_SUMMARY
from coworkenv.spec.models import TaskSpec, refuse_evaluation_only
from coworkenv.storage import append_jsonl, atomic_write_json
from coworkenv.train.episodes import Episode, collect_groups, sampling_policy
from coworkenv.train.optimizer import MasterWeightsAdamW
from coworkenv.train.policy_loss import TurnSample, policy_gradient_step
from coworkenv.train.roundtrip import check_round_trip
from coworkenv.train.settings import GRPOSettings, Setting
from coworkenv.trajectory import Grade

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from coworkenv.agents.transformers_policy import TransformersPolicy

Progress = Callable[[int, int], None]


@dataclass
class GRPOResult:
    model: Any
    out: Path
    log: list[dict[str, float]]
    seconds: float


def turn_samples(episodes: Sequence[Episode], rl: RlSettings) -> list[TurnSample]:
    """Pair each sampled turn with its advantage, group by group."""
    groups: dict[int, list[Episode]] = {}
    for e in episodes:
        groups.setdefault(e.group, []).append(e)
    samples: list[TurnSample] = []
    for members in groups.values():
        live = [e for e in members if e.turns]
        outcomes = [ScoredEpisode.from_trajectory(e.trajectory) for e in live]
        for episode, values in zip(live, assign_group(outcomes, rl), strict=True):
            samples += [TurnSample(tokens, v.advantage) for tokens, v in zip(episode.turns, values, strict=True)]
    return samples


def reward_spread(episodes: Sequence[Episode]) -> float:
    """The fraction of groups whose episodes did not all score the same.

    A group whose rewards are equal has zero group-relative advantage and teaches nothing;
    when this is 0 a step cannot move the model (too small a group, or too hard a task).
    """
    groups: dict[int, set[float]] = {}
    for e in episodes:
        groups.setdefault(e.group, set()).add(round(_grade(e).score, 9))
    return sum(len(scores) > 1 for scores in groups.values()) / max(1, len(groups))


def _schedule(specs: Sequence[TaskSpec], per_step: int, seed: int) -> Callable[[], list[TaskSpec]]:
    """Epochs over the specs in a seeded shuffled order, ``per_step`` at a time."""
    rng = random.Random(seed)
    queue: list[TaskSpec] = []

    def take() -> list[TaskSpec]:
        batch: list[TaskSpec] = []
        while len(batch) < min(per_step, len(specs)):
            if not queue:
                queue.extend(rng.sample(list(specs), len(specs)))
            batch.append(queue.pop())
        return batch

    return take


def train_grpo(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    specs: Sequence[TaskSpec],
    out: Path,
    settings: GRPOSettings | None = None,
    *,
    label: str | None = None,
    model_name: str = "",
    progress: Progress | None = None,
    deadline: float | None = None,
) -> GRPOResult:
    """Train ``model`` in place on ``specs``; save the checkpoint, ``train_log.jsonl`` and summary to ``out``.

    ``deadline`` (a ``time.perf_counter()`` value) ends training early, after at least one step,
    when another step as long as the last would pass it: a run sized for a device budget finishes.
    """
    s = settings or GRPOSettings()
    if not specs:
        raise ValueError("GRPO needs at least one training environment")
    refuse_evaluation_only(specs, "GRPO")
    check_round_trip(tokenizer)  # refuse to train what could not be reloaded
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / TRAIN_LOG
    log_path.unlink(missing_ok=True)
    rl = _rl_settings(s)
    ref_model = copy.deepcopy(model).eval().requires_grad_(False) if s.kl_coef > 0 else None
    optimizer = MasterWeightsAdamW(model.parameters(), lr=s.learning_rate)
    policy = sampling_policy(model, tokenizer, temperature=s.temperature, max_new_tokens=s.max_new_tokens)
    take = _schedule(specs, s.envs_per_step, s.seed)
    log: list[dict[str, float]] = []
    start = time.perf_counter()
    for step in range(1, s.steps + 1):
        t0 = time.perf_counter()
        episodes = _sample(policy, model, take, s, step)
        samples = turn_samples(episodes, rl)
        stats = policy_gradient_step(
            model,
            optimizer,
            samples,
            pad_id=tokenizer.pad_token_id,
            ref_model=ref_model,
            kl_coef=s.kl_coef,
            micro_batch=s.micro_batch,
            max_length=s.max_length,
        )
        record = _step_record(step, episodes, samples, stats, t0)
        append_jsonl(log_path, [record])
        log.append(record)
        if progress:
            progress(step, s.steps)
        if deadline is not None and time.perf_counter() + record["seconds"] > deadline:
            break
    seconds = round(time.perf_counter() - start, 2)
    model.eval()
    save_checkpoint(model, tokenizer, out)
    _write_summary(
        out, s, log, label=label or out.name, model_name=model_name, environments=len(specs), seconds=seconds
    )
    return GRPOResult(model, out, log, seconds)


def _rl_settings(s: GRPOSettings) -> RlSettings:
    """The scheme maths' settings (rewards, normalisation, credit) for this training setting."""
    return RlSettings(
        reward=s.setting.reward,
        normaliser=s.setting.normaliser,
        credit=s.setting.credit,
        gamma=s.gamma,
        violation_penalty=s.violation_penalty,
    )


def _sample(
    policy: TransformersPolicy, model: PreTrainedModel, take: Callable[[], list[TaskSpec]], s: GRPOSettings, step: int
) -> list[Episode]:
    """One step's groups of episodes, seeded by the step, sampled from the fast inference copy of the weights."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch

    torch.manual_seed(s.seed * 100_003 + step)
    policy.model.model = inference_weights(model)  # sample from a bf16 copy on GPU: the fast decode path
    with autocast(policy.model.model):
        return collect_groups(policy, take(), s.group_size, env_seed=s.seed, max_turns=s.max_turns)


def _step_record(
    step: int, episodes: Sequence[Episode], samples: Sequence[TurnSample], stats: dict[str, float], t0: float
) -> dict[str, float]:
    """One line of the train log: what the episodes scored, how much they could teach, the update's figures."""
    scores = [_grade(e).score for e in episodes]
    return {
        "step": step,
        "reward": round(statistics.fmean(scores), 6),
        "pass_rate": round(statistics.fmean(_grade(e).passed for e in episodes), 6),
        "turns_per_episode": round(statistics.fmean(len(e.turns) for e in episodes), 3),
        "groups_with_spread": round(reward_spread(episodes), 4),
        "advantage_abs": round(statistics.fmean(abs(x.advantage) for x in samples), 6) if samples else 0.0,
        **{k: round(v, 6) for k, v in stats.items()},
        "seconds": round(time.perf_counter() - t0, 3),
    }


def _write_summary(
    out: Path,
    s: GRPOSettings,
    log: list[dict[str, float]],
    *,
    label: str,
    model_name: str,
    environments: int,
    seconds: float,
) -> None:
    """The run's ``train_summary.json``, which reports and ``coworkenv report`` read back."""
    atomic_write_json(
        out / TRAIN_SUMMARY,
        {
            "kind": "grpo",
            "label": label,
            "setting": s.setting.name,
            "model": model_name,
            "environments": environments,
            "steps": len(log),
            "planned_steps": s.steps,
            "seconds": seconds,
            "created": time.time(),
            "first_reward": log[0]["reward"],
            "last_reward": log[-1]["reward"],
            "settings": {**asdict(s), "setting": asdict(s.setting)},
        },
    )


def run_grid(
    load: Callable[[], tuple[Any, PreTrainedTokenizerBase]],
    specs: Sequence[TaskSpec],
    out: Path,
    grid: Sequence[Setting],
    settings: GRPOSettings | None = None,
    *,
    nested: bool = True,
    model_name: str = "",
    after: Callable[[Setting, GRPOResult, PreTrainedTokenizerBase], None] | None = None,
    progress: Callable[[Setting, int, int], None] | None = None,
    deadline: Callable[[int], float | None] | None = None,
) -> list[GRPOResult]:
    """Train each setting from a fresh ``load()`` of the same start model, into ``out/<setting>``.

    With ``nested=False`` the single setting trains into ``out`` itself.
    ``after(setting, result, tokenizer)`` runs once per setting while its model is loaded
    (the held-out evaluation), so only one model is in memory at a time. ``deadline(i)``, asked as
    setting i starts, gives that setting's training deadline (see :func:`train_grpo`).
    """
    if not nested and len(grid) != 1:
        raise ValueError("only a single setting can train into the output folder itself")
    base = settings or GRPOSettings()
    results = []
    for i, setting in enumerate(grid):
        model, tokenizer = load()
        s = GRPOSettings(**{**asdict(base), "setting": setting})
        folder = Path(out) / setting.name if nested else Path(out)
        result = train_grpo(
            model,
            tokenizer,
            specs,
            folder,
            s,
            label=f"grpo {setting.name}",
            model_name=model_name,
            progress=functools.partial(progress, setting) if progress else None,
            deadline=deadline(i) if deadline else None,
        )
        if after:
            after(setting, result, tokenizer)
        result.model = None  # free the weights before the next setting loads
        results.append(result)
    return results


def _grade(episode: Episode) -> Grade:
    """The grade of a played episode (every episode a rollout finishes has one)."""
    grade = episode.trajectory.grade
    if grade is None:
        raise ValueError("an episode without a grade reached training: the rollout did not finish it")
    return grade
