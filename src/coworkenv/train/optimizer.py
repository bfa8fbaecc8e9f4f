"""The optimizer training uses: AdamW with fp32 master copies of low-precision weights."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class MasterWeightsAdamW:
    """AdamW that keeps fp32 master copies of low-precision (bf16) weights.

    With bf16 weights an update smaller than half a bf16 step (about 0.2% of the weight)
    rounds away, so RL-sized learning rates would leave the model unchanged. The fp32
    copies accumulate every update and are written back after each step; fp32 weights are
    their own master, which makes this plain AdamW for them.
    """

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float) -> None:
        # lazy: an optional extra (train); the core and the CLI must run without it
        import torch

        self.params = [p for p in params if p.requires_grad]
        self.masters = [p if p.dtype == torch.float32 else p.detach().float().requires_grad_(True) for p in self.params]
        self.inner = torch.optim.AdamW(self.masters, lr=lr)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        # lazy: an optional extra (train); the core and the CLI must run without it
        import torch

        pairs = [(p, m) for p, m in zip(self.params, self.masters, strict=True) if m is not p]
        for p, m in pairs:
            m.grad = None if p.grad is None else p.grad.float()
        self.inner.step()
        with torch.no_grad():
            for p, m in pairs:
                p.copy_(m)
                m.grad = None
