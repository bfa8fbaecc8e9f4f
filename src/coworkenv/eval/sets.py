"""Several evaluation sets played in one lockstep batch, reported side by side with their floors.

Learning is read on three sets: new instances of the training blueprints (does it learn?),
held-out blueprints (does it transfer?) and hand-written examples (tasks no generator wrote).
A local model is fastest with one full batch, so every set's episodes play together and the
trajectories are split back by set afterwards. Each set's row carries the do-nothing score
of the same set: the floor a model must beat before its score means anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.agents.models import autocast, inference_weights
from coworkenv.eval.metrics import MULTI_TURN, Metrics, compute_metrics
from coworkenv.eval.runner import EvalResult, evaluate, local_policy, save_eval
from coworkenv.rollout.policies import make_policy
from coworkenv.spec.models import TaskSpec

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

DO_NOTHING = "probe:do_nothing"


def set_row(metrics: Metrics, floor: float | None = None) -> dict[str, Any]:
    """The headline numbers of one set (percent), as ``summary.json`` holds them."""
    return {
        "score": metrics["overall"]["score"],
        "pass@1": metrics["overall"]["pass@1"],
        "tasks": metrics["overall"]["tasks"],
        "multi_turn_score": metrics[MULTI_TURN]["score"],
        "multi_turn_pass@1": metrics[MULTI_TURN]["pass@1"],
        "multi_turn_tasks": metrics[MULTI_TURN]["tasks"],
        "do_nothing_score": floor,
        "by_capability": {c: v["score"] for c, v in metrics["by_capability"].items()},
        **metrics["behaviour"],
    }


def floors(sets: Mapping[str, Sequence[TaskSpec]], *, seed: int = 0, max_turns: int | None = None) -> dict[str, float]:
    """The do-nothing score of each set (the verifier's probe that answers without acting)."""
    return {
        name: evaluate(make_policy(DO_NOTHING), specs, seed=seed, max_turns=max_turns).metrics["overall"]["score"]
        for name, specs in sets.items()
    }


def evaluate_sets(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sets: Mapping[str, Sequence[TaskSpec]],
    folder: Path,
    label: str,
    *,
    max_new_tokens: int = 256,
    max_turns: int | None = None,
    seed: int = 0,
    cache: str | None = None,
    floor: Mapping[str, float] | None = None,
    **meta: object,
) -> dict[str, object]:
    """Greedy evaluation of every set in one lockstep batch; ``folder/<set>`` gets each set's files.

    Returns ``{set: row}`` plus ``decode`` (throughput of the whole batch) and ``seconds``.
    """

    infer = inference_weights(model)
    policy = local_policy(infer, tokenizer, label, max_new_tokens=max_new_tokens, seed=seed, cache=cache)
    names = [name for name, specs in sets.items() for _ in specs]
    every = [spec for specs in sets.values() for spec in specs]
    with autocast(infer):
        result = evaluate(policy, every, seed=seed, batch_size=max(1, len(every)), max_turns=max_turns)
    out: dict[str, object] = {}
    for name in sets:
        trajs = [t for t, n in zip(result.trajectories, names, strict=True) if n == name]
        part = EvalResult(trajs, compute_metrics(trajs), result.seconds)
        save_eval(part, Path(folder) / name, f"{label} · {name}", model=label, set=name, max_turns=max_turns, **meta)
        out[name] = set_row(part.metrics, (floor or {}).get(name))
    out["decode"] = policy.decode.summary()
    out["seconds"] = result.seconds
    return out
