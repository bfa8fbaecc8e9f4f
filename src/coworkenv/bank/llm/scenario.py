"""Seeded workplace scenarios: the setting an LLM-written environment takes place in.

A scenario is drawn from (bank seed, job index) alone, and recorded in the audit trail,
so a bank is reproducible given the same model replies. The workflow family doubles as
the environment's "blueprint" label (``llm:<family>``): held-out families form the
held-out split, as held-out blueprints do for procedural environments.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

INDUSTRIES = (
    "logistics",
    "healthcare clinic network",
    "software-as-a-service",
    "architecture firm",
    "university department",
    "retail chain",
    "law firm",
    "manufacturing plant",
    "non-profit",
    "insurance broker",
    "hotel group",
    "renewable energy developer",
)
ROLES = (
    "operations coordinator",
    "executive assistant",
    "team lead",
    "account manager",
    "finance analyst",
    "HR generalist",
    "IT support engineer",
    "project manager",
    "office manager",
    "procurement officer",
)
TEAMS = ("finance", "people", "sales", "customer success", "engineering", "facilities", "legal", "marketing")
FAMILIES = (
    "approvals",
    "scheduling",
    "customer communication",
    "reporting",
    "incident handling",
    "vendor management",
    "onboarding and offboarding",
    "data hygiene",
    "travel and expenses",
    "handover and delegation",
    "security hygiene",
    "document review",
)
HELD_OUT_FAMILIES = ("security hygiene", "document review")
"""Workflow families whose LLM environments form the held-out split."""


def family_label(family: str) -> str:
    """The blueprint-like label of a workflow family (used for splits and per-workflow counts)."""
    return "llm:" + family.replace(" ", "_")


HELD_OUT_LABELS = tuple(family_label(f) for f in HELD_OUT_FAMILIES)


@dataclass(frozen=True)
class Scenario:
    industry: str
    role: str
    team: str
    family: str

    @property
    def label(self) -> str:
        return family_label(self.family)

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def sample_scenario(seed: int, index: int) -> Scenario:
    """The scenario of job ``index`` in a bank of seed ``seed`` (string-seeded: stable across processes)."""
    rng = random.Random(f"scenario:{seed}:{index}")
    return Scenario(rng.choice(INDUSTRIES), rng.choice(ROLES), rng.choice(TEAMS), rng.choice(FAMILIES))


def is_llm_job(seed: int, index: int, share: float) -> bool:
    """Whether job ``index`` is written by the model (``share`` of jobs) or by a blueprint."""
    return share >= 1.0 or random.Random(f"share:{seed}:{index}").random() < share


def target_capabilities(seed: int, index: int, allowed: tuple[str, ...], known: tuple[str, ...]) -> tuple[str, ...]:
    """One to three capabilities job ``index`` must exercise, drawn from ``allowed`` (or every one)."""
    pool = sorted(allowed or known)
    rng = random.Random(f"capabilities:{seed}:{index}")
    k = min(len(pool), rng.choice((1, 2, 2, 3)))
    return tuple(sorted(rng.sample(pool, k)))
