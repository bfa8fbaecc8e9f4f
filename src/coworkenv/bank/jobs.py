"""One bank job: compose recipe ``index`` of a seeded plan, verify and repair it, and say where it belongs.

Shared by the blueprint filler and the LLM driver, so both write the same journal entries.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from coworkenv.bank.repair import synthesize
from coworkenv.synth.blueprints import HELD_OUT
from coworkenv.synth.composer import plan


def split_of(blueprint: str | None, held_out: Sequence[str] = HELD_OUT) -> str:
    """``heldout`` for environments of a held-out blueprint, else ``train``."""
    return "heldout" if blueprint in held_out else "train"


@dataclass(frozen=True)
class BankConfig:
    """What determines a bank's content (the worker count does not)."""

    n: int
    seed: int = 0
    capabilities: tuple[str, ...] = ()
    blueprints: tuple[str, ...] = ()
    held_out: tuple[str, ...] = HELD_OUT
    max_rounds: int = 3
    shard_size: int = 1000
    llm_model: str | None = None
    llm_share: float = 0.0


def run_job(config: BankConfig, index: int) -> dict[str, Any]:
    """Synthesize and verify job ``index``; returns its journal entry (+ the shard line if admitted)."""
    recipe = plan(config.seed, index, config.blueprints or None, config.capabilities or None)
    outcome = synthesize(recipe, config.max_rounds)
    v = outcome.verification
    entry: dict[str, Any] = {
        "index": index,
        "blueprint": recipe.blueprint,
        "rounds": v.rounds,
        "reasons": v.reasons,
        "status": "admitted" if outcome.spec is not None else "rejected",
    }
    if outcome.spec is None:
        entry["final"] = v.kinds
        return entry
    spec = outcome.spec
    entry.update(
        id=spec.id,
        capabilities=list(spec.capabilities),
        modifiers=list(spec.provenance.modifiers),
        multi_turn=spec.is_multi_turn,
        split=split_of(recipe.blueprint, config.held_out),
    )
    record = {
        "id": spec.id,
        "index": index,
        "split": entry["split"],
        "spec": spec.model_dump(mode="json", exclude_none=True),
        "verification": v.model_dump(mode="json"),
    }
    entry["line"] = json.dumps(record, ensure_ascii=False, sort_keys=True)
    return entry
