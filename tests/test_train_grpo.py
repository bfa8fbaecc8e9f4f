"""Multi-turn RL: per-turn advantages from real episodes, the update's direction, and training runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the train extra")
pytest.importorskip("transformers", reason="needs the train extra")

import torch
from typer.testing import CliRunner

from coworkenv.agents import OracleTeacher
from coworkenv.agents.models import load_model
from coworkenv.cli import app
from coworkenv.data.rl import RlSettings
from coworkenv.eval.report import write_report
from coworkenv.eval.runner import evaluate_loaded
from coworkenv.runs import TRAIN_LOG, TRAIN_SUMMARY, load_run
from coworkenv.runtime import Environment, run_episode
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec import save_spec
from coworkenv.storage import read_jsonl
from coworkenv.train.episodes import Episode, TurnTokens
from coworkenv.train.grpo import run_grid, train_grpo, turn_samples
from coworkenv.train.optimizer import MasterWeightsAdamW
from coworkenv.train.policy_loss import TurnSample, completion_logps, policy_gradient_step
from coworkenv.train.settings import GRPOSettings, Setting
from train_helpers import lookup_spec


class Quitter:
    """Answers straight away without acting: a failing episode of one turn."""

    name = "quitter"

    def act(self, messages: list, tools: list) -> AssistantTurn:
        return AssistantTurn(content="Done.")


def _episode(policy: object, group: int = 0) -> Episode:
    traj = run_episode(Environment(lookup_spec(0)), policy)
    return Episode(traj, group, [TurnTokens([1, 2], [3 + i]) for i in range(len(traj.steps))])


def test_turn_samples_give_each_turn_its_advantage() -> None:
    good, bad = _episode(OracleTeacher()), _episode(Quitter())
    assert good.trajectory.grade.passed and not bad.trajectory.grade.passed
    assert len(good.turns) == 3  # ask, search, answer

    broadcast = turn_samples([good, bad], RlSettings(normaliser="grpo", credit="broadcast"))
    assert len(broadcast) == 4
    assert [s.advantage for s in broadcast[:3]] == pytest.approx([1.0] * 3, abs=1e-4)
    assert broadcast[3].advantage == pytest.approx(-1.0, abs=1e-4)
    assert broadcast[0].tokens is good.turns[0]

    discounted = turn_samples([good, bad], RlSettings(normaliser="grpo", credit="discounted", gamma=0.5))
    assert [s.advantage for s in discounted[:3]] == pytest.approx([0.25, 0.5, 1.0], abs=1e-4)

    checks = turn_samples([good, bad], RlSettings(normaliser="none", credit="checks", gamma=1.0))
    # asked (turn 1), searched (turn 2), said + robustness (turn 3): returns sum the remaining credit
    first, second, third = (s.advantage for s in checks[:3])
    assert first > second > third > 0
    assert first == pytest.approx(good.trajectory.grade.score, abs=1e-4)


def test_update_moves_log_probs_in_the_advantages_direction() -> None:
    model, tokenizer = load_model("tiny", "cpu")
    ids = tokenizer("Whose email do you need?", add_special_tokens=False)["input_ids"]
    tokens = TurnTokens(prompt_ids=ids[:3], completion_ids=ids[3:])

    def logp() -> float:
        from coworkenv.train.policy_loss import _batch

        with torch.no_grad():
            return float(
                completion_logps(model, _batch([TurnSample(tokens, 0.0)], tokenizer.pad_token_id, 64, "cpu")).sum()
            )

    for sign in (1.0, -1.0):
        before = logp()
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        stats = policy_gradient_step(model, opt, [TurnSample(tokens, sign)], pad_id=tokenizer.pad_token_id)
        assert stats["tokens"] == len(tokens.completion_ids)
        assert (logp() - before) * sign > 0


def test_master_weights_keep_updates_that_bf16_rounds_away() -> None:
    def train(make: object) -> torch.Tensor:
        weight = torch.nn.Parameter(torch.ones(4, dtype=torch.bfloat16))
        opt = make([weight], lr=1e-4)
        for _ in range(40):
            opt.zero_grad()
            weight.grad = torch.ones_like(weight)
            opt.step()
        return weight.detach().float()

    assert torch.equal(train(torch.optim.AdamW), torch.ones(4))  # each 1e-4 step is below half a bf16 step at 1.0
    assert torch.all(train(MasterWeightsAdamW) < 1.0)


def test_grpo_trains_on_real_environments(tmp_path: Path) -> None:
    model, tokenizer = load_model("tiny", "cpu")
    before = [p.detach().clone() for p in model.parameters()]
    specs = [lookup_spec(i) for i in range(3)]
    settings = GRPOSettings(
        steps=2,
        envs_per_step=2,
        group_size=2,
        max_new_tokens=12,
        learning_rate=1e-3,
        setting=Setting("raw", "none", "broadcast"),
    )
    result = train_grpo(model, tokenizer, specs, tmp_path, settings)
    log = list(read_jsonl(tmp_path / TRAIN_LOG))
    assert [r["step"] for r in log] == [1, 2]
    # an untrained model never solves the task: the reward is the robustness part of a real grade
    assert all(r["reward"] == pytest.approx(0.2) and r["turns"] >= 4 and r["tokens"] > 0 for r in log)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    summary = json.loads((tmp_path / TRAIN_SUMMARY).read_text())
    assert summary["kind"] == "grpo" and summary["setting"] == "raw-none-broadcast"
    assert result.out == tmp_path and (tmp_path / "model.safetensors").exists()


def test_grid_compares_settings_from_the_same_start(tmp_path: Path) -> None:
    specs = [lookup_spec(i) for i in range(2)]
    grid = [Setting("raw", "none", "broadcast"), Setting("raw", "grpo", "checks")]
    settings = GRPOSettings(steps=2, envs_per_step=1, group_size=2, max_new_tokens=8, learning_rate=1e-3)

    def after(setting: Setting, result: object, tokenizer: object) -> None:
        evaluate_loaded(result.model, tokenizer, specs, result.out, f"grpo {setting.name}", max_new_tokens=8)

    results = run_grid(lambda: load_model("tiny", "cpu"), specs, tmp_path, grid, settings, after=after)
    first_rewards = [r.log[0]["reward"] for r in results]
    assert first_rewards[0] == first_rewards[1]  # same start model, bank and seed: same first batch
    run = load_run(tmp_path)
    assert sorted(t.setting for t in run.trainings) == sorted(s.name for s in grid)
    assert {e.label for e in run.evals} == {f"grpo {s.name}" for s in grid}
    assert "RL settings compared" in write_report(tmp_path).read_text()


def test_setting_parsing() -> None:
    assert Setting.parse("grpo/checks") == Setting("raw", "grpo", "checks")
    assert Setting.parse("binary/rloo/discounted").name == "binary-rloo-discounted"
    with pytest.raises(ValueError):
        Setting.parse("grpo/sideways")


def test_cli_grpo_on_a_spec_folder(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    for i in range(2):
        save_spec(lookup_spec(i), specs / f"lookup-{i}.json")
    out = tmp_path / "ckpt"
    args = [
        "train",
        "grpo",
        "--model",
        "tiny",
        "--bank",
        str(specs),
        "--split",
        "all",
        "--out",
        str(out),
        "--normaliser",
        "rloo",
        "--credit",
        "checks",
        "--steps",
        "1",
        "--envs-per-step",
        "2",
        "--group-size",
        "2",
        "--max-new-tokens",
        "8",
        "--device",
        "cpu",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads((out / TRAIN_SUMMARY).read_text())["setting"] == "raw-rloo-checks"
    assert (out / "report.html").exists()
    bad = CliRunner().invoke(app, [*args[:-2], "--grid", "grpo/nowhere"])
    assert bad.exit_code == 2


def test_a_deadline_ends_each_settings_training_after_one_step(tmp_path: Path) -> None:
    """A run sized for a device budget: a passed deadline still trains (and saves) one step per setting."""
    specs = [lookup_spec(i) for i in range(2)]
    grid = [Setting("raw", "grpo", "broadcast"), Setting("raw", "grpo", "checks")]
    settings = GRPOSettings(steps=3, envs_per_step=1, group_size=2, max_new_tokens=8, learning_rate=1e-3)
    asked: list[int] = []

    def deadline(i: int) -> float:
        asked.append(i)
        return 0.0  # long passed

    results = run_grid(lambda: load_model("tiny", "cpu"), specs, tmp_path, grid, settings, deadline=deadline)
    assert asked == [0, 1] and [len(r.log) for r in results] == [1, 1]
    summary = json.loads((tmp_path / grid[0].name / TRAIN_SUMMARY).read_text())
    assert summary["steps"] == 1 and summary["planned_steps"] == 3
