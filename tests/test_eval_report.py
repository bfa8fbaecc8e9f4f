"""The HTML report renders from a run folder's files, with its plots embedded."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from coworkenv.eval.metrics import compute_metrics
from coworkenv.eval.report import write_report
from coworkenv.eval.runs import TRAIN_LOG, TRAIN_SUMMARY, load_run, write_eval
from coworkenv.runtime.trajectory import Grade, Trajectory
from coworkenv.storage import append_jsonl, atomic_write_json


def _trajs(scores: list[float]) -> list[Trajectory]:
    out = []
    for i, s in enumerate(scores):
        g = Grade(score=s, completion=s, robustness=1, safety=1, passed=s >= 0.75, checks=[])
        out.append(Trajectory(spec_id=f"t{i}", messages=[], tools=[], steps=[], calls=[], grade=g,
                              capabilities=["multi_turn" if i % 2 else "tool_coordination"], blueprint=f"bp{i % 3}",
                              multi_turn=bool(i % 2)))
    return out


def _training(folder: Path, kind: str, setting: str, key: str, values: list[float]) -> None:
    append_jsonl(folder / TRAIN_LOG, [{"step": i + 1, key: v} for i, v in enumerate(values)])
    atomic_write_json(folder / TRAIN_SUMMARY, {"kind": kind, "setting": setting, "label": folder.name})


def test_report_renders_evals_trainings_and_rl_settings(tmp_path: Path) -> None:
    write_eval(tmp_path / "base", "base", compute_metrics(_trajs([0.0, 0.2, 0.8, 0.1])), model="tiny", split="heldout")
    write_eval(tmp_path / "sft", "sft", compute_metrics(_trajs([1.0, 0.9, 0.8, 0.1])), model="tiny", split="heldout")
    _training(tmp_path / "sft", "sft", "", "loss", [3.0, 2.0, 1.5])
    for name in ("raw-trajectory", "group_norm-per_turn"):
        folder = tmp_path / f"grpo-{name}"
        _training(folder, "grpo", name, "reward", [0.1, 0.3, 0.5])
        write_eval(folder, folder.name, compute_metrics(_trajs([1.0, 1.0, 0.8, 0.1])), model="tiny")

    run = load_run(tmp_path)
    assert [e.label for e in run.evals][:2] == ["base", "sft"]
    assert {t.kind for t in run.trainings} == {"sft", "grpo"}

    page = write_report(tmp_path).read_text()
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 4  # headline, capability, training curves, RL settings
    assert all(base64.b64decode(img).startswith(b"\x89PNG") for img in images)
    for text in ("base", "sft", "raw-trajectory", "group_norm-per_turn", "multi-turn", "tool_coordination", "bp2"):
        assert text in page
    assert "RL settings compared" in page


def test_report_of_an_empty_folder_says_so(tmp_path: Path) -> None:
    assert "No evaluations" in write_report(tmp_path).read_text()
