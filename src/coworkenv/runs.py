"""The on-disk layout of evaluation and training runs, and reading a run folder back.

A run folder holds any number of evaluations and trainings, each in its own sub-folder
(or the folder itself), so one report can set a base model, its SFT and several RL
settings side by side:

- an evaluation writes ``metrics.json`` (``{"label", "model", "split", "samples", "created",
  "metrics"}``) and ``trajectories.jsonl``;
- a training writes ``train_log.jsonl`` (one record per logged step) and
  ``train_summary.json`` (``{"kind": "sft"|"grpo", "label", "setting", ...}``).

The report finds them by walking the folder, so it can be re-rendered at any time; an
evaluation in a training's folder is the evaluation of that training's checkpoint.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coworkenv.storage import atomic_write_json, read_jsonl

METRICS_FILE = "metrics.json"
TRAJECTORIES_FILE = "trajectories.jsonl"
TRAIN_LOG = "train_log.jsonl"
TRAIN_SUMMARY = "train_summary.json"


@dataclass
class EvalRecord:
    label: str
    metrics: dict[str, Any]
    meta: dict[str, object] = field(default_factory=dict)
    folder: Path = Path()


@dataclass
class TrainRecord:
    label: str
    kind: str
    setting: str
    log: list[dict[str, Any]]
    summary: dict[str, object] = field(default_factory=dict)
    folder: Path = Path()


@dataclass
class RunData:
    root: Path
    evals: list[EvalRecord]
    trainings: list[TrainRecord]


def write_eval(folder: Path, label: str, metrics: Mapping[str, object], **meta: object) -> Path:
    """Write ``metrics.json`` of one evaluation; ``created`` orders evaluations in reports."""
    path = folder / METRICS_FILE
    atomic_write_json(path, {"label": label, "created": time.time(), **meta, "metrics": metrics})
    return path


def _label(root: Path, folder: Path, stored: str | None) -> str:
    if stored:
        return stored
    rel = folder.relative_to(root).as_posix()
    return root.name if rel == "." else rel


def load_run(root: Path) -> RunData:
    """Every evaluation and training under ``root``."""
    root = Path(root)
    evals: list[tuple[float, EvalRecord]] = []
    for path in sorted(root.rglob(METRICS_FILE)):
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = {k: v for k, v in data.items() if k != "metrics"}
        rec = EvalRecord(_label(root, path.parent, data.get("label")), data.get("metrics", {}), meta, path.parent)
        evals.append((float(data.get("created", 0.0)), rec))
    trainings: list[tuple[float, TrainRecord]] = []
    for path in sorted(root.rglob(TRAIN_LOG)):
        summary_path = path.parent / TRAIN_SUMMARY
        summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else {}
        train = TrainRecord(
            label=_label(root, path.parent, summary.get("label")),
            kind=summary.get("kind", "sft"),
            setting=summary.get("setting", ""),
            log=list(read_jsonl(path)),
            summary=summary,
            folder=path.parent,
        )
        trainings.append((float(summary.get("created", 0.0)), train))
    return RunData(
        root=root,
        evals=[r for _, r in sorted(evals, key=lambda x: x[0])],
        trainings=[r for _, r in sorted(trainings, key=lambda x: x[0])],
    )
