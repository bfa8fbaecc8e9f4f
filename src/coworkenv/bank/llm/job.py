"""One LLM bank job: brief → rounds → the bank's journal entry, shard line, sketch and audit trail.

The entry has the shape of a blueprint job's (:func:`coworkenv.bank.jobs.run_job`), plus
``llm`` (requests, tokens, whether a programmatic repair admitted it, target capabilities),
``sketch``/``workflow``/``title`` (novelty) and ``audit`` (popped before journaling).
"""

from __future__ import annotations

from coworkenv.bank.entry import Entry
from coworkenv.bank.jobs import BankConfig, admitted_entry
from coworkenv.bank.llm.client import LLMClient
from coworkenv.bank.llm.loop import Brief, run_rounds
from coworkenv.bank.llm.novelty import features, sketch, workflow
from coworkenv.bank.llm.scenario import sample_scenario, target_capabilities
from coworkenv.capabilities import CAPABILITIES
from coworkenv.synth.background import DEFAULT_WORKSPACE
from coworkenv.synth.composer import derive


def brief_for(
    seed: int, index: int, capabilities: tuple[str, ...], avoid: tuple[str, ...], workspace: str = DEFAULT_WORKSPACE
) -> Brief:
    """The seeded request of job ``index``: scenario, target capabilities and workspace size."""
    return Brief(
        job=index,
        seed=derive(seed, "llm", index),
        scenario=sample_scenario(seed, index),
        capabilities=target_capabilities(seed, index, capabilities, tuple(CAPABILITIES)),
        avoid=avoid,
        workspace=workspace,
    )


def run_llm_job(client: LLMClient, config: BankConfig, index: int, avoid: tuple[str, ...], split: str) -> Entry:
    """Run job ``index`` of a bank with ``config``; ``split`` of its workflow family."""
    brief = brief_for(config.seed, index, config.capabilities, avoid, config.workspace)
    result = run_rounds(client, brief, config.max_rounds)
    v = result.verification
    entry: Entry = {
        "index": index,
        "blueprint": brief.scenario.label,
        "rounds": result.rounds,
        "reasons": result.reasons,
        "status": "admitted" if result.spec is not None else "rejected",
        "llm": {
            "requests": result.requests,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "programmatic": result.programmatic,
            "targets": list(brief.capabilities),
        },
    }
    entry["audit"] = {
        "job": index,
        "model": client.model,
        "scenario": brief.scenario.as_dict(),
        "capabilities": list(brief.capabilities),
        "avoid": list(avoid),
        "rounds": result.trail,
    }
    if result.spec is None:
        entry["final"] = v.kinds
        return entry
    spec = result.spec
    entry["sketch"] = sketch(features(spec))
    entry["workflow"] = workflow(spec)
    entry["title"] = spec.title
    return admitted_entry(entry, spec, v, split, [])
