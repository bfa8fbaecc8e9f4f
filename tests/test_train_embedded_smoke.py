"""benchmarks/train_embedded.py end to end with the tiny model: every stage, then a resume from the saved SFT."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark_modules import load_benchmark

pytest.importorskip("trl")
ROOT = Path(__file__).resolve().parents[1]
SET_KEYS = {"score", "pass@1", "multi_turn_score", "do_nothing_score", "calls_per_episode", "valid_calls"}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_smoke_runs_every_stage_and_resumes_from_the_sft_checkpoint(tmp_path: Path) -> None:
    script = load_benchmark("train_embedded")
    out = tmp_path / "run"
    small = [
        "--model",
        "tiny",
        "--smoke",
        "--device",
        "cpu",
        "--out",
        str(out),
        "--bank-size",
        "16",
        "--workers",
        "1",
        "--examples",
        str(ROOT / "examples"),
        "--examples-n",
        "1",
        "--instances",
        "1",
        "--heldout-envs",
        "1",
        "--train-envs",
        "4",
        "--decode-bench",
        "0",
    ]
    assert script.main([*small, "--stages", "base,sft"]) == 0
    first = json.loads((out / "summary.json").read_text())
    assert set(first["stages"]) == {"base", "sft"}
    assert first["stages"]["sft"]["reload_first_turn_agreement"] == 100.0
    assert first["training"]["sft"]["validation_curve"]

    assert script.main([*small, "--stages", "grpo"]) == 0  # resumes from out/sft
    summary = json.loads((out / "summary.json").read_text())
    rl = "grpo raw-grpo-checks"
    assert set(summary["stages"]) == {"base", "sft", rl}
    for stage in summary["stages"].values():
        for name in ("instances", "heldout_blueprints", "examples"):
            assert set(stage[name]) >= SET_KEYS, (stage, name)
            assert stage[name]["do_nothing_score"] is not None
    assert summary["training"][rl]["groups_with_spread"] and summary["training"][rl]["reward_curve"]
    assert (
        summary["stages"]["base"]["instances"]["do_nothing_score"]
        == summary["stages"][rl]["instances"]["do_nothing_score"]
    )
    assert (out / "report.html").exists()
