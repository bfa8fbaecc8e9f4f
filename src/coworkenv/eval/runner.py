"""Running a policy over a bank split: batched lockstep episodes, metrics, files.

A local model is fastest when it generates for many conversations at once, so policies
with ``act_batch`` play all episodes of a chunk in lockstep: every live episode gets its
next turn from one batched ``generate`` call. Other policies (oracle, OpenAI-compatible
endpoints) play episode by episode through :func:`coworkenv.runtime.run_episode`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from coworkenv.agents.models import autocast, inference_weights, load_model
from coworkenv.agents.transformers_policy import TransformersPolicy
from coworkenv.eval.metrics import Metrics, compute_metrics
from coworkenv.rollout.policies import is_local_model, make_policy, sampling_options
from coworkenv.rollout.worker import RunOptions, close_environment, open_environment
from coworkenv.runs import TRAJECTORIES_FILE, write_eval
from coworkenv.runtime import run_episode
from coworkenv.runtime.episode import run_lockstep
from coworkenv.runtime.policy import BatchPolicy, Policy, TaskPolicy
from coworkenv.spec.models import TaskSpec
from coworkenv.storage import append_jsonl
from coworkenv.trajectory import Trajectory

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase


def default_temperature(samples: int) -> float:
    """Greedy for one sample; K samples need sampling to differ."""
    return 0.0 if samples == 1 else 0.8


def local_policy(
    model: object,
    tokenizer: PreTrainedTokenizerBase,
    name: str,
    *,
    temperature: float = 0.0,
    max_new_tokens: int = 256,
    seed: int = 0,
    cache: str | None = None,
) -> TransformersPolicy:
    """A batched TransformersPolicy over a loaded model, with torch's sampling seeded."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch

    torch.manual_seed(seed)
    return TransformersPolicy(
        model, tokenizer, max_new_tokens=max_new_tokens, temperature=temperature, name=name, cache=cache
    )


def make_eval_policy(
    spec: str,
    *,
    device: str = "auto",
    dtype: str | None = None,
    temperature: float = 0.0,
    max_new_tokens: int = 256,
    seed: int = 0,
    concurrency: int | None = None,
) -> Policy | TaskPolicy | BatchPolicy:
    """A batched TransformersPolicy for local models, else ``rollout.policies.make_policy(spec)``
    with the sampling flags (and an endpoint's request ``concurrency``) passed on."""
    if not is_local_model(spec):
        opts = sampling_options(spec, temperature=temperature, max_new_tokens=max_new_tokens, concurrency=concurrency)
        policy: Policy | TaskPolicy | BatchPolicy = make_policy(spec, **opts)
        return policy

    model, tokenizer = load_model(spec, device, seed=seed, dtype=dtype)
    return local_policy(model, tokenizer, spec, temperature=temperature, max_new_tokens=max_new_tokens, seed=seed)


@dataclass
class EvalResult:
    trajectories: list[Trajectory]
    metrics: Metrics
    seconds: float


def evaluate(
    policy: Policy | TaskPolicy | BatchPolicy,
    specs: Sequence[TaskSpec],
    *,
    samples: int = 1,
    k: int | None = None,
    seed: int = 0,
    batch_size: int = 16,
    max_turns: int | None = None,
    progress: Callable[[int], None] | None = None,
    env_server: str | None = None,
    env_token: str | None = None,
    user: str | None = None,
) -> EvalResult:
    """Roll out ``samples`` episodes per spec and compute the metrics (k defaults to ``samples``).

    Sample s of a spec runs with environment seed ``seed + s``, as ``coworkenv rollout`` does;
    ``max_turns`` caps episodes below the specs' own limits (a budget for slow CPU runs).
    ``progress(n)`` is called with the number of episodes just finished. ``env_server`` (a
    ``coworkenv serve http`` URL, ``env_token`` its token) plays every episode in a session there;
    ``user`` is the user simulator, as ``coworkenv rollout --user`` takes it (None: scripted).
    """
    options = RunOptions(timeout=None, user=user, max_turns=max_turns, env_server=env_server, env_token=env_token)
    start = time.perf_counter()
    jobs = [(spec, s) for spec in specs for s in range(samples)]
    trajs: list[Trajectory] = []
    name = getattr(policy, "name", type(policy).__name__)
    if isinstance(policy, BatchPolicy):
        for lo in range(0, len(jobs), batch_size):
            chunk = jobs[lo : lo + batch_size]
            envs = [open_environment(spec, seed + s, options) for spec, s in chunk]
            trajs += run_lockstep(envs, policy.act_batch, policy_name=name, samples=[s for _, s in chunk])
            for env in envs:
                close_environment(env)
            if progress:
                progress(len(chunk))
    else:
        for spec, s in jobs:
            env = open_environment(spec, seed + s, options)
            trajs.append(run_episode(env, policy, sample=s))
            close_environment(env)
            if progress:
                progress(1)
    metrics = compute_metrics(trajs, k=k or samples)
    return EvalResult(trajs, metrics, round(time.perf_counter() - start, 3))


def save_eval(result: EvalResult, folder: Path, label: str, **meta: object) -> Path:
    """Write the trajectories and ``metrics.json`` of an evaluation into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / TRAJECTORIES_FILE).unlink(missing_ok=True)
    append_jsonl(folder / TRAJECTORIES_FILE, [t.model_dump(mode="json") for t in result.trajectories])
    return write_eval(folder, label, result.metrics, seconds=result.seconds, **meta)


def evaluate_loaded(
    model: torch.nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    specs: Sequence[TaskSpec],
    folder: Path,
    label: str,
    *,
    samples: int = 1,
    temperature: float | None = None,
    max_new_tokens: int = 256,
    batch_size: int = 16,
    max_turns: int | None = None,
    seed: int = 0,
    model_name: str = "",
    **meta: object,
) -> EvalResult:
    """Evaluate an already loaded model (e.g. right after training) and save the result into ``folder``.

    ``model_name`` is what reports call the model (default: the label); ``meta`` goes to ``metrics.json``.
    """
    temp = default_temperature(samples) if temperature is None else temperature

    infer = inference_weights(model)
    policy = local_policy(infer, tokenizer, label, temperature=temp, max_new_tokens=max_new_tokens, seed=seed)
    with autocast(infer):
        result = evaluate(policy, specs, samples=samples, seed=seed, batch_size=batch_size, max_turns=max_turns)
    save_eval(
        result, folder, label, model=model_name or label, samples=samples, temperature=temp, max_turns=max_turns, **meta
    )
    return result
