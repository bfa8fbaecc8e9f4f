"""Model selection for SFT: a validation split of the demos and the weights that did best on it.

Three hundred demos trained for four epochs drive the training loss to ~0: the model recites
its demos. The loss on demos it never trained on stops falling (and turns up) when memorising
starts, so the run keeps the weights of its lowest validation loss rather than its last step.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from coworkenv.storage import append_jsonl

if TYPE_CHECKING:
    import torch
    from transformers import TrainerControl, TrainerState, TrainingArguments

R = TypeVar("R")


def split_validation(records: Sequence[R], fraction: float, seed: int) -> tuple[list[R], list[R]]:
    """(train, validation): a seeded ``fraction`` of the records (at least one) held out; none below 4.

    Records that are mappings with a ``group`` (menu variants of one environment) are split by
    group, so no conversation is validated on that was trained on under another menu.
    """
    keys = [r.get("group", i) if isinstance(r, Mapping) else i for i, r in enumerate(records)]
    groups = list(dict.fromkeys(keys))
    if fraction <= 0 or len(groups) < 4:
        return list(records), []
    order = list(range(len(groups)))
    random.Random(seed).shuffle(order)
    n_val = min(len(groups) - 1, max(1, round(fraction * len(groups))))
    held = {groups[i] for i in order[:n_val]}
    return [r for r, k in zip(records, keys, strict=True) if k not in held], [
        r for r, k in zip(records, keys, strict=True) if k in held
    ]


def eval_interval(n_train: int, batch: int, grad_accum: int, epochs: float, max_steps: int, evals: int) -> int:
    """Steps between validation passes, so a run has about ``evals`` of them."""
    per_epoch = max(1, math.ceil(n_train / max(1, batch * grad_accum)))
    total = max_steps if max_steps > 0 else max(1, math.ceil(epochs * per_epoch))
    return max(1, total // max(1, evals))


def best_weights_callback(log_path: Path) -> Any:
    """A TrainerCallback that logs each validation loss and keeps a CPU copy of the best weights."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    from transformers import TrainerCallback

    class BestWeights(TrainerCallback):
        def __init__(self) -> None:
            self.best: dict[str, float] | None = None
            self.state: dict[str, torch.Tensor] | None = None

        def on_evaluate(
            self,
            args: TrainingArguments,
            state: TrainerState,
            control: TrainerControl,
            metrics: dict[str, float] | None = None,
            model: torch.nn.Module | None = None,
            **kw: object,
        ) -> None:
            if not metrics or "eval_loss" not in metrics or model is None:
                return
            loss = float(metrics["eval_loss"])
            append_jsonl(log_path, [{"step": state.global_step, "eval_loss": loss}])
            if self.best is None or loss < self.best["eval_loss"]:
                self.best = {"step": state.global_step, "eval_loss": round(loss, 6)}
                self.state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}

        def restore(self, model: torch.nn.Module) -> dict[str, float] | None:
            """Load the best weights back into ``model``; the best step and loss."""
            if self.state is not None:
                model.load_state_dict(self.state)
                self.state = None
            return self.best

    return BestWeights()
