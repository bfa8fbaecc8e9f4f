"""What SFT trains on: menu variants, multi-turn oversampling, grouped validation, one rendering for all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coworkenv.agents import OracleTeacher
from coworkenv.agents.chat_format import compact_result, render_prompt
from coworkenv.agents.tiny import make_tiny_tokenizer
from coworkenv.agents.tool_menu import mentioned_tools, narrow_tools
from coworkenv.bank.sources import load_specs
from coworkenv.data.demo_mix import MixSettings, composition, menu_variant, oracle_mix
from coworkenv.runtime import Environment, run_episode
from coworkenv.train.selection import split_validation
from train_helpers import lookup_spec

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_variant_zero_is_the_evaluation_menu_and_later_ones_redraw_and_shuffle() -> None:
    spec = load_specs(EXAMPLES)[1]
    assert menu_variant(spec, "spec+2", 0) == narrow_tools(spec, "spec+2")
    needed = mentioned_tools(spec)
    menus = [menu_variant(spec, "spec+2", k, extra=2).tools for k in range(1, 7)]
    assert menus == [menu_variant(spec, "spec+2", k, extra=2).tools for k in range(1, 7)]  # seeded
    for tools in menus:
        assert needed <= set(tools) and 2 <= len(tools) - len(needed) <= 4
    assert len({frozenset(t) for t in menus}) > 1  # distractors are redrawn, not only reordered
    service_order = [t["function"]["name"] for t in Environment(spec).reset().tools]
    assert any(tools != [t for t in service_order if t in tools] for tools in menus)  # position tells nothing
    for k in range(4):
        assert run_episode(Environment(menu_variant(spec, "spec+2", k)), OracleTeacher()).grade.passed


def test_mix_oversamples_multi_turn_and_counts_what_it_teaches() -> None:
    specs = [lookup_spec(i) for i in range(4)]  # even i: multi-turn
    plain = oracle_mix(specs, MixSettings("spec", variants=1, multi_turn_weight=1))
    mixed = oracle_mix(specs, MixSettings("spec", variants=2, multi_turn_weight=3))
    assert len(plain) == 4 and len(mixed) == 2 * 2 + 2 * 6
    before, after = composition(plain), composition(mixed)
    assert before["multi_turn_share"] == 50.0 and after["multi_turn_share"] == 75.0
    assert after["environments"] == 4 and after["demos"] == 16
    assert [d["group"] for d in mixed].count("lookup-0") == 6
    with pytest.raises(ValueError):
        MixSettings("spec", variants=0)


def test_validation_keeps_an_environments_variants_together() -> None:
    records = [{"group": f"env-{i // 3}", "n": i} for i in range(30)]
    train, val = split_validation(records, 0.2, seed=1)
    assert val and {r["group"] for r in train}.isdisjoint({r["group"] for r in val})
    assert len(train) + len(val) == 30 and len(val) % 3 == 0


def test_demos_and_eval_prompts_render_the_same_text() -> None:
    """Each assistant turn of an SFT record, rendered as TRL trains on it, follows exactly its eval prompt."""
    pytest.importorskip("datasets")
    from coworkenv.train.sft import _dataset

    tok = make_tiny_tokenizer()
    spec = load_specs(EXAMPLES)[1]
    demo = oracle_mix([spec], MixSettings("spec+2", variants=2))[1]  # a shuffled menu
    row = _dataset([demo])[0]
    trained = tok.apply_chat_template(row["messages"], tools=json.loads(row["tools"]), tokenize=False)
    messages = demo["messages"]
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    assert len(turns) >= 3
    for i in turns:
        prompt = render_prompt(tok, messages[:i], demo["tools"])
        assert trained.startswith(prompt), i
    raw_results = [m["content"] for m in messages if m["role"] == "tool"]
    assert any(":null" in r for r in raw_results) and ":null" not in trained  # empty fields left out


def test_compact_result_drops_empty_fields_but_keeps_answers() -> None:
    raw = json.dumps(
        {
            "messages": [{"id": "m1", "cc": [], "labels": [], "in_reply_to": None, "body": "", "unread": False}],
            "slots": [],
            "total": 0,
            "next_offset": None,
        }
    )
    assert json.loads(compact_result(raw)) == {"messages": [{"id": "m1", "unread": False}], "slots": [], "total": 0}
    assert compact_result('{"a": ') == '{"a": '  # broken JSON is shown as it came
    assert compact_result("tool-call limit reached") == "tool-call limit reached"
    assert compact_result(compact_result(raw)) == compact_result(raw)
