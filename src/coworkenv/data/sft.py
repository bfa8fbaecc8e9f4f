"""Curating teacher trajectories into an SFT dataset (TRL conversational format with tools).

Filters, in order, each counted in the dataset card:
1. status: only finished episodes (no backend error, no timeout);
2. quality: score ≥ ``min_score`` and no policy violation;
3. split: environments of held-out blueprints never reach training data;
4. dedupe: identical conversations (tool-call ids aside) are kept once — K samples of a
   deterministic teacher collapse to one demonstration;
5. caps: at most ``max_per_blueprint`` demos per blueprint and ``max_per_capability`` per
   capability (a demo is admitted only while *all* its capabilities are under the cap).
Candidates are visited sample-major (every environment's sample 0 first), so caps favour
covering more environments over more samples of the same one.

Output: ``sft.jsonl`` with ``{"messages", "tools"}`` lines exactly as TRL's SFTTrainer
reads them, ``sources.jsonl`` (one provenance line per demo, same order), ``manifest.json``
and a ``README.md`` dataset card with the counts.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from coworkenv.bank.sources import heldout_blueprints
from coworkenv.data.tool_arguments import ArgumentsFormat, with_arguments
from coworkenv.rollout.store import iter_episodes
from coworkenv.storage import atomic_write_json, atomic_write_text, json_text
from coworkenv.trajectory import EpisodeRecord, Trajectory, view_segments

RunPaths = str | Path | list[str | Path]
UNLABELLED = "(none)"


@dataclass
class SftSettings:
    min_score: float = 1.0
    dedupe: bool = True
    max_per_capability: int | None = None
    max_per_blueprint: int | None = None
    exclude_blueprints: list[str] = field(default_factory=list)
    arguments: ArgumentsFormat = "text"
    """Tool-call arguments as JSON ``text`` (OpenAI format) or as ``object`` s (see data/tool_arguments.py)."""


@dataclass
class SftSummary:
    out: Path
    examples: int
    funnel: dict[str, int]
    capabilities: dict[str, int]
    blueprints: dict[str, int]
    settings: SftSettings
    evaluation_only: int = 0
    """Finished episodes left out because their spec is evaluation-only (an imported task)."""


@dataclass(frozen=True)
class Demo:
    """A chosen demonstration: its store record, its (finished) trajectory and its fingerprint."""

    record: EpisodeRecord
    trajectory: Trajectory
    fingerprint: str


def conversation_fingerprint(messages: list[dict[str, Any]]) -> str:
    """A content hash that ignores tool-call ids (the template never shows them)."""
    ids: dict[str, str] = {}
    for m in messages:
        for call in m.get("tool_calls") or []:
            ids.setdefault(call["id"], f"c{len(ids)}")
    norm = []
    for m in messages:
        m = {k: v for k, v in m.items() if k != "tool_call_id"} | (
            {"tool_call_id": ids.get(m["tool_call_id"], "")} if "tool_call_id" in m else {}
        )
        if m.get("tool_calls"):
            m["tool_calls"] = [{**c, "id": ids[c["id"]]} for c in m["tool_calls"]]
        norm.append(m)
    blob = json.dumps(norm, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def sft_example(traj: Trajectory, arguments: ArgumentsFormat = "text") -> dict[str, object]:
    """A trajectory as one TRL conversational example."""
    return {"messages": with_arguments(traj.messages, arguments), "tools": traj.tools}


def sft_examples(traj: Trajectory, arguments: ArgumentsFormat = "text") -> list[tuple[dict[str, object], list[int]]]:
    """A trajectory as TRL examples, each with the stage indices it covers (empty without stages): one per
    conversation the agent saw, so a ``notes`` stage is its own example that starts from the system prompt."""
    if not traj.stages:
        return [(sft_example(traj, arguments), [])]
    messages = with_arguments(traj.messages, arguments)
    return [
        ({"messages": messages[start:end], "tools": traj.tools}, stages)
        for start, end, stages in view_segments(traj.stages, len(messages))
    ]


def export_sft(
    runs: RunPaths,
    out: str | Path,
    settings: SftSettings | None = None,
    *,
    bank: str | Path | None = None,
) -> SftSummary:
    """Curate the episodes of ``runs`` (rollout folders) into an SFT dataset at ``out``.

    ``bank`` supplies the held-out blueprints to exclude (besides ``settings.exclude_blueprints``).
    """
    s = settings or SftSettings()
    excluded = set(s.exclude_blueprints) | heldout_blueprints(bank)
    records = list(iter_episodes(runs, status=None))
    funnel = {"episodes": len(records)}
    finished = [(r, r.trajectory) for r in records if r.status == "ok" and r.trajectory is not None]
    funnel["finished"] = len(finished)
    evaluation_only = sum(1 for _, t in finished if t.evaluation_only)
    kept = [
        (r, t)
        for r, t in finished
        if not t.evaluation_only  # imported tasks: evaluation only
        and r.score is not None
        and r.score >= s.min_score
        and t.grade is not None
        and not t.grade.violations
    ]
    funnel["above_threshold"] = len(kept)
    kept = [(r, t) for r, t in kept if t.blueprint not in excluded]
    funnel["not_held_out"] = len(kept)
    kept.sort(key=lambda pair: (pair[0].sample, pair[0].spec_id))
    seen: set[str] = set()
    by_cap: Counter[str] = Counter()
    by_blueprint: Counter[str] = Counter()
    chosen: list[Demo] = []
    deduped = 0
    for r, traj in kept:
        fp = conversation_fingerprint(traj.messages)
        if s.dedupe and fp in seen:
            continue
        seen.add(fp)
        deduped += 1
        caps = traj.capabilities or [UNLABELLED]
        blueprint = traj.blueprint or UNLABELLED
        if s.max_per_blueprint is not None and by_blueprint[blueprint] >= s.max_per_blueprint:
            continue
        if s.max_per_capability is not None and any(by_cap[c] >= s.max_per_capability for c in caps):
            continue
        by_blueprint[blueprint] += 1
        by_cap.update(caps)
        chosen.append(Demo(r, traj, fp))
    funnel["unique"] = deduped
    funnel["within_caps"] = len(chosen)
    summary = SftSummary(
        Path(out), len(chosen), funnel, dict(sorted(by_cap.items())), dict(sorted(by_blueprint.items())), s
    )
    summary.evaluation_only = evaluation_only
    summary.examples = _write(Path(out), chosen, summary, runs, excluded)  # a notes stage adds an example
    return summary


def _write(out: Path, chosen: list[Demo], summary: SftSummary, runs: RunPaths, excluded: set[str]) -> int:
    """Write the dataset, its sources, manifest and card; returns the number of examples."""
    lines: list[str] = []
    sources: list[str] = []
    for d in chosen:
        for example, stages in sft_examples(d.trajectory, summary.settings.arguments):
            lines.append(json_text(example))
            source = {
                "spec_id": d.record.spec_id,
                "sample": d.record.sample,
                "policy": d.record.policy,
                "score": d.record.score,
                "blueprint": d.trajectory.blueprint,
                "capabilities": d.trajectory.capabilities,
                "fingerprint": d.fingerprint,
            }
            sources.append(json.dumps(source | ({"stages": stages} if stages else {}), sort_keys=True))
    atomic_write_text(out / "sft.jsonl", "".join(line + "\n" for line in lines))
    atomic_write_text(out / "sources.jsonl", "".join(line + "\n" for line in sources))
    stats = _stats([d.trajectory for d in chosen])
    run_list = [str(runs)] if isinstance(runs, str | Path) else [str(r) for r in runs]
    manifest = {
        "examples": len(lines),
        "funnel": summary.funnel,
        "capabilities": summary.capabilities,
        "blueprints": summary.blueprints,
        "excluded_blueprints": sorted(excluded),
        "skipped_evaluation_only": summary.evaluation_only,
        "runs": run_list,
        "settings": asdict(summary.settings),
        **stats,
    }
    atomic_write_json(out / "manifest.json", manifest)
    atomic_write_text(out / "README.md", dataset_card(manifest))
    return len(lines)


def _stats(trajs: list[Trajectory]) -> dict[str, object]:
    n = len(trajs) or 1
    return {
        "multi_turn": sum(1 for t in trajs if t.multi_turn),
        "mean_assistant_turns": round(sum(len(t.steps) for t in trajs) / n, 2),
        "mean_tool_calls": round(sum(len(t.calls) for t in trajs) / n, 2),
    }


def dataset_card(m: dict[str, Any]) -> str:
    """The README of the dataset: what it is, how it was curated, and the counts."""
    s = m["settings"]
    rows = "\n".join(f"| {k} | {v} |" for k, v in m["funnel"].items())
    caps = "\n".join(f"| {k} | {v} |" for k, v in m["capabilities"].items()) or "| – | 0 |"
    bps = "\n".join(f"| {k} | {v} |" for k, v in m["blueprints"].items()) or "| – | 0 |"
    return f"""# coworkenv SFT demonstrations

Curated teacher trajectories from coworkenv environments, in TRL's conversational format:
each line of `sft.jsonl` is `{{"messages": [...], "tools": [...]}}` (OpenAI-format messages
with native tool calls; tool schemas as JSON Schema). `sources.jsonl` gives, line for line,
the environment, sample, teacher and score of each demonstration.

- examples: **{m["examples"]}** ({m["multi_turn"]} multi-turn); mean assistant turns
  {m["mean_assistant_turns"]}, mean tool calls {m["mean_tool_calls"]}
- source runs: {", ".join(m["runs"])}
- curation: score ≥ {s["min_score"]}, no policy violation, dedupe={s["dedupe"]},
  max per capability={s["max_per_capability"]}, max per blueprint={s["max_per_blueprint"]}
- held-out blueprints excluded: {", ".join(m["excluded_blueprints"]) or "none"}

## Curation funnel

| stage | episodes |
|---|---|
{rows}

## Per capability

| capability | demos |
|---|---|
{caps}

## Per blueprint

| blueprint | demos |
|---|---|
{bps}
"""
