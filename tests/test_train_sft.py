"""SFT on oracle demonstrations lowers the loss of a tiny model; the checkpoint reloads and acts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="SFT needs the train extra")
pytest.importorskip("trl", reason="SFT needs the train extra")
pytest.importorskip("datasets", reason="SFT needs the train extra")
pytest.importorskip("tokenizers", reason="SFT needs the train extra")

from typer.testing import CliRunner

from coworkenv.agents.models import load_model
from coworkenv.cli import app
from coworkenv.runs import TRAIN_LOG, TRAIN_SUMMARY
from coworkenv.storage import read_jsonl
from coworkenv.train.sft import SFTSettings, _dataset, train_sft
from train_helpers import lookup_spec, oracle_demos


def test_cli_sft_lowers_the_loss_and_saves_a_checkpoint(tmp_path: Path) -> None:
    data = tmp_path / "sft.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in oracle_demos([lookup_spec(i) for i in range(4)])))
    out = tmp_path / "ckpt"
    result = CliRunner().invoke(
        app,
        [
            "train",
            "sft",
            "--model",
            "tiny",
            "--data",
            str(data),
            "--out",
            str(out),
            "--max-steps",
            "16",
            "--lr",
            "3e-3",
            "--batch-size",
            "2",
            "--device",
            "cpu",
        ],
    )
    assert result.exit_code == 0, result.output
    losses = [r["loss"] for r in read_jsonl(out / TRAIN_LOG) if "loss" in r]
    assert len(losses) == 16
    assert losses[-1] < losses[0] - 1.0
    summary = json.loads((out / TRAIN_SUMMARY).read_text())
    assert summary["kind"] == "sft" and summary["steps"] == 16 and summary["examples"] == 4

    from coworkenv.agents.transformers_policy import TransformersPolicy

    model, tokenizer = load_model(str(out), "cpu")
    turn = TransformersPolicy(model, tokenizer, max_new_tokens=8).act([{"role": "user", "content": "hi"}], [])
    assert turn.usage["completion_tokens"] >= 1


def test_loss_is_on_assistant_tokens_only() -> None:
    """The template's generation blocks mark exactly the assistant turns (and their <end_of_turn>)."""
    from coworkenv.agents.tiny import make_tiny_tokenizer

    tokenizer = make_tiny_tokenizer()
    row = _dataset(oracle_demos([lookup_spec(0)]))[0]
    enc = tokenizer.apply_chat_template(
        row["messages"],
        tools=json.loads(row["tools"]),
        tokenize=True,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    learned = tokenizer.decode([t for t, m in zip(enc["input_ids"], enc["assistant_masks"], strict=True) if m])
    assert "Whose email do you need" in learned
    assert "contacts_search" in learned and learned.count("<end_of_turn>") == 3
    assert "Please find a colleague" not in learned and 'dana.wright@acme.example"' not in learned


def test_lora_adapters_are_merged_into_the_checkpoint(tmp_path: Path) -> None:
    model, tokenizer = load_model("tiny", "cpu")
    demos = oracle_demos([lookup_spec(0)])
    result = train_sft(model, tokenizer, demos, tmp_path, SFTSettings(max_steps=2, lora=True, lora_r=4))
    assert not hasattr(result.model, "peft_config")
    reloaded, _ = load_model(str(tmp_path), "cpu")
    assert not any("lora" in name for name, _ in reloaded.named_parameters())
