"""SFT curation: threshold, dedupe, caps, held-out exclusion, TRL format and the dataset card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coworkenv.agents.chat_format import CHAT_TEMPLATE
from coworkenv.data.sft import SftSettings, conversation_fingerprint, export_sft
from coworkenv.rollout import rollout_bank
from coworkenv.rollout.store import RolloutStore
from rollout_specs import Lazy, mail_reply_spec


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Oracle (K=2, identical samples) and a failing policy over five environments, three blueprints."""
    root = tmp_path_factory.mktemp("runs")
    specs = [
        mail_reply_spec(0, "reply", ("multi_turn",)),
        mail_reply_spec(1, "reply", ("multi_turn",)),
        mail_reply_spec(2, "reply", ("multi_turn",)),
        mail_reply_spec(3, "forward", ("multi_turn", "tool_coordination")),
        mail_reply_spec(4, "heldout", ("tool_coordination",)),
    ]
    rollout_bank(specs, "oracle", 2, root / "oracle", progress=False)
    rollout_bank(specs, Lazy(), 1, root / "lazy", progress=False)
    return [root / "oracle", root / "lazy"]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_curation_funnel_and_trl_format(runs: list[Path], tmp_path: Path) -> None:
    summary = export_sft(runs, tmp_path, SftSettings(exclude_blueprints=["heldout"]))
    assert summary.funnel == {
        "episodes": 15,
        "finished": 15,
        "above_threshold": 10,
        "not_held_out": 8,
        "unique": 4,
        "within_caps": 4,
    }
    examples = lines(tmp_path / "sft.jsonl")
    sources = lines(tmp_path / "sources.jsonl")
    assert len(examples) == len(sources) == 4
    assert [s["spec_id"] for s in sources] == ["forward-3", "reply-0", "reply-1", "reply-2"]
    assert all(set(e) == {"messages", "tools"} for e in examples)
    first = examples[0]
    assert first["messages"][0]["role"] == "system" and first["messages"][-1]["role"] == "assistant"
    assert any(m.get("tool_calls") for m in first["messages"])
    assert {t["function"]["name"] for t in first["tools"]} >= {"mail_search", "mail_reply"}
    assert summary.capabilities == {"multi_turn": 4, "tool_coordination": 1}
    assert summary.blueprints == {"forward": 1, "reply": 3}
    card = (tmp_path / "README.md").read_text()
    assert "**4**" in card and "heldout" in card and "| unique | 4 |" in card
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["examples"] == 4 and manifest["excluded_blueprints"] == ["heldout"]


def test_examples_render_with_the_project_template(runs: list[Path], tmp_path: Path) -> None:
    pytest.importorskip("tokenizers", reason="the tiny tokenizer needs the train extra")
    from coworkenv.agents.tiny import make_tiny_tokenizer

    export_sft(runs, tmp_path)
    tok = make_tiny_tokenizer()
    example = lines(tmp_path / "sft.jsonl")[0]
    out = tok.apply_chat_template(
        example["messages"],
        tools=example["tools"],
        chat_template=CHAT_TEMPLATE,
        tokenize=True,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    text = tok.decode(out["input_ids"])
    assert '<tool_call>{"name": "mail_search"' in text and sum(out["assistant_masks"]) > 0


def test_threshold_dedupe_and_caps(runs: list[Path], tmp_path: Path) -> None:
    all_kept = export_sft(runs, tmp_path / "a", SftSettings(min_score=0.0, dedupe=False))
    assert all_kept.funnel["above_threshold"] == 15 and all_kept.examples == 15
    capped = export_sft(runs, tmp_path / "b", SftSettings(max_per_blueprint=2, max_per_capability=2))
    # order by id: forward-3 (multi_turn, tool_coordination), heldout-4 (tool_coordination) fill tool_coordination;
    # reply-0 fills multi_turn, so reply-1 and reply-2 are capped although 'reply' has room for one more.
    assert [s["spec_id"] for s in lines(tmp_path / "b" / "sources.jsonl")] == ["forward-3", "heldout-4", "reply-0"]
    assert capped.funnel["within_caps"] == 3


def test_fingerprint_ignores_tool_call_ids() -> None:
    def conv(call_id: str) -> list[dict]:
        return [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": "mail_search", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "name": "mail_search", "content": "{}"},
        ]

    assert conversation_fingerprint(conv("a")) == conversation_fingerprint(conv("b"))
    changed = conv("a")
    changed[1]["content"] = "[]"
    assert conversation_fingerprint(changed) != conversation_fingerprint(conv("a"))


def test_failed_episodes_never_become_demonstrations(runs: list[Path], tmp_path: Path) -> None:
    export_sft(runs[1], tmp_path)
    assert (tmp_path / "sft.jsonl").read_text() == ""
    assert all(not r.passed for r in RolloutStore(runs[1]).records())


def test_cli_export_commands(runs: list[Path], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    cli = CliRunner()
    result = cli.invoke(
        app,
        [
            "export",
            "sft",
            str(runs[0]),
            "--out",
            str(tmp_path / "sft"),
            "--exclude-blueprint",
            "heldout",
            "--max-per-blueprint",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert [s["spec_id"] for s in lines(tmp_path / "sft" / "sources.jsonl")] == ["forward-3", "reply-0", "reply-1"]
    result = cli.invoke(
        app,
        [
            "export",
            "rl",
            *map(str, runs),
            "--out",
            str(tmp_path / "rl"),
            "--reward",
            "binary",
            "--normaliser",
            "rloo",
            "--credit",
            "discounted",
            "--gamma",
            "0.5",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "rl" / "manifest.json").read_text())
    assert manifest["settings"]["credit"] == "discounted" and manifest["episodes"] == 15
    bad = cli.invoke(app, ["export", "rl", str(runs[0]), "--out", str(tmp_path / "x"), "--credit", "tokens"])
    assert bad.exit_code == 2
