"""The environment bank: synthesize, verify and store environments; read them back.

Layout of a bank folder::

    manifest.json              config, yield, repair rounds, rejection reasons, counts, split
    journal.jsonl              one line per finished job (admitted or rejected), in job order
    shards/<split>-00000.jsonl admitted environments: {"id", "index", "split", "spec", "verification"}
    builds.jsonl               one line per run that built it: backend, workers, start-up, rates

Jobs are numbered; job ``i`` of a bank with seed ``s`` always yields the same spec
(:func:`coworkenv.synth.composer.plan`), whichever worker runs it. Results are written in
job order, shards before the journal, so after a kill the journal is a prefix of the job
sequence: a rerun truncates shard records the journal does not know and carries on from
there. The held-out split is by blueprint (unseen workflows). Only ``builds.jsonl`` depends
on the machine; the rest is the same bytes wherever and in how many runs the bank was built.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from coworkenv.bank.entry import Entry, read_entry
from coworkenv.bank.jobs import BankConfig, split_of
from coworkenv.bank.llm.driver import fill_with_llm
from coworkenv.bank.llm.prompts import prompt_version
from coworkenv.bank.llm.scenario import HELD_OUT_LABELS
from coworkenv.bank.llm.stats import LLMTally
from coworkenv.bank.runners import BATCH_PER_WORKER, BUILD_FIELDS, open_runner
from coworkenv.cluster import check_address
from coworkenv.spec import TaskSpec, spec_from_data
from coworkenv.storage import (
    append_jsonl,
    append_lines,
    atomic_write_json,
    atomic_write_text,
    read_jsonl,
    read_jsonl_numbered,
    repair_jsonl,
)
from coworkenv.synth.background import DEFAULT_WORKSPACE, WORKSPACES
from coworkenv.synth.blueprints import BLUEPRINTS, HELD_OUT
from coworkenv.synth.chains import HELD_OUT_COMPOSED
from coworkenv.synth.composer import FAMILIES, workflows
from coworkenv.synth.interfaces import CANONICAL, INTERFACE_SETS
from coworkenv.verify.admission import Verification

if TYPE_CHECKING:
    from coworkenv.bank.llm.client import LLMClient

FORMAT = 1
BUILDS = "builds.jsonl"
Progress = Callable[[int, int], None]


def config_dict(config: BankConfig) -> dict[str, object]:
    """The manifest's ``config``; a blueprint bank has no prompts, hence no ``llm_prompt``."""
    data = asdict(config)
    if data["llm_prompt"] is None:
        del data["llm_prompt"]
    return data


class BankError(ValueError):
    """A bank folder that cannot be resumed with the requested settings."""


@dataclass
class Tally:
    """The manifest's counters, rebuilt from the journal on resume."""

    jobs: int = 0
    admitted: int = 0
    multi_turn: int = 0
    rounds: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    final: Counter[str] = field(default_factory=Counter)
    capabilities: Counter[str] = field(default_factory=Counter)
    modifiers: Counter[str] = field(default_factory=Counter)
    interfaces: Counter[str] = field(default_factory=Counter)
    blueprint_jobs: Counter[str] = field(default_factory=Counter)
    blueprint_admitted: Counter[str] = field(default_factory=Counter)
    splits: Counter[str] = field(default_factory=Counter)
    shards: Counter[str] = field(default_factory=Counter)
    ids: set[str] = field(default_factory=set)
    llm: LLMTally = field(default_factory=LLMTally)

    def add(self, entry: Entry) -> None:
        self.jobs += 1
        if "llm" in entry:
            self.llm.add(entry)
        self.reasons.update(entry["reasons"])
        self.blueprint_jobs[entry["blueprint"]] += 1
        if entry["status"] != "admitted":
            self.final.update(entry["final"])
            return
        self.admitted += 1
        self.multi_turn += entry["multi_turn"]
        self.rounds[str(entry["rounds"])] += 1
        self.capabilities.update(entry["capabilities"])
        self.modifiers.update(entry["modifiers"])
        self.interfaces[entry.get("interface", CANONICAL)] += 1  # banks made before interfaces show none
        self.blueprint_admitted[entry["blueprint"]] += 1
        self.splits[entry["split"]] += 1
        self.shards[entry["shard"]] += 1
        self.ids.add(entry["id"])

    def manifest(self, config: BankConfig, complete: bool) -> dict[str, object]:
        return {
            "format": FORMAT,
            "config": config_dict(config),
            "complete": complete,
            "jobs": self.jobs,
            "admitted": self.admitted,
            "rejected": self.jobs - self.admitted,
            "yield": round(self.admitted / self.jobs, 4) if self.jobs else 0.0,
            "repaired": self.admitted - self.rounds["0"],
            "repair_rounds": dict(sorted(self.rounds.items())),
            "rejection_reasons": dict(self.reasons.most_common()),
            "final_rejections": dict(self.final.most_common()),
            "per_capability": dict(sorted(self.capabilities.items())),
            "per_modifier": dict(sorted(self.modifiers.items())),
            "per_interface": dict(sorted(self.interfaces.items())),
            "per_blueprint": {
                bp: {
                    "jobs": self.blueprint_jobs[bp],
                    "admitted": self.blueprint_admitted[bp],
                    "split": split_of(bp, config.held_out),
                }
                for bp in sorted(self.blueprint_jobs)
            },
            "multi_turn": self.multi_turn,
            "split": {
                "held_out_blueprints": list(config.held_out),
                "train": self.splits["train"],
                "heldout": self.splits["heldout"],
            },
            "shards": dict(sorted(self.shards.items())),
        } | ({"llm": self.llm.manifest(config.max_rounds)} if self.llm.jobs else {})


class _Writer:
    """Appends results in job order and keeps the manifest current."""

    def __init__(self, out: Path, config: BankConfig) -> None:
        self.out = out
        self.config = config
        self.tally = Tally()
        self.journal = out / "journal.jsonl"
        self.pending: list[Entry] = []
        self.lines: dict[str, list[str]] = {}
        self._resume()

    def _resume(self) -> None:
        manifest = self.out / "manifest.json"
        if manifest.exists():
            before = {"workspace": "small"}  # a bank from before background records was made without them
            saved = asdict(BankConfig(n=0)) | before | json.loads(manifest.read_text(encoding="utf-8"))["config"]
            mine = json.loads(json.dumps(asdict(self.config)))
            changed = sorted(k for k in saved.keys() | mine.keys() if k != "n" and saved.get(k) != mine.get(k))
            if changed:
                why = " (the generator's prompts changed since it was started)" if "llm_prompt" in changed else ""
                raise BankError(f"{self.out} holds a bank made with other settings{why}: {', '.join(changed)}: {saved}")
        for stale in self.out.rglob(".*.tmp"):  # half-written by a killed run: never renamed into place
            stale.unlink()
        repair_jsonl(self.journal)
        repair_jsonl(self.out / BUILDS)
        for number, record in read_jsonl_numbered(self.journal):
            if not isinstance(record, dict):
                raise BankError(f"{self.journal}: line {number}: not a job entry (a JSON object)")
            try:
                self.tally.add(read_entry(record))
            except ValidationError as exc:
                raise BankError(f"{self.journal}: line {number}: not a job entry: {exc}") from exc
        shards = self.out / "shards"
        for path in sorted(shards.glob("*.jsonl")) if shards.exists() else []:
            repair_jsonl(path)
            keep = self.tally.shards[f"shards/{path.name}"]
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            if len(lines) > keep:  # written before a kill, never journaled: those jobs run again
                atomic_write_text(path, "".join(lines[:keep]))
        self.write_manifest()

    def shard_for(self, split: str) -> str:
        k = self.tally.splits[split] // self.config.shard_size
        return f"shards/{split}-{k:05d}.jsonl"

    def add(self, entry: Entry) -> None:
        line = entry.pop("line", None)
        if line is not None and entry["id"] in self.tally.ids:
            entry["status"] = "rejected"
            entry["final"] = ["duplicate"]
            entry["reasons"] = [*entry["reasons"], "duplicate"]
            line = None
        if line is not None:
            entry["shard"] = self.shard_for(entry["split"])
            self.lines.setdefault(entry["shard"], []).append(line)
        self.tally.add(entry)
        self.pending.append(entry)

    def flush(self, complete: bool = False) -> None:
        for shard, lines in self.lines.items():  # shards reach the disk before the journal names them
            append_lines(self.out / shard, lines)
        if self.pending:
            append_jsonl(self.journal, self.pending)
        self.lines, self.pending = {}, []
        self.write_manifest(complete)

    def write_manifest(self, complete: bool = False) -> None:
        atomic_write_json(self.out / "manifest.json", self.tally.manifest(self.config, complete))


def synthesize_bank(
    out: str | Path,
    n: int,
    *,
    seed: int = 0,
    capabilities: Sequence[str] | None = None,
    blueprints: Sequence[str] | None = None,
    held_out: Sequence[str] | None = None,
    generator: str = "blueprints",
    interfaces: str = "train",
    workspace: str = DEFAULT_WORKSPACE,
    workers: int = 1,
    max_rounds: int = 3,
    shard_size: int = 1000,
    on_progress: Progress | None = None,
    llm: LLMClient | None = None,
    llm_share: float = 1.0,
    ray_address: str | None = None,
) -> dict[str, object]:
    """Fill ``out`` with ``n`` admitted environments (resuming a partial bank); returns the manifest.

    ``capabilities`` restricts the bank to environments exercising at least one of them;
    ``blueprints`` to those workflows; ``held_out`` names the held-out blueprints (default
    :data:`HELD_OUT`, and :data:`HELD_OUT_COMPOSED` when composed workflows take part); ``generator`` says
    where workflows come from (``blueprints``, ``composed`` or ``mix``); ``interfaces`` which tool interfaces are
    drawn (``train``, ``held_out``: every environment joins the held-out split, or ``canonical``); ``workspace``
    how much background each workspace holds (:data:`coworkenv.synth.background.WORKSPACES`).
    ``on_progress(admitted, jobs)`` is called after every job. ``workers`` run the jobs, as processes or, with
    ``ray_address`` (``local``, ``auto`` or a cluster's), as Ray actors (``workers=0``: one per cluster CPU); the
    bank's bytes are the same either way.
    With ``llm``, that model writes ``llm_share`` of the jobs (:mod:`coworkenv.bank.llm`),
    ``workers`` requests at a time, and held-out workflow families join the held-out split.
    """
    workflows(generator)  # an unknown generator or interface set is a ValueError before anything is written
    if interfaces not in INTERFACE_SETS:
        raise ValueError(f"unknown interfaces {interfaces!r}; known: {', '.join(INTERFACE_SETS)}")
    if workspace not in WORKSPACES:
        raise BankError(f"unknown workspace {workspace!r}; known: {', '.join(WORKSPACES)}")
    unknown = sorted(set(blueprints or ()) - set(BLUEPRINTS) - set(FAMILIES))
    if unknown:
        raise BankError(f"unknown blueprints: {', '.join(unknown)}")
    if ray_address is not None:
        if llm is not None:
            raise BankError("--ray runs blueprint and composed jobs; the LLM generator runs in this process")
        check_address(ray_address)  # a bad or unreachable address is an error before anything is written
    config = BankConfig(
        n=n,
        seed=seed,
        capabilities=tuple(capabilities or ()),
        blueprints=tuple(blueprints or ()),
        held_out=tuple(held_out if held_out is not None else _default_held_out(llm is not None, generator)),
        generator=generator,
        interfaces=interfaces,
        workspace=workspace,
        max_rounds=max_rounds,
        shard_size=shard_size,
        llm_model=llm.model if llm is not None else None,
        llm_share=llm_share if llm is not None else 0.0,
        llm_prompt=prompt_version() if llm is not None else None,
    )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    writer = _Writer(out, config)
    tally = writer.tally
    if on_progress is not None:
        on_progress(tally.admitted, tally.jobs)
    if llm is not None:
        try:
            fill_with_llm(writer, llm, n, workers, on_progress)
        finally:
            writer.flush()
    else:
        _fill_with_blueprints(writer, n, workers, ray_address, on_progress)
    writer.flush(complete=True)
    return tally.manifest(config, True)


def _fill_with_blueprints(
    writer: _Writer, n: int, workers: int, ray_address: str | None, on_progress: Progress | None
) -> None:
    """Run jobs until ``n`` are admitted, writing every :data:`BATCH_PER_WORKER` jobs per worker; the build's
    figures are appended to ``builds.jsonl`` however it ends."""
    tally = writer.tally
    if tally.admitted >= n:
        return
    jobs, admitted = tally.jobs, tally.admitted
    with open_runner(writer.config, workers, ray_address) as runner:
        every = BATCH_PER_WORKER * runner.workers
        try:
            for entry in runner.stream(tally.jobs):
                writer.add(entry)
                if on_progress is not None:
                    on_progress(tally.admitted, tally.jobs)
                if tally.admitted >= n:
                    break
                if tally.jobs % every == 0:
                    writer.flush()
        finally:
            writer.flush()
            append_jsonl(writer.out / BUILDS, [runner.record(tally.jobs - jobs, tally.admitted - admitted)])


def _default_held_out(llm: bool, generator: str = "blueprints") -> tuple[str, ...]:
    """Held-out blueprints, plus the held-out composed families when chains take part, plus held-out LLM workflow
    families when a model writes jobs."""
    composed = HELD_OUT_COMPOSED if generator != "blueprints" else ()
    return (*HELD_OUT, *composed, *(HELD_OUT_LABELS if llm else ()))


def read_manifest(path: str | Path) -> dict[str, object]:
    manifest = Path(path) / "manifest.json"
    if not manifest.exists():
        raise BankError(f"{path} is not an environment bank (no manifest.json)")
    data = json.loads(manifest.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise BankError(f"{manifest}: not a bank manifest (a JSON object)")
    return data


def read_builds(path: str | Path) -> list[dict[str, object]]:
    """The figures of each run that built the bank (``builds.jsonl``: where it ran, how fast), oldest first."""
    builds = Path(path) / BUILDS
    records = list(read_jsonl_numbered(builds))
    for number, record in records:
        if not isinstance(record, dict) or not record.keys() >= BUILD_FIELDS:
            raise BankError(f"{builds}: line {number}: not a build record (expected the fields {sorted(BUILD_FIELDS)})")
    return [record for _, record in records]


def heldout_blueprints(path: str | Path) -> list[str]:
    """The blueprints whose environments form the bank's held-out split."""
    config = read_manifest(path).get("config")
    held_out = config.get("held_out") if isinstance(config, dict) else None
    if not isinstance(held_out, list):
        raise BankError(f"{Path(path) / 'manifest.json'}: config.held_out: missing or not a list")
    return [str(name) for name in held_out]


def load_bank(path: str | Path, split: str | None = None) -> Iterator[tuple[TaskSpec, Verification]]:
    """Stream the bank's environments (optionally of one split) as (spec, verification). A shard's name gives
    its split, but an evaluation-only spec (an imported task, which admission refuses: only a bank put together
    by hand holds one) is held out wherever it lies."""
    shards = read_manifest(path).get("shards")
    if not isinstance(shards, dict):
        raise BankError(f"{Path(path) / 'manifest.json'}: shards: missing or not an object")
    for shard in shards:
        named = Path(shard).name.split("-")[0]
        if split is not None and named != split and not (split == "heldout" and named == "train"):
            continue
        for record in read_jsonl(Path(path) / shard):
            provenance = record["spec"].get("provenance") or {}
            if split is not None and ("heldout" if provenance.get("evaluation_only") else named) != split:
                continue
            yield spec_from_data(record["spec"], f"{path}/{shard}"), Verification.model_validate(record["verification"])
