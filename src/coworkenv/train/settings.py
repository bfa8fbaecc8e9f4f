"""Training settings and their defaults, written once.

Kept apart from the trainers, which load model code, so that the command line can show these
defaults as its own without importing a trainer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coworkenv.data.rl import CREDITS, Credit, Normaliser, RewardScheme, checked_schemes


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


@dataclass(frozen=True)
class Setting:
    """One reward-processing / credit-assignment combination."""

    reward: RewardScheme = "raw"
    normaliser: Normaliser = "grpo"
    credit: Credit = "broadcast"

    def __post_init__(self) -> None:
        checked_schemes(self.reward, self.normaliser, self.credit)

    @property
    def name(self) -> str:
        return f"{self.reward}-{self.normaliser}-{self.credit}"

    @classmethod
    def parse(cls, text: str, reward: str = "raw") -> Setting:
        """``normaliser/credit`` or ``reward/normaliser/credit``."""
        parts = [p.strip() for p in text.split("/")]
        if len(parts) == 2:
            return cls(*checked_schemes(reward, *parts))
        if len(parts) == 3:
            return cls(*checked_schemes(*parts))
        raise ValueError(f"bad setting {text!r}; expected normaliser/credit or reward/normaliser/credit")


# raw vs group-normalised reward x trajectory-level vs per-turn vs check-attributed credit
DEFAULT_GRID = tuple(Setting("raw", n, c) for n in ("none", "grpo") for c in CREDITS)


@dataclass
class GRPOSettings:
    steps: int = 20
    envs_per_step: int = 4
    group_size: int = 4
    learning_rate: float = 1e-5
    temperature: float = 1.0
    max_new_tokens: int = 128
    max_turns: int | None = None
    gamma: float = 0.9
    violation_penalty: float = 1.0
    kl_coef: float = 0.0
    micro_batch: int = 4
    max_length: int = 4096
    seed: int = 0
    setting: Setting = field(default_factory=Setting)
