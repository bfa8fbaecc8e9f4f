"""The HTML report renders from a run folder's files, with its plots embedded."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coworkenv.agents.models import load_model
from coworkenv.agents.transformers_policy import TransformersPolicy
from coworkenv.cli import app
from coworkenv.eval.metrics import compute_metrics
from coworkenv.eval.report import write_report
from coworkenv.eval.runner import evaluate
from coworkenv.runs import TRAIN_LOG, TRAIN_SUMMARY, load_run, write_eval
from coworkenv.spec import save_spec
from coworkenv.storage import append_jsonl, atomic_write_json
from coworkenv.trajectory import Grade, Trajectory
from train_helpers import lookup_spec


def _trajs(scores: list[float]) -> list[Trajectory]:
    out = []
    for i, s in enumerate(scores):
        g = Grade(score=s, completion=s, robustness=1, safety=1, passed=s >= 0.75, checks=[])
        out.append(
            Trajectory(
                spec_id=f"t{i}",
                messages=[],
                tools=[],
                steps=[],
                calls=[],
                grade=g,
                capabilities=["multi_turn" if i % 2 else "tool_coordination"],
                blueprint=f"bp{i % 3}",
                multi_turn=bool(i % 2),
            )
        )
    return out


def _training(folder: Path, kind: str, setting: str, key: str, values: list[float]) -> None:
    append_jsonl(folder / TRAIN_LOG, [{"step": i + 1, key: v} for i, v in enumerate(values)])
    atomic_write_json(folder / TRAIN_SUMMARY, {"kind": kind, "setting": setting, "label": folder.name})


def test_report_renders_evals_trainings_and_rl_settings(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the report's plots need the report extra")
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


def test_cli_eval_writes_metrics_trajectories_and_report(tmp_path: Path) -> None:
    for extra in ("torch", "tokenizers", "matplotlib"):
        pytest.importorskip(extra, reason="a local model and the report's plots need the train and report extras")
    bank = tmp_path / "specs"
    for i in range(3):
        save_spec(lookup_spec(i), bank / f"lookup-{i}.json")
    out = tmp_path / "run"
    res = CliRunner().invoke(
        app, ["eval", "--model", "oracle", "--bank", str(bank), "--split", "all", "--samples", "2", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    data = json.loads((out / "metrics.json").read_text())
    m = data["metrics"]
    assert m["overall"]["pass@1"] == 100.0 and m["overall"]["pass^k"] == 100.0 and m["overall"]["k"] == 2
    assert m["multi_turn"]["tasks"] == 2 and set(m["by_blueprint"]) == {"lookup_ask", "lookup_direct"}
    assert len((out / "trajectories.jsonl").read_text().splitlines()) == 6
    assert (out / "report.html").exists()
    res = CliRunner().invoke(app, ["report", str(out), "--title", "again"])
    assert res.exit_code == 0 and "again" in (out / "report.html").read_text()


def test_lockstep_batches_a_local_model_over_every_episode() -> None:
    pytest.importorskip("torch", reason="a local model needs the train extra")
    pytest.importorskip("tokenizers", reason="a local model needs the train extra")
    model, tokenizer = load_model("tiny", "cpu")
    batches: list[int] = []

    class Counting:
        name = "tiny"

        def __init__(self) -> None:
            self.inner = TransformersPolicy(model, tokenizer, max_new_tokens=6)

        def act_batch(self, items: list) -> list:
            batches.append(len(items))
            return self.inner.act_batch(items)

    result = evaluate(Counting(), [lookup_spec(i) for i in range(3)], samples=2, batch_size=4)
    assert len(result.trajectories) == 6
    assert batches[0] == 4 and sum(1 for b in batches if b > 1) >= 2
    assert all(t.grade is not None for t in result.trajectories)
    assert result.metrics["overall"]["samples"] == 6
