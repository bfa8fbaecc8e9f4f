"""One bank job: compose recipe ``index`` of a seeded plan, verify and repair it, and say where it belongs.

Shared by the blueprint filler and the LLM driver, so both write the same journal entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from coworkenv.bank.entry import Entry
from coworkenv.bank.repair import synthesize
from coworkenv.spec import TaskSpec
from coworkenv.spec.io import canonical_json, compact_json, json_object
from coworkenv.synth.background import DEFAULT_WORKSPACE
from coworkenv.synth.blueprints import HELD_OUT
from coworkenv.synth.composer import plan
from coworkenv.synth.interfaces import CANONICAL
from coworkenv.verify.admission import Verification


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
    generator: str = "blueprints"
    """Where workflows come from: ``blueprints``, ``composed`` (:mod:`coworkenv.synth.chains`) or ``mix``."""
    interfaces: str = "train"
    """The interface families tools are shown in: ``train``, ``held_out`` (never drawn otherwise; the whole bank
    is then held out) or ``canonical``."""
    workspace: str = DEFAULT_WORKSPACE
    """How much background each workspace holds (:data:`coworkenv.synth.background.WORKSPACES`)."""
    held_out: tuple[str, ...] = HELD_OUT
    max_rounds: int = 3
    shard_size: int = 1000
    llm_model: str | None = None
    llm_share: float = 0.0
    llm_prompt: str | None = None
    """Digest of the generator's prompt material (:func:`coworkenv.bank.llm.prompts.prompt_version`)."""


def run_job(config: BankConfig, index: int) -> Entry:
    """Synthesize and verify job ``index``; returns its journal entry (+ the shard line if admitted)."""
    recipe = plan(
        config.seed,
        index,
        config.blueprints or None,
        config.capabilities or None,
        config.generator,
        config.interfaces,
        config.workspace,
    )
    outcome = synthesize(recipe, config.max_rounds)
    v = outcome.verification
    entry: Entry = {
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
    split = "heldout" if config.interfaces == "held_out" else split_of(recipe.blueprint, config.held_out)
    return admitted_entry(entry, spec, v, split, list(spec.provenance.modifiers))


def admitted_entry(entry: Entry, spec: TaskSpec, verification: Verification, split: str, modifiers: list[str]) -> Entry:
    """``entry`` completed for an admitted spec: its journal fields and its shard line (``line``)."""
    entry["id"] = spec.id
    entry["capabilities"] = list(spec.capabilities)
    entry["modifiers"] = modifiers
    entry["multi_turn"] = spec.is_multi_turn
    entry["split"] = split
    entry["interface"] = spec.interface.style if spec.interface is not None else CANONICAL
    entry["line"] = json_object(
        {
            "id": compact_json(spec.id),
            "index": compact_json(entry["index"]),
            "split": compact_json(split),
            "spec": canonical_json(spec),
            "verification": compact_json(verification.model_dump(mode="json")),
        }
    )
    return entry
