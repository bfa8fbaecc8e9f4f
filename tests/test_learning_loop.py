"""The pieces that make learning visible: tool menus, stop-token loss, model selection, eval sets, RL spread."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from coworkenv.agents import OracleTeacher
from coworkenv.agents.tool_menu import mentioned_tools, narrow_tools, parse_menu
from coworkenv.bank.sources import load_specs
from coworkenv.runtime import Environment, run_episode
from coworkenv.train.selection import eval_interval, split_validation
from train_helpers import lookup_spec, oracle_demos

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_parse_menu_accepts_the_three_forms_and_rejects_others() -> None:
    assert parse_menu("all") == ("all", 0) and parse_menu("spec") == ("spec", 0) and parse_menu("spec+3") == ("spec", 3)
    for bad in ("some", "all+2", "spec+", "spec-1", ""):
        with pytest.raises(ValueError, match="--tools"):
            parse_menu(bad)


def test_spec_menu_offers_the_tools_the_spec_names_and_the_oracle_still_passes() -> None:
    for spec in load_specs(EXAMPLES):
        full = {t["function"]["name"] for t in Environment(spec).reset().tools}
        narrow = narrow_tools(spec, "spec")
        offered = {t["function"]["name"] for t in Environment(narrow).reset().tools}
        assert offered == mentioned_tools(spec) and offered <= full
        assert len(offered) < len(full), spec.id  # something was cut
        traj = run_episode(Environment(narrow), OracleTeacher())
        assert traj.grade.passed, spec.id


def test_distractors_are_seeded_by_spec_and_keep_service_order() -> None:
    spec = load_specs(EXAMPLES)[0]
    a, b = narrow_tools(spec, "spec+2"), narrow_tools(spec, "spec+2")
    assert a.tools == b.tools and len(a.tools) == len(mentioned_tools(spec)) + 2
    order = [t["function"]["name"] for t in Environment(spec).reset().tools]
    assert a.tools == [t for t in order if t in a.tools]
    assert narrow_tools(spec, "all") is spec


def test_demos_and_eval_prompts_render_the_same_menu() -> None:
    """A demo recorded on the narrowed spec lists exactly the tools evaluation prompts list."""
    spec = narrow_tools(load_specs(EXAMPLES)[1], "spec+1")
    demo = run_episode(Environment(spec), OracleTeacher())
    assert demo.tools == Environment(spec).reset().tools


def test_compact_signatures_mark_optional_arguments_and_keep_the_first_clause() -> None:
    pytest.importorskip("tokenizers", reason="the tiny tokenizer needs the train extra")
    from coworkenv.agents.chat_format import render_prompt
    from coworkenv.agents.tiny import make_tiny_tokenizer

    tool = {
        "type": "function",
        "function": {
            "name": "mail_search",
            "description": "Search mail by words; filter by label. Newest first.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
        },
    }
    text = render_prompt(make_tiny_tokenizer(), [{"role": "system", "content": "hi"}], [tool])
    assert "- mail_search(query, limit?): Search mail by words<end_of_turn>" in text  # first clause only


def test_assistant_mask_covers_end_of_turn_and_trl_agrees() -> None:
    pytest.importorskip("trl")
    from trl.chat_template_utils import is_chat_template_stop_token_trained

    from coworkenv.agents.tiny import make_tiny_tokenizer
    from coworkenv.train.sft import _dataset

    tok = make_tiny_tokenizer()
    assert is_chat_template_stop_token_trained(tok)
    row = _dataset(oracle_demos([lookup_spec(0)]))[0]
    enc = tok.apply_chat_template(
        row["messages"],
        tools=json.loads(row["tools"]),
        tokenize=True,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    ids, mask = enc["input_ids"], enc["assistant_masks"]
    eot = tok.convert_tokens_to_ids("<end_of_turn>")
    model_turns = sum(m["role"] == "assistant" for m in row["messages"])
    learned_eots = [i for i, (t, m) in enumerate(zip(ids, mask, strict=True)) if t == eot and m]
    assert len(learned_eots) == model_turns  # every assistant turn learns to stop; no other turn's marker is learned


def test_validation_split_is_seeded_disjoint_and_never_empties_training() -> None:
    records = list(range(20))
    train, val = split_validation(records, 0.1, seed=0)
    assert len(val) == 2 and sorted(train + val) == records
    assert split_validation(records, 0.1, seed=0) == (train, val)
    assert split_validation(records, 0.1, seed=1) != (train, val)
    assert split_validation(records[:3], 0.5, 0) == (records[:3], [])
    assert len(split_validation(records[:4], 0.99, 0)[0]) == 1
    assert eval_interval(300, 8, 1, 4.0, -1, 4) == 38 and eval_interval(5, 8, 1, 1.0, -1, 4) == 1


def test_sft_keeps_the_weights_of_the_lowest_validation_loss(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from coworkenv.agents.models import load_model
    from coworkenv.storage import read_jsonl
    from coworkenv.train.sft import SFTSettings, train_sft

    model, tok = load_model("tiny", "cpu")
    demos = oracle_demos([lookup_spec(i) for i in range(6)])
    result = train_sft(
        model,
        tok,
        demos,
        tmp_path,
        SFTSettings(max_steps=6, learning_rate=3e-2, batch_size=2, val_fraction=0.34, evals=3),
    )
    vals = [r for r in read_jsonl(tmp_path / "train_log.jsonl") if "eval_loss" in r]
    assert len(vals) >= 3
    best = min(vals, key=lambda r: r["eval_loss"])
    assert result.best == {"step": best["step"], "eval_loss": round(best["eval_loss"], 6)}
    summary = json.loads((tmp_path / "train_summary.json").read_text())
    assert summary["validation"] == 2 and summary["best"] == result.best


def test_reward_spread_counts_groups_whose_scores_differ() -> None:
    from coworkenv.train.grpo import reward_spread

    def ep(group: int, score: float) -> Any:
        return SimpleNamespace(group=group, trajectory=SimpleNamespace(grade=SimpleNamespace(score=score)))

    assert reward_spread([ep(0, 0.5), ep(0, 0.5), ep(1, 0.0), ep(1, 1.0)]) == 0.5
    assert reward_spread([ep(0, 1.0), ep(0, 1.0)]) == 0.0


def test_eval_sets_play_in_one_batch_with_floors_per_set(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from coworkenv.agents.models import load_model
    from coworkenv.eval.sets import evaluate_sets, floors

    model, tok = load_model("tiny", "cpu")
    sets = {"instances": [lookup_spec(0), lookup_spec(1)], "examples": load_specs(EXAMPLES)[:1]}
    floor = floors(sets, max_turns=2)
    out = evaluate_sets(model, tok, sets, tmp_path, "base", max_new_tokens=4, max_turns=2, floor=floor)
    for name in sets:
        row = out[name]
        assert row["do_nothing_score"] == floor[name] and row["tasks"] == len(sets[name])
        assert {"score", "pass@1", "multi_turn_score", "calls_per_episode", "valid_calls", "by_capability"} <= set(row)
        assert (tmp_path / name / "metrics.json").exists()
    assert out["decode"]["generate_calls"] <= 2  # one batch per turn for all sets together
    assert out["decode"]["decode_tokens_per_s"] > 0


def test_best_weights_callback_restores_the_lowest_validation_loss(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from coworkenv.storage import read_jsonl
    from coworkenv.train.selection import best_weights_callback

    model = torch.nn.Linear(2, 1, bias=False)
    keeper = best_weights_callback(tmp_path / "log.jsonl")
    for step, (value, loss) in enumerate([(1.0, 3.0), (2.0, 1.0), (3.0, 2.0)], start=1):
        with torch.no_grad():
            model.weight.fill_(value)
        keeper.on_evaluate(None, SimpleNamespace(global_step=step), None, metrics={"eval_loss": loss}, model=model)
    assert keeper.restore(model) == {"step": 2, "eval_loss": 1.0}
    assert model.weight.tolist() == [[2.0, 2.0]]
    assert [r["eval_loss"] for r in read_jsonl(tmp_path / "log.jsonl")] == [3.0, 1.0, 2.0]
