"""Training settings and their defaults, written once.

Kept apart from the trainers, which load model code, so that the command line can show these
defaults as its own without importing a trainer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SFTSettings:
    epochs: float = 2.0
    max_steps: int = -1
    learning_rate: float = 5e-5
    batch_size: int = 4
    grad_accum: int = 1
    max_length: int = 2048
    warmup: float = 0.05
    """linear warm-up: a fraction of the steps when below 1, else a step count."""
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    seed: int = 0
    logging_steps: int = 1
    val_fraction: float = 0.1
    """demos held out to measure validation loss; the checkpoint kept is the best on them."""
    evals: int = 4
    """validation passes over the run (and one at the end)."""
