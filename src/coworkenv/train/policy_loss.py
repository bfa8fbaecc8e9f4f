"""The policy-gradient update on sampled assistant turns, each with its own advantage.

Per-turn advantages are what separates multi-turn credit assignment from plain GRPO
(one scalar per completion), so the loss is written over *turns*: every assistant turn
is a sequence ``prompt + completion`` and all its completion tokens carry the turn's
advantage. The loss is the token-mean over the whole update (the DAPO/TRL "dapo"
normalisation), so long turns do not dilute short ones. Updates are on-policy (one
gradient step per batch of fresh samples), so the importance ratio is 1 and needs no
clipping; an optional k3 KL penalty keeps the policy near a frozen reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from coworkenv.agents.models import autocast
from coworkenv.train.episodes import TurnTokens
from coworkenv.train.optimizer import MasterWeightsAdamW

if TYPE_CHECKING:
    import torch


@dataclass
class TurnSample:
    tokens: TurnTokens
    advantage: float


def _batch(
    samples: Sequence[TurnSample], pad_id: int, max_length: int, device: torch.device
) -> dict[str, torch.Tensor]:
    """Left-padded prompt+completion ids, so every completion ends at the right edge."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch
    from trl.trainer.utils import pad

    rows, lengths = [], []
    for s in samples:
        completion = s.tokens.completion_ids[-max_length:]
        prompt = s.tokens.prompt_ids[-(max_length - len(completion)) :] if len(completion) < max_length else []
        rows.append(torch.tensor(prompt + completion, dtype=torch.long))
        lengths.append(len(completion))
    ids = pad(rows, padding_value=pad_id, padding_side="left")
    mask = pad([torch.ones_like(r) for r in rows], padding_value=0, padding_side="left")
    width = max(lengths)
    cols = torch.arange(width).unsqueeze(0)
    completion_mask = cols >= (width - torch.tensor(lengths)).unsqueeze(1)
    return {
        "input_ids": ids.to(device),
        "attention_mask": mask.to(device),
        "position_ids": (mask.cumsum(-1) - 1).clamp(min=0).to(device),
        "targets": ids[:, -width:].to(device),
        "completion_mask": completion_mask.to(device),
        "advantages": torch.tensor([s.advantage for s in samples], dtype=torch.float32, device=device),
    }


def completion_logps(model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Log-probabilities of the completion tokens, computing logits only where they are needed."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    from trl.trainer.utils import selective_log_softmax

    width = batch["targets"].shape[1]
    with autocast(model):
        logits = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            position_ids=batch["position_ids"],
            logits_to_keep=width + 1,
            use_cache=False,
        ).logits[:, :-1]
    return selective_log_softmax(logits.float(), batch["targets"])


def policy_gradient_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer | MasterWeightsAdamW,
    samples: Sequence[TurnSample],
    *,
    pad_id: int,
    ref_model: torch.nn.Module | None = None,
    kl_coef: float = 0.0,
    micro_batch: int = 4,
    max_length: int = 4096,
    max_grad_norm: float = 1.0,
) -> dict[str, float]:
    """One optimizer step on ``samples``; turns with zero advantage only matter for the KL term."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch

    use_kl = kl_coef > 0 and ref_model is not None
    live = [s for s in samples if s.advantage != 0.0 or use_kl]
    stats = {"loss": 0.0, "kl": 0.0, "tokens": 0.0, "turns": float(len(live))}
    if not live:
        return stats
    device = next(model.parameters()).device
    total = sum(min(len(s.tokens.completion_ids), max_length) for s in live)
    model.train()
    optimizer.zero_grad(set_to_none=True)
    for lo in range(0, len(live), micro_batch):
        batch = _batch(live[lo : lo + micro_batch], pad_id, max_length, device)
        mask = batch["completion_mask"].float()
        logps = completion_logps(model, batch)
        loss = -(batch["advantages"].unsqueeze(1) * logps * mask).sum() / total
        if use_kl and ref_model is not None:
            with torch.no_grad():
                ref = completion_logps(ref_model, batch)
            delta = ref - logps
            kl = ((torch.exp(delta) - delta - 1) * mask).sum() / total
            loss = loss + kl_coef * kl
            stats["kl"] += float(kl.detach())
        loss.backward()
        stats["loss"] += float(loss.detach())
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    model.eval()
    stats["tokens"] = float(total)
    return stats
